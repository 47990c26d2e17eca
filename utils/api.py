"""What the Python API (`import sleuth`) and the MCP server (`sleuth mcp`) share: settings from
keyword arguments, a research run with no terminal, and its result as a `Report`.

The graph is handed in (`run_flow`), as the CLI's commands get it from main.py: nothing in utils/
imports the flow. Nothing here prints; progress goes to a callback. Importing this module loads
only the standard library and utils/config.py, so `import sleuth` and `--help` stay light.
"""

from __future__ import annotations

import argparse
import copy
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import Interrupted, UsageError

if TYPE_CHECKING:
    from .research.state import Shared

RunFlow = Callable[..., dict]  # flow.run_flow(rt, shared, start)
Progress = Callable[[float, float, str], None]  # (progress, total, message); progress only increases

# Keyword settings the API takes, each the `dest` of the CLI flag it stands for (utils/config.py
# resolves them: keyword > environment > .env > default). `remember=False` is `--no-remember`.
SETTINGS = (
    "model",
    "base_url",
    "context_tokens",
    "max_cost",
    "llm_timeout",
    "confidence",
    "max_iterations",
    "time_limit",
    "max_tokens",
    "searxng_url",
    "chroma_url",
    "embedding",
    "cache_ttl",
    "no_cache",
    "allow_private_hosts",
    "ignore_robots",
    "crawl_interval",
    "remember",
)


ENGINES = ("auto", "gemini", "openai", "offline")

# What a resumed session keeps from the settings it was started with, unless given again: the flag's
# `dest` -> the Settings field the saved session holds it in (shared["settings"]).
KEPT = {
    "engine": "engine",
    "model": "model",
    "base_url": "openai_base_url",
    "context_tokens": "context_tokens",
    "llm_timeout": "llm_timeout",
    "max_cost": "max_cost",
    "tools": "tools",
    "confidence": "confidence",
    "max_iterations": "max_iterations",
    "time_limit": "time_limit",
    "max_tokens": "max_tokens",
}


def resumed_settings(settings, saved: dict, given: Iterable[str] = ()):
    """The settings to resume a session with: the ones it was started with (`saved`, its
    shared["settings"]) for the engine, model, tools, confidence and budgets, except those the caller
    gives again (`given`: flag dests, e.g. {"tools"}); everything else from `settings`."""
    from dataclasses import fields, replace

    from .config import ALL_TOOLS

    given, names = set(given), {f.name for f in fields(settings)}
    changes: dict[str, Any] = {}
    for flag, name in KEPT.items():
        value = (saved or {}).get(name)
        if flag in given or name not in names or value is None or (name == "engine" and value not in ENGINES):
            continue
        if name == "tools":
            value = tuple(t for t in value if t in ALL_TOOLS)
            if not value:
                continue
        changes[name] = value
    return replace(settings, **changes)


def load(tools=None, engine=None, data_dir=None, base: dict | None = None, **settings):
    """Settings for one call: `base` (parsed CLI flags, for the MCP server) overridden by the
    keywords given, then the same precedence and checks as the CLI. Bad values raise UsageError."""
    from .config import load_settings

    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise TypeError(f"unknown setting(s) {', '.join(unknown)}; choose from {', '.join(SETTINGS)}")
    args: dict[str, Any] = dict(base or {})
    args.update({k: v for k, v in settings.items() if v is not None and k != "remember"})
    if settings.get("remember") is not None:
        args["no_remember"] = not settings["remember"]
    if tools is not None:
        names = [tools] if isinstance(tools, str) else list(tools)
        args["tools"] = ",".join(str(t) for t in names) or " "  # an empty list is an error, not "all"
    if isinstance(engine, str):
        args["engine"] = engine
    if data_dir is not None:
        args["data_dir"] = str(data_dir)
    try:
        return load_settings(argparse.Namespace(**args))
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


@dataclass(frozen=True)
class Source:
    """A numbered source of a report: `[n]` in the answer refers to it."""

    n: int
    title: str
    url: str
    tool: str | None
    kind: str | None
    cited: bool  # the answer cites it; the others were found and read but not used
    quote: str = ""  # the passage of it that supports what the answer cites it for ("" if none)
    session_n: int = 0  # its number in the session (n is the report's; the session file uses this one)


