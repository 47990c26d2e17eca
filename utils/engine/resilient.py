"""The primary LLM engine with the offline engine behind it."""

from __future__ import annotations

import time

from ..deadline import call_within
from .base import EngineResult

LOW_CONFIDENCE_CAP = 0.35  # an analysis made by the fallback engine never claims more than this


class ResilientEngine:
    """Primary engine with the offline engine behind it: any failure of the primary (network,
    quota, invalid JSON after its retry) is answered by the offline engine and marked fallback."""

    def __init__(self, primary, fallback):
        self.primary, self.fallback = primary, fallback
        self.name = primary.name

    @property
    def model(self) -> str | None:
        return getattr(self.primary, "model", None)

    @property
    def price(self) -> tuple[float, float] | None:
        return getattr(self.primary, "price", None)

    @property
    def stats(self) -> dict:
        return getattr(self.primary, "stats", {})

    @property
    def streams(self) -> bool:
        return bool(getattr(self.primary, "streams", False))

    def _run(self, method: str, ctx: dict, **kw) -> EngineResult:
        # ctx["deadline"] (time.monotonic()) bounds the call: when it passes, the call in flight is
        # abandoned and the offline engine answers (TimeLimitExceeded is one more failure).
        deadline = ctx.get("deadline")
        left = None if deadline is None else deadline - time.monotonic()
        try:
            return call_within(left, getattr(self.primary, method), ctx, **kw)
        except Exception as exc:  # noqa: BLE001 - any LLM failure is survivable
            res = getattr(self.fallback, method)(ctx)
            res.usage = getattr(exc, "usage", None)
            res.fallback = True
            res.error = f"{type(exc).__name__}: {exc}"[:500]
            if method == "analyze" and isinstance(res.data, dict):
                res.data["confidence_score"] = round(min(res.data["confidence_score"], LOW_CONFIDENCE_CAP), 3)
            return res

    def decide(self, ctx: dict) -> EngineResult:
        return self._run("decide", ctx)

    def analyze(self, ctx: dict) -> EngineResult:
        return self._run("analyze", ctx)

    def report(self, ctx: dict, on_chunk=None) -> EngineResult:
        return self._run("report", ctx, on_chunk=on_chunk)
