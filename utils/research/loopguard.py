"""Stopping rules. Pure functions of the shared store, checked by the Decision node on every visit,
so a run ends whatever the engine returns: budget, confidence, stall, failing tools, repeats."""

from __future__ import annotations

import re

from ..registry import CRAWL, HITL, takes_urls
from ..text import normalize_query
from .loopdata import Stop, StopReason
from .state import Shared, round_cost, round_iterations, round_reports, round_tokens

STALL_WINDOW = 3  # analyses without improvement that count as a stall
FAILURE_WINDOW = 3  # consecutive failed tool steps that stop the run
_URL = re.compile(r"https?://[^\s<>\"']+")


def split_urls(text: str) -> list[str]:
    return [u.rstrip(".,;)]") for u in _URL.findall(text or "")]


def urls_to_read_first(shared: Shared, actions: list[str]) -> list[str]:
    """The pages the question itself names that no step has tried yet: read before anything else,
    whichever engine decides, when crawling is offered (a question quoting a URL asks about that page)."""
    if CRAWL not in actions:
        return []
    from ..urls import normalize_url

    tried = set(shared.get("visited_urls", []))
    for h in shared.get("research_history", []):
        if h.get("action") == CRAWL:
            tried |= {normalize_url(u) for u in split_urls(h.get("query_or_url", ""))}
    return [u for u in dict.fromkeys(split_urls(shared.get("original_query", ""))) if normalize_url(u) not in tried]


def pre_decision_stop(
    shared: Shared,
    threshold: float,
    max_iterations: int,
    time_left: float | None = None,
    max_tokens: int = 0,
    max_cost: float = 0.0,
) -> Stop | None:
    """Reasons to stop before asking the engine anything. `time_left` is what remains of the round's
    --time-limit (None: no limit)."""
    if time_left is not None and time_left <= 0:
        return StopReason.TIME_LIMIT, "the time limit for this round is spent"
    tokens = round_tokens(shared)
    if max_tokens and tokens >= max_tokens:
        return StopReason.BUDGET, f"reached --max-tokens {max_tokens} ({tokens} tokens this round)"
    reports = round_reports(shared)
    if reports and shared["confidence_score"] >= threshold:
        return StopReason.CONFIDENT, f"confidence {shared['confidence_score']:.2f} >= threshold {threshold:.2f}"
    if round_iterations(shared) >= max_iterations:
        return StopReason.BUDGET, f"reached --max-iterations {max_iterations}"
    spent = round_cost(shared)
    if max_cost and spent is not None and spent >= max_cost:
        return StopReason.BUDGET, f"estimated cost ${spent:.4f} reached --max-cost ${max_cost:g}"
    if len(reports) > STALL_WINDOW:
        before = max(r["confidence_score"] for r in reports[:-STALL_WINDOW])
        recent = [r["confidence_score"] for r in reports[-STALL_WINDOW:]]
        if max(recent) <= before + 1e-9:
            return StopReason.STALL, f"confidence has not improved for {STALL_WINDOW} analyses (best {before:.2f})"
    start = shared.get("round_start_iteration", 0)
    steps = [h for h in shared["research_history"] if h.get("step", 0) > start]
    if len(steps) >= FAILURE_WINDOW and not any(h.get("ok") for h in steps[-FAILURE_WINDOW:]):
        return StopReason.TOOL_FAILURES, f"the last {FAILURE_WINDOW} tool steps all failed"
    return None


def post_decision_check(shared: Shared, action: str, query_or_url: str) -> Stop | None:
    """Loop detection on the engine's chosen action (after any remap)."""
    if action == HITL:
        return None
    if takes_urls(action):
        from ..urls import normalize_url

        urls = split_urls(query_or_url)
        visited = set(shared["visited_urls"])
        if urls and all(normalize_url(u) in visited for u in urls):
            return StopReason.LOOP_REVISIT, f"URL already visited: {urls[0]}"
    key = (action, normalize_query(query_or_url))
    for h in shared["research_history"]:
        if (h["action"], normalize_query(h["query_or_url"])) == key:
            return StopReason.LOOP_REPEAT, f'step {h["step"]} already ran {action} "{query_or_url}"'
    return None
