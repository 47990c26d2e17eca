"""The engine contract: what the research loop asks of every engine (Gemini, OpenAI-compatible,
offline, the resilient wrapper, the test fakes), and the parts they share.

An engine answers three calls, each with an EngineResult (utils/engine/base.py):
  decide(ctx)                 -> data {"next_action", "query_or_url", "reasoning"}
  analyze(ctx)                -> data {"extracted_info", "assessment", "confidence_score", ...}
  report(ctx, on_chunk=None)  -> data: the Markdown answer with [n] citations, streamed to on_chunk
and says what it is: `name`, `model` (None when no LLM), `price` (USD per million input/output
tokens, None when unknown), `stats` (per call kind: replies received and schema-valid) and
`capabilities` (schema-constrained JSON, streamed reports). Each result's `usage` is a dict
{"calls", "prompt", "output", "total", "cost_usd"}, summed only by utils/usage.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..errors import EngineError
from ..usage import sum_usage, zero_usage

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .base import EngineResult

TEMPERATURE = 0.2  # every LLM call: near-deterministic, with room to reformulate a query
CALL_KINDS = ("decide", "analyze", "report")


@dataclass(frozen=True)
class Capabilities:
    schema: bool = False  # JSON replies constrained by a response schema
    streaming: bool = False  # report() can stream its answer to on_chunk


@runtime_checkable
class Engine(Protocol):
    name: str
    model: str | None
    price: tuple[float, float] | None
    stats: dict[str, dict[str, int]]
    capabilities: Capabilities

    def decide(self, ctx: dict) -> EngineResult: ...

    def analyze(self, ctx: dict) -> EngineResult: ...

    def report(self, ctx: dict, on_chunk: Callable[[str], None] | None = None) -> EngineResult: ...


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

    def decide(self, ctx: dict) -> EngineResult:
        raise NotImplementedError

    def analyze(self, ctx: dict) -> EngineResult:
        raise NotImplementedError

    def report(self, ctx: dict, on_chunk: Callable[[str], None] | None = None) -> EngineResult:
        raise NotImplementedError


def with_usage(exc: Exception, usage: dict) -> Exception:
    """`exc` carrying the tokens spent before it (the fallback records them), unless it has its own."""
    if getattr(exc, "usage", None) is None and usage["calls"]:
        try:
            exc.usage = usage
        except AttributeError:
            pass
    return exc


# ---------------------------------------------------------------- repair invalid JSON once


def json_with_repair(
    ask: Callable[[str], tuple[str, dict, str]],
    schema: type[BaseModel],
    count: Callable[[bool], None],
    who: str,
) -> tuple[BaseModel, dict]:
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
