"""Token usage: the one counter. An engine sums its calls with it (a repaired reply costs two calls)
and the shared store sums every call of the session with it (research/state.py)."""

from __future__ import annotations


def zero_usage() -> dict:
    return {"calls": 0, "prompt": 0, "output": 0, "total": 0, "cost_usd": 0.0}


def sum_usage(into: dict, more: dict) -> None:
    """Add one call's usage to a total: a usage without `calls` is one call; the total's cost becomes
    None (unknown) once any call's cost is unknown, and stays as it is when a usage names no cost."""
    into["calls"] += int(more.get("calls", 1))
    for k in ("prompt", "output", "total"):
        into[k] += int(more.get(k) or 0)
    if "cost_usd" in more:
        spent, cost = into.get("cost_usd", 0.0), more["cost_usd"]
        into["cost_usd"] = None if spent is None or cost is None else spent + cost
