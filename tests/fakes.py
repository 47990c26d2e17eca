"""Test doubles for the research loop: a scripted LLM engine and in-process tools.

They stand in only where the real part is not the subject of the test; the web tools, KB and
Gemini engine have their own tests against real local servers."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from types import SimpleNamespace

from sleuth.utils.cli.ui import PlainUI
from sleuth.utils.config import Settings
from sleuth.utils.engine.protocol import Answer, BaseEngine, EngineContext, EngineResult
from sleuth.utils.research.loopdata import Analysis, Choice, Fact, PendingStep
from sleuth.utils.runtime import Runtime


class ScriptedEngine(BaseEngine):
    """An engine with scripted answers, held in queues like llm's `MockModel.enqueue`: each call takes
    the next answer queued for it, and the last one repeats forever. It subclasses the engines' base
    (utils/engine/protocol.py), so it keeps to the same contract as the real engines."""

    name = "scripted"

    def __init__(self, decisions=(), confidences=(0.2,), answer="The answer is here [1]."):
        super().__init__()
        self.decisions: list[tuple[str, str]] = []
        self.confidences: list[float] = []
        self.answers: list[str] = []
        for action, q in decisions:
            self.enqueue_decision(action, q)
        for c in confidences:
            self.enqueue_confidence(c)
        self.enqueue_report(answer)
        self.decide_calls: list[dict] = []
        self.analyze_calls: list[dict] = []
        self.report_calls: list[dict] = []

    def enqueue_decision(self, action: str, query_or_url: str = "") -> ScriptedEngine:
        self.decisions.append((action, query_or_url))
        return self

    def enqueue_confidence(self, confidence: float) -> ScriptedEngine:
        self.confidences.append(confidence)
        return self

    def enqueue_report(self, answer: str) -> ScriptedEngine:
        self.answers.append(answer)
        return self

    @staticmethod
    def _next(queue: list, calls: list):
        return queue[min(len(calls), len(queue)) - 1]

    def decide(self, ctx):
        self.decide_calls.append(ctx)
        action, q = self._next(self.decisions, self.decide_calls)
        return EngineResult(
            Choice(action, q, "scripted"), self.name, usage={"calls": 1, "prompt": 10, "output": 5, "total": 15}
        )

    def analyze(self, ctx):
        self.analyze_calls.append(ctx)
        facts = [Fact(f"fact from {it.url}", it.source, 0.8) for it in ctx.items[:2]]
        confidence = self._next(self.confidences, self.analyze_calls)
        return EngineResult(Analysis(facts, "scripted", confidence), self.name)

    def report(self, ctx, on_chunk=None):
        self.report_calls.append(ctx)
        return EngineResult(Answer(self._next(self.answers, self.report_calls)), self.name)


@dataclass
class FakeSearch:
    fail: bool = False
    calls: list = field(default_factory=list)

    def search(self, tool, query):
        self.calls.append((tool, query))
        if self.fail:
            return SimpleNamespace(
                results=[],
                tool_used=None,
                fallback_used=False,
                errors=[{"backend": tool, "kind": "network", "message": "unreachable"}],
            )
        results = [
            SimpleNamespace(
                url=f"https://example.org/{tool}/{i}?q={len(self.calls)}",
                title=f"{query} {i}",
                snippet=f"About {query}.",
                backend=tool,
            )
            for i in range(2)
        ]
        return SimpleNamespace(results=results, tool_used=tool, fallback_used=False, errors=[])


class FakeFetcher:
    def __init__(self):
        self.calls = []

    def fetch_many(self, urls):
        self.calls.append(list(urls))
        return [
            SimpleNamespace(
                url=u,
                final_url=u,
                title=f"Page {u}",
                text=f"Text of {u}. It says things.",
                links=[],
                error=None,
                error_kind=None,
            )
            for u in urls
        ]


class FakeKB:
    def __init__(self):
        self.added, self.queries = [], []
        self.extra_hits: list = []

    def search(self, query, k=5):
        self.queries.append(query)
        hit = SimpleNamespace(
            source="notes/a.md",
            title="Notes A",
            text=f"Notes about {query}.",
            id="a#0",
            chunk=0,
            score=0.9,
            metadata={"session_id": None},
            section="",
        )
        return [hit, *self.extra_hits]

    def add_document(self, **kw):
        self.added.append(kw)
        return 1

    def term_idf(self, text):
        return {}

    def count(self):
        return 1


class FakeTools:
    def __init__(self, search=None, kb_available=True):
        self._search = search or FakeSearch()
        self._fetcher = FakeFetcher()
        self._kb = FakeKB()
        self._kb_available = kb_available

    def search(self):
        return self._search

    def fetcher(self):
        return self._fetcher

    def kb(self):
        return self._kb

    def term_idf(self, text):
        return self._kb.term_idf(text)

    def kb_available(self):
        return self._kb_available


def make_rt(engine, tmp_path=None, fake_tools=None, feedback=None, **settings_kw) -> Runtime:
    from sleuth.utils.sessions import SessionStore

    s = Settings(data_dir=tmp_path or __import__("pathlib").Path("/nonexistent"), **settings_kw)
    ui = PlainUI(err=io.StringIO(), out=io.StringIO())
    return Runtime(
        settings=s,
        engine=engine,
        ui=ui,
        tools=fake_tools or FakeTools(),
        store=SessionStore(tmp_path) if tmp_path else None,
        feedback=feedback,
    )


def reading(query: str, items, action: str = "search_kb", **kw) -> EngineContext:
    """The context of an Analyzer step that reads `items` (found by `action` for the question)."""
    return EngineContext(query, step=PendingStep(1, Choice(action, query), list(items)), **kw)