@dataclass
class Report:
    """The result of a research run (or of a saved session)."""

    question: str
    answer: str
    confidence: float
    stop_reason: str | None
    sources: list[Source]
    session_id: str
    markdown: str  # the whole report as the CLI prints it: answer, journey, sources
    citations: dict  # {"total", "supported", "unsupported"}
    warnings: list[str] = field(default_factory=list)  # what the CLI would have said on stderr
    _record: dict = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        """The same JSON record as `sleuth --json` prints (and each batch line holds)."""
        return copy.deepcopy(self._record)

    @classmethod
    def from_shared(cls, shared: Mapping[str, Any], warnings: Iterable[str] = ()) -> Report:
        rec = result_json(shared)
        quotes: dict[int, str] = {}
        for c in (shared.get("citations") or {}).get("checks", []):
            if c.get("supported") and c.get("quote"):
                quotes.setdefault(c["n"], c["quote"])
        sources = [
            Source(
                s["n"],
                s["title"] or "",
                s["url"] or "",
                s["tool"],
                s["kind"],
                s["cited"],
                quotes.get(s["session_n"], ""),
                s["session_n"],
            )
            for s in rec["sources"]
        ]
        return cls(
            question=rec["query"] or "",
            answer=rec["answer"] or "",
            confidence=float(rec["confidence"] or 0.0),
            stop_reason=rec["stop_reason"],
            sources=sources,
            session_id=rec["session_id"],
            markdown=shared.get("final_answer") or "",
            citations=rec["citations"],
            warnings=list(warnings),
            _record=rec,
        )


def result_json(shared: Mapping[str, Any]) -> dict:
    """The JSON record of a session: `sleuth --json`, each batch line, `Report.to_dict()`. Sources
    are numbered as the last report numbers them (its Key sources first), `session_n` as the session does."""
    from .research.numbering import renumber, shown
    from .research.report import cited

    in_answer = set(cited(shared.get("answer") or ""))
    order, _ = shown(shared.get("reports") or [], len(shared.get("sources", [])))
    by_n = {s.n: s for s in shared.get("sources", [])}
    return {
        "query": shared.get("original_query"),
        "answer": None if shared.get("answer") is None else renumber(shared["answer"], order),
        "confidence": shared.get("confidence_score"),
        "stop_reason": shared.get("stop_reason"),
        "iterations": shared.get("iteration_count"),
        "sources": [
            {
                "n": r,
                "title": s.title,
                "url": s.url,
                "tool": s.tool,
                "kind": s.kind,
                "cited": s.n in in_answer,  # the answer cites it (found-but-unused sources are false)
                "session_n": s.n,
            }
            for r, s in enumerate((by_n[n] for n in order), 1)
        ],
        "session_id": shared.get("session_id"),
        "elapsed_ms": shared.get("elapsed_ms"),
        "engine": shared.get("engine"),
        "tokens": shared.get("token_usage"),
        "model": shared.get("model"),
        "cost_usd": shared.get("cost_usd", 0.0),
        "llm_fallbacks": len(shared.get("llm_fallbacks", [])),
        "citations": {k: (shared.get("citations") or {}).get(k, 0) for k in ("total", "supported", "unsupported")},
    }


def new_session(rt, query: str) -> Shared:
    """A new session's shared store for `query`, with the run's settings, engine and model."""
    from .research.state import new_shared

    shared = new_shared(query, settings=rt.settings.public_dict(), engine=rt.engine.name)
    shared["model"] = rt.engine.model
    return shared


def one_shot(text: str):
    """A feedback source that gives `text` once, then ends the run."""
    given: list[str] = []

    def feedback(_prep):
        if given:
            return None
        given.append(text)
        return text

    return feedback


