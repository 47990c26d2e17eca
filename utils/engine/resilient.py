"""The primary LLM engine with the offline engine behind it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from ..deadline import call_within
from ..research.loopdata import Analysis, Choice
from .protocol import Answer, Engine, EngineContext, EngineResult

T = TypeVar("T")

LOW_CONFIDENCE_CAP = 0.35  # an analysis made by the fallback engine never claims more than this


class ResilientEngine:
    """Primary engine with the offline engine behind it: any failure of the primary (network,
    quota, invalid JSON after its retry) is answered by the offline engine and marked fallback.
    It is the primary to the rest of the program: its name, model, price, stats and capabilities."""

    def __init__(self, primary: Engine, fallback: Engine):
        self.primary, self.fallback = primary, fallback
        self.name = primary.name
        self.capabilities = primary.capabilities

    @property
    def model(self) -> str | None:
        return self.primary.model  # read late: a server's first model is known after the first call

    @property
    def price(self) -> tuple[float, float] | None:
        return self.primary.price

    @property
    def stats(self) -> dict[str, dict[str, int]]:
        return self.primary.stats

    def _run(self, call: Callable[..., EngineResult[T]], fallback: Callable[..., EngineResult[T]], ctx, **kw):
        # ctx.deadline (time.monotonic()) bounds the call: when it passes, the call in flight is
        # abandoned and the offline engine answers (TimeLimitExceeded is one more failure).
        left = None if ctx.deadline is None else ctx.deadline - time.monotonic()
        try:
            return call_within(left, call, ctx, **kw)
        except Exception as exc:  # noqa: BLE001 - any LLM failure is survivable
            # what an exception carries (the tokens spent before it) is not the engine's contract
            return replace(
                fallback(ctx),
                usage=getattr(exc, "usage", None),
                fallback=True,
                error=f"{type(exc).__name__}: {exc}"[:500],
            )

    def decide(self, ctx: EngineContext) -> EngineResult[Choice]:
        return self._run(self.primary.decide, self.fallback.decide, ctx)

    def analyze(self, ctx: EngineContext) -> EngineResult[Analysis]:
        res = self._run(self.primary.analyze, self.fallback.analyze, ctx)
        if not res.fallback:
            return res
        capped = round(min(res.data.confidence_score, LOW_CONFIDENCE_CAP), 3)
        return replace(res, data=replace(res.data, confidence_score=capped))

    def report(self, ctx: EngineContext, on_chunk: Callable[[str], None] | None = None) -> EngineResult[Answer]:
        return self._run(self.primary.report, self.fallback.report, ctx, on_chunk=on_chunk)
