"""The engine contract: what the research loop asks of every engine (Gemini, OpenAI-compatible,
offline, the resilient wrapper, the test fakes), and the parts they share.

One `EngineContext` in, typed results out, each wrapped in an `EngineResult` (data, usage, fallback):
  decide(ctx)                 -> EngineResult[Choice]    the next action (research/loopdata.py)
  analyze(ctx)                -> EngineResult[Analysis]  the step's facts (Fact), confidence, leads
  report(ctx, on_chunk=None)  -> EngineResult[Answer]    the Markdown answer with [n] citations
An engine also says what it is: `name`, `model` (None when no LLM), `price` (USD per million
input/output tokens, None when unknown), `stats` (per call kind: replies received and schema-valid)
and `capabilities` (schema-constrained JSON, streamed reports). Each result's `usage` is a dict
{"calls", "prompt", "output", "total", "cost_usd"}, summed only by utils/usage.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from ..config import DEFAULT_CONFIDENCE
from ..errors import EngineError
from ..registry import CRAWL
from ..research.feedback import engine_text
from ..research.loopdata import Analysis, Choice, Fact, PendingStep, Source, StopReason, ToolItem
from ..research.state import AnalyzerRecord, Candidate, HistoryEntry, Shared, round_iterations
from ..usage import sum_usage, zero_usage

if TYPE_CHECKING:
    from pydantic import BaseModel

TEMPERATURE = 0.2  # every LLM call: near-deterministic, with room to reformulate a query
CALL_KINDS = ("decide", "analyze", "report")
T = TypeVar("T")
M = TypeVar("M", bound="BaseModel")  # a pydantic model an LLM answers in


@dataclass(frozen=True)
class Capabilities:
    schema: bool = False  # JSON replies constrained by a response schema
    streaming: bool = False  # report() can stream its answer to on_chunk


@dataclass(frozen=True)
class Answer:
    """What report() writes: the direct answer, Markdown citing session source numbers as [n]."""

    text: str


@dataclass(frozen=True)
class EngineResult(Generic[T]):
    """One engine call's result (a Choice, an Analysis or an Answer) and what it cost."""

    data: T
    engine: str
    usage: dict | None = None
    fallback: bool = False  # the offline engine answered for a failed LLM call
    error: str | None = None  # why the LLM call failed (fallback)


@dataclass(frozen=True)
class EngineContext:
    """What an engine is told, built once per step from the shared store (`EngineContext.of`).

    The same fields for the three calls; each reads what it needs. Read-only: an engine hands back
    what it learnt in its result (an Analysis' `notes`), never by changing the context. What only
    one engine needs it asks for here (`term_idf`) or works out from these fields itself."""

    query: str
    actions: Sequence[str] = ()  # the actions offered now (the Decision's choices)
    step: PendingStep | None = None  # the step in flight: what the Analyzer reads (its items)
    history: Sequence[HistoryEntry] = ()
    facts: Sequence[Fact] = ()
    sources: Sequence[Source] = ()
    feedback: Sequence[str] = ()  # every feedback text so far, oldest first
    round_feedback: Sequence[str] = ()  # the feedback that started this round
    excluded_sources: Sequence[int] = ()  # sources the human rejected
    confidence: float = 0.0  # the latest analysis'
    threshold: float = DEFAULT_CONFIDENCE
    steps_left: int = 0  # tool steps left this round
    analyzer: AnalyzerRecord | None = None  # the latest analysis, as recorded
    candidate_urls: Sequence[Candidate] = ()  # pages found, not read yet
    visited_urls: Sequence[str] = ()  # normalized URLs read (or refused)
    notes: Mapping[str, Any] = field(default_factory=dict)  # engine-owned notes saved with the session
    term_idf: Callable[[str], dict[str, float]] | None = None  # a text's words -> their IDF in the KB
    stop_reason: StopReason | None = None  # report: why the round stopped
    why_nothing: str = ""  # report: why no research step could be taken, if none was
    citation_problems: str = ""  # report: the last draft's failed citations, to write it again
    deadline: float | None = None  # time.monotonic() by which the call must end (None: no limit)

    @property
    def items(self) -> list[ToolItem]:
        """What the step in flight found (the Analyzer's input)."""
        return self.step.items if self.step else []

    @property
    def can_crawl(self) -> bool:
        """Pages found can still be read this round."""
        return CRAWL in self.actions

    @classmethod
    def of(
        cls,
        shared: Shared,
        *,
        actions: Sequence[str] = (),
        threshold: float = DEFAULT_CONFIDENCE,
        max_iterations: int = 0,
        deadline: float | None = None,
        term_idf: Callable[[str], dict[str, float]] | None = None,
    ) -> EngineContext:
        """The context for one step: the shared store's research state and the run's settings."""
        reports, history = shared["analyzer_reports"], shared["research_history"]
        feedback = [engine_text(f) for f in shared["feedback_history"]]
        why = ""
        if not history:
            why = "No research step could be taken."
        elif all(not h.get("ok") for h in history):
            why = "Every research step failed (see the journey below)."
        return cls(
            query=shared["original_query"],
            actions=tuple(actions),
            step=shared.get("pending"),
            history=history,
            facts=shared["extracted_information"],
            sources=shared["sources"],
            feedback=feedback,
            round_feedback=feedback[-1:],
            excluded_sources=shared.get("excluded_sources", []),
            confidence=shared["confidence_score"],
            threshold=threshold,
            steps_left=max_iterations - round_iterations(shared),
            analyzer=reports[-1] if reports else None,
            candidate_urls=shared["candidate_urls"],
            visited_urls=shared["visited_urls"],
            notes=shared.get("engine_notes", {}),
            term_idf=term_idf,
            stop_reason=shared.get("stop_reason"),
            why_nothing=why,
            deadline=deadline,
        )