class QuietUI:
    """The runtime's UI for callers that are not a terminal: prints nothing, keeps the warnings,
    and turns each step into a progress callback whose value only grows (as MCP requires)."""

    def __init__(self, progress: Progress | None = None):
        self.progress = progress
        self.warnings: list[str] = []
        self._last = 0.0
        self._total = 1.0

    def _say(self, value: float, message: str) -> None:
        self._last = max(value, self._last + 0.01)
        self._total = max(self._total, self._last)
        if self.progress is not None:
            self.progress(round(self._last, 2), self._total, " ".join(message.split())[:300])

    def warn(self, text: str) -> None:
        self.warnings.append(text)

    def started(self, shared: dict) -> None:
        self._say(0.0, f"researching: {shared['original_query']} (session {shared['session_id']})")

    def step(self, step: int, budget: int, action: str, query: str) -> None:
        self._total = max(self._total, float(budget))
        from .registry import title_of

        self._say(step - 0.9, f"step {step}/{budget}: {title_of(action)} {query}")

    def step_done(self, entry: dict) -> None:
        step = entry.get("step") or 1
        if entry.get("ok"):
            message = f"step {step}: {entry.get('results', 0)} result(s) via {entry.get('tool_used')}"
        else:
            message = f"step {step} failed: {entry.get('error') or 'no results'}"
        self._say(step - 0.5, message)

    def analyzed(self, confidence: float, n_sources: int, n_facts: int, fallback: bool = False) -> None:
        self._say(self._last, f"confidence {confidence:.2f}, {n_sources} source(s), {n_facts} fact(s)")

    def stopping(self, reason: str, detail: str) -> None:
        self._say(self._last, f"writing the report (stop: {reason})")

    def report_chunk(self, text: str) -> None:
        pass

    def report(self, markdown: str) -> None:
        self._say(self._total, "report written")

    def finish(self) -> None:
        pass


def kb_damage(settings):
    """Why research cannot use the knowledge base (a damaged lexical file, a Chroma server that
    cannot be reached: kb/health.py), as the error to show, or None."""
    if "kb" not in settings.tools:
        return None
    from .kb.health import problem
    from .kb.store import KnowledgeBase

    return problem(KnowledgeBase.for_settings(settings))


def without_damaged_kb(settings, ui):
    """The settings to research with: a knowledge base that cannot be used is left out (neither
    searched nor written), and the run says so once, naming the file or server and the way out.
    Damaged vectors alone: searched by its words, not written, and said."""
    damage = kb_damage(settings)
    if damage is None:
        return _without_damaged_vectors(settings, ui)
    ui.warn(f"{damage}; researching without the knowledge base")
    return without_kb(settings)


def _without_damaged_vectors(settings, ui):
    from dataclasses import replace

    from .kb.health import vectors_problem
    from .kb.store import KnowledgeBase

    if "kb" not in settings.tools or settings.chroma_url:
        return settings
    damage = vectors_problem(KnowledgeBase.for_settings(settings))
    if damage is None:
        return settings
    ui.warn(f"{damage}; the vectors are unavailable: searching the knowledge base by its words alone")
    return replace(settings, remember=False)


def without_kb(settings):
    from dataclasses import replace

    return replace(settings, tools=tuple(t for t in settings.tools if t != "kb"))


def make_runtime(settings, *, engine=None, ui=None, clients=None, feedback=None, cancel=None):
    """A runtime for one API call: the engine the settings pick (or the engine object given), the
    tool clients given (shared between calls) or new ones, sessions saved in the data folder."""
    from .engine.factory import make_engine
    from .runtime import Runtime, Tools
    from .sessions import SessionStore

    ui = ui or QuietUI()
    if engine is None or isinstance(engine, str):
        engine = make_engine(settings, warn=ui.warn)  # EngineError: a missing key, a bad server
    settings = without_damaged_kb(settings, ui)  # as the CLI does: research goes on without it, and says so
    rt = Runtime(
        settings=settings,
        engine=engine,
        ui=ui,
        tools=clients or Tools(settings),
        store=SessionStore(settings.data_dir),
        feedback=feedback,
    )
    if cancel is not None:
        rt.cancel = cancel
    return rt


def _run(rt, shared: Shared, start: str, run_flow: RunFlow) -> Report:
    try:
        run_flow(rt, shared, start)
    except KeyboardInterrupt:
        if rt.cancel.is_set():  # cancelled by the caller: the session is saved, say how to resume it
            raise Interrupted(shared["session_id"]) from None
        raise
    return Report.from_shared(shared, rt.ui.warnings)


def _close(rt, clients) -> None:
    """After an API call: its session store is closed, and its tool clients unless they were given
    (shared): a long-lived caller (the MCP server, a script) keeps no file or connection per call."""
    if rt.store is not None:
        rt.store.close()
    if clients is None:
        rt.tools.close()


def research(
    question: str,
    settings,
    *,
    run_flow: RunFlow,
    engine=None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    clients=None,
) -> Report:
    """Research `question` with `settings` (see `load`) and return its report."""
    question = " ".join(str(question or "").split())
    if not question:
        raise UsageError("the question is empty; ask something")
    rt = make_runtime(settings, engine=engine, ui=QuietUI(progress), clients=clients, cancel=cancel)
    try:
        return _run(rt, new_session(rt, question), "query", run_flow)
    finally:
        _close(rt, clients)


