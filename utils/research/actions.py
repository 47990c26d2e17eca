"""Offering and remapping actions with the tool registry (utils/registry.py), and why a research
round stops (the reasons: loopdata.StopReason)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..registry import BY_ACTION, HITL, TOOLS, role_of, takes_urls, title_of
from .loopdata import Choice, Stop, StopReason
from .loopguard import split_urls
from .report import web_unreachable


def offered_actions(settings, kb_available: Callable[[], bool]) -> list[str]:
    """Tools the Decision may choose now: asked for with --tools, configured, and not empty."""
    s = settings
    return [t.action for t in TOOLS if t.tool in s.tools and t.available(s, kb_available)] + [HITL]


def reachable(actions: list[str], history: Sequence[Mapping[str, Any]]) -> list[str]:
    """The actions worth offering after `history` (this round's steps): once a web search found the
    web unreachable, no tool that needs the web (search, wiki, crawl) is tried again this round."""
    if not any(web_unreachable(h) for h in history):
        return actions
    return [a for a in actions if role_of(a) not in ("web_search", "wiki_search", "crawl")]


def remap_decision(decision: Choice, actions: Sequence[str], query: str) -> Choice:
    """Make the engine's choice executable with the tools offered; record what was changed."""
    action, q = decision.action, (decision.query_or_url or "").strip()
    out = Choice(action, q, decision.reasoning or "")
    if takes_urls(action) and action in actions and not split_urls(q):
        out.remapped_from = action
        action = BY_ACTION[action].fallbacks[0]  # the engine gave no URL: search for what it wrote instead
    if action not in actions:
        alternatives = [a for a in (BY_ACTION[action].fallbacks if action in BY_ACTION else ()) if a in actions]
        out.remapped_from = out.remapped_from or action
        if not alternatives:
            out.action, out.query_or_url = HITL, ""
            return out
        action = alternatives[0]
    if action != HITL and (not q or takes_urls(out.remapped_from)):
        q = query  # nothing usable to search for (empty, or URLs meant for the crawler): use the question
    out.action, out.query_or_url = action, q
    return out


def handed_over(decided: Choice, choice: Choice) -> Stop | None:
    """Why the round stops when the engine's choice, remapped, hands over to the report: nothing
    offered can do what it chose, or the engine said why (the offline engine: nothing new to try)."""
    if choice.action != HITL:
        return None
    if choice.remapped_from:
        return StopReason.NO_TOOLS, f"{title_of(choice.remapped_from)} is not available and nothing can replace it"
    return decided.stop_reason or StopReason.DECIDED, choice.reasoning or "engine chose to stop"
