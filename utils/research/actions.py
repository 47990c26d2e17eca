"""The one action vocabulary: what the Decision may choose, which tool each action needs, what
to use instead when a tool is not offered, and why a research round stops. The Decision schema's
enum is built from ACTIONS; the report's stop texts from STOP_REASONS."""

from __future__ import annotations

from collections.abc import Callable

from .loopguard import split_urls

SEARCH_DDG, SEARCH_GOOGLE, CRAWL, SEARCH_KB, SEARCH_WIKI, HITL = (
    "search_duckduckgo",
    "search_google",
    "crawl_url",
    "search_kb",
    "search_wiki",
    "send_to_hitl",
)
ACTIONS = (SEARCH_DDG, SEARCH_GOOGLE, CRAWL, SEARCH_KB, SEARCH_WIKI, HITL)
TOOL_ACTION_NAMES = ACTIONS[:-1]
TOOL_ACTIONS = {  # action -> tool name used by --tools
    "search_duckduckgo": "duckduckgo",
    "search_google": "google",
    "crawl_url": "crawl",
    "search_kb": "kb",
    "search_wiki": "wiki",
}
STOP_REASONS = (
    "confident",  # confidence >= threshold
    "decided",  # the engine chose send_to_hitl itself
    "exhausted",  # the offline policy has nothing left to try
    "budget",  # --max-iterations reached
    "loop_repeat",  # the same normalized action+query again
    "loop_revisit",  # a URL already visited
    "stall",  # confidence not improving for 3 analyses
    "tool_failures",  # tools failing repeatedly
    "no_tools",  # nothing usable is offered
    "time_limit",  # --time-limit spent for this round
    "interrupted",  # Ctrl-C; the session can be resumed
)


REMAP = {  # what to use instead when the chosen tool is not offered, in order of preference
    "search_google": ("search_duckduckgo", "search_kb"),
    "search_duckduckgo": ("search_google", "search_kb"),
    "search_kb": ("search_duckduckgo", "search_google"),
    "crawl_url": ("search_duckduckgo", "search_google", "search_kb"),
    "search_wiki": ("search_duckduckgo", "search_google", "search_kb"),
}


def offered_actions(settings, kb_available: Callable[[], bool]) -> list[str]:
    """Tools the Decision may choose now: asked for with --tools, configured, and not empty."""
    s, out = settings, []
    if "duckduckgo" in s.tools:
        out.append("search_duckduckgo")
    if "google" in s.tools and s.google_search_configured():
        out.append("search_google")
    if "crawl" in s.tools:
        out.append("crawl_url")
    if "kb" in s.tools and kb_available():
        out.append("search_kb")
    if "wiki" in s.tools:  # needs nothing but the network, like DuckDuckGo
        out.append("search_wiki")
    return out + ["send_to_hitl"]


def remap_decision(decision: dict, actions: list[str], query: str) -> dict:
    """Make the engine's choice executable with the tools offered; record what was changed."""
    action, q = decision["next_action"], (decision.get("query_or_url") or "").strip()
    out = {"action": action, "query_or_url": q, "reasoning": decision.get("reasoning", ""), "remapped_from": None}
    if action == "crawl_url" and action in actions and not split_urls(q):
        action = "search_duckduckgo"  # the engine gave no URL: search for what it wrote instead
        out["remapped_from"] = "crawl_url"
    if action not in actions:
        alternatives = [a for a in REMAP.get(action, ()) if a in actions]
        out["remapped_from"] = out["remapped_from"] or action
        if not alternatives:
            out.update(action="send_to_hitl", query_or_url="")
            return out
        action = alternatives[0]
    if action != "send_to_hitl" and (not q or out["remapped_from"] == "crawl_url"):
        q = query  # nothing usable to search for (empty, or URLs meant for the crawler): use the question
    out.update(action=action, query_or_url=q)
    return out