@runtime_checkable
class Engine(Protocol):
    """What the research loop asks of an engine (read-only: an attribute or a property will do)."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str | None: ...

    @property
    def price(self) -> tuple[float, float] | None: ...

    @property
    def stats(self) -> dict[str, dict[str, int]]: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def decide(self, ctx: EngineContext) -> EngineResult[Choice]: ...

    def analyze(self, ctx: EngineContext) -> EngineResult[Analysis]: ...

    def report(self, ctx: EngineContext, on_chunk: Callable[[str], None] | None = None) -> EngineResult[Answer]: ...


class BaseEngine:
    """What every engine has unless it says otherwise; engines and test fakes subclass it, so a
    change to the contract reaches them all."""

    name: str = "engine"
    capabilities: Capabilities = Capabilities()
    model: str | None = None
    price: tuple[float, float] | None = None

    def __init__(self, *, counts_replies: bool = False) -> None:
        # an LLM engine counts its replies per call kind; an engine without one has no stats
        self.stats = {k: {"replies": 0, "valid": 0} for k in CALL_KINDS} if counts_replies else {}
        self._stats_lock = threading.Lock()

    def count_reply(self, kind: str, valid: bool) -> None:
        """One LLM reply of this call kind was received; `valid` when it met the schema."""
        with self._stats_lock:
            self.stats[kind]["replies"] += 1
            self.stats[kind]["valid"] += int(valid)

    def decide(self, ctx: EngineContext) -> EngineResult[Choice]:
        raise NotImplementedError

    def analyze(self, ctx: EngineContext) -> EngineResult[Analysis]:
        raise NotImplementedError

    def report(self, ctx: EngineContext, on_chunk: Callable[[str], None] | None = None) -> EngineResult[Answer]:
        raise NotImplementedError


def with_usage(exc: Exception, usage: dict) -> Exception:
    """`exc` carrying the tokens spent before it (the fallback records them), unless it has its own."""
    if getattr(exc, "usage", None) is None and usage["calls"]:
        try:
            setattr(exc, "usage", usage)  # noqa: B010 - an attribute exceptions do not declare
        except AttributeError:
            pass
    return exc


# ---------------------------------------------------------------- repair invalid JSON once


def json_with_repair(
    ask: Callable[[str], tuple[str, dict, str]],
    schema: type[M],
    count: Callable[[bool], None],
    who: str,
) -> tuple[M, dict]:
    """Ask for JSON matching `schema`; when the reply is not valid, ask once more with the error quoted.

    `ask(note)` makes one call with `note` appended to the prompt and returns (reply text, the call's
    usage, a hint to add to a validation error). `count(valid)` records each reply. Returns the model
    and the usage of both calls; a second invalid reply raises EngineError carrying that usage.
    """
    from pydantic import ValidationError

    from .parse import ParseError, describe_error, parse_model

    usage, note, last_error = zero_usage(), "", ""
    for _attempt in range(2):
        try:
            text, used, hint = ask(note)
        except Exception as exc:
            raise with_usage(exc, usage) from exc
        sum_usage(usage, used)
        try:
            obj = parse_model(text, schema)
        except (ParseError, ValidationError) as exc:
            count(False)
            last_error = describe_error(exc) + hint
            note = (
                f"\n\nYour previous answer was not valid ({last_error[:300]}). "
                "Answer again with only a JSON object that matches the schema exactly."
            )
            continue
        count(True)
        return obj, usage
    err = EngineError(f"invalid JSON from {who} after retry: {last_error}")
    err.usage = usage  # the tokens were spent all the same
    raise err