def resume(
    session_id: str,
    settings,
    feedback: str | None = None,
    *,
    run_flow: RunFlow,
    engine=None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    clients=None,
    given: Iterable[str] = (),
) -> Report:
    """What `sleuth --resume ID [--feedback TEXT]` does: an interrupted run goes on researching; a
    finished one is re-researched with the feedback, or just returned when there is none. The run
    keeps the settings the session was started with, but for those named in `given` (resumed_settings)."""
    from .sessions import SessionStore

    feedback = " ".join(str(feedback or "").split()) or None
    store = SessionStore(settings.data_dir)
    try:
        shared = store.load(session_id)  # SessionNotFound
        if engine is not None and not isinstance(engine, str):
            given = {*given, "engine", "model", "base_url"}  # an engine object runs as it is
        settings = resumed_settings(settings, shared.get("settings") or {}, given)
        rt = make_runtime(
            settings,
            engine=engine,
            ui=QuietUI(progress),
            clients=clients,
            cancel=cancel,
            feedback=one_shot(feedback) if feedback else None,
        )
    except BaseException:
        store.close()
        raise
    rt.store = store
    try:
        start_resumed(rt, shared, settings)
        start = resume_start(shared)
        if start == "feedback" and feedback is None:
            return Report.from_shared(shared)
        return _run(rt, shared, start, run_flow)
    finally:
        _close(rt, clients)


def start_resumed(rt, shared: Shared, settings) -> None:
    """A session about to be resumed records the engine and the settings it now runs with (as
    resolved, before a damaged knowledge base is left out for this run only)."""
    shared["engine"] = rt.engine.name
    shared["settings"] = settings.public_dict()


def resume_start(shared: Shared) -> str:
    """Where a resumed session starts: a run cut short (Ctrl-C, crash) goes on researching
    ("decision"); a finished one reopens at the feedback step ("feedback")."""
    return "decision" if shared.get("status") in ("running", "reporting", "interrupted") else "feedback"


def sessions(settings, limit: int | None = None) -> list[dict]:
    """The saved sessions, newest first: id, times, question, stop reason, confidence, status."""
    from .sessions import SessionStore

    store = SessionStore(settings.data_dir, writer=False)
    try:
        rows = store.list()
    finally:
        store.close()
    return rows[:limit] if limit else rows


def session(settings, session_id: str) -> Shared:
    """One saved session's whole shared store (SessionNotFound if there is none)."""
    from .sessions import SessionStore

    store = SessionStore(settings.data_dir, writer=False)  # read, not resumed: no lock held
    try:
        return store.load(session_id)
    finally:
        store.close()


class KnowledgeBase:
    """The knowledge base in a data folder: `ingest`, `search`, `stats` (opened on first use).
    `clients`: the tool clients (utils/runtime.Tools) whose knowledge base to use, shared with
    research runs (the MCP server's); without them this object opens and closes its own."""

    def __init__(self, data_dir: str | Path | None = None, *, clients=None, **settings):
        if clients is None:
            from .runtime import Tools

            clients = Tools(load(data_dir=data_dir, **settings))
            self._own = True
        else:
            self._own = False
        self.settings = clients.settings
        self._clients = clients

    def _store(self):
        return self._clients.kb()

    def ingest(self, paths: str | Path | Iterable[str | Path]):
        """Add files and folders (recursively: .txt .md .html .pdf); an unchanged file adds nothing.
        Returns the IngestReport: files added, replaced, unchanged, and (path, reason) errors."""
        items = [paths] if isinstance(paths, str | Path) else list(paths)
        if not items:
            raise UsageError("nothing to ingest: give files or folders")
        return self._store().ingest_paths([str(p) for p in items])

    def search(self, query: str, k: int = 10) -> list:
        """The best `k` chunks for `query` (Hit: rank, score, source, title, chunk, text)."""
        if not str(query or "").strip():
            raise UsageError("the query is empty")
        if k < 1:
            raise UsageError("k must be at least 1")
        return self._store().search(query, k=k)

    def stats(self) -> dict:
        """Chunks, sources, by source type, embedding, store."""
        return self._store().stats()

    def close(self) -> None:
        """Close the store (when this object opened it); the next call opens it again."""
        if self._own:
            self._clients.close_kb()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
