"""Sleuth's research graph (see docs/design.md for the diagram).

QueryInput -> Decision -(search_duckduckgo|search_google|crawl_url|search_kb|search_wiki)-> tool -> Analyzer -> Decision
Decision -(send_to_hitl)-> HITLOutput -> HumanFeedback -(research)-> Decision
                                                       -(done)-> end
"""

from __future__ import annotations

import time
import warnings

from pocketflow import Flow

from .nodes import (
    ANALYZE,
    DECIDE,
    FEEDBACK,
    RESEARCH,
    Analyzer,
    Decision,
    DuckDuckGoSearch,
    GoogleSearch,
    HITLOutput,
    HumanFeedback,
    KnowledgeBaseSearch,
    QueryInput,
    WebCrawl,
    WikiSearch,
)

STARTS = ("query", "decision", "report", "feedback")


def build_flow(rt, start: str = "query") -> Flow:
    """The research graph. `start` picks the entry node: a new run starts at `query`; a resumed
    session restarts at `decision` (research), `report`, or `feedback` (re-research)."""
    query, decision, analyzer = QueryInput(rt), Decision(rt), Analyzer(rt)
    hitl, feedback = HITLOutput(rt), HumanFeedback(rt)
    tools = {
        "search_duckduckgo": DuckDuckGoSearch(rt),
        "search_google": GoogleSearch(rt),
        "crawl_url": WebCrawl(rt),
        "search_kb": KnowledgeBaseSearch(rt),
        "search_wiki": WikiSearch(rt),
    }

    query - DECIDE >> decision
    for action, node in tools.items():
        decision - action >> node
        node - ANALYZE >> analyzer
    analyzer - DECIDE >> decision
    decision - "send_to_hitl" >> hitl
    hitl - FEEDBACK >> feedback
    feedback - RESEARCH >> decision
    # feedback - "done" has no successor: the flow ends.

    entry = {"query": query, "decision": decision, "report": hitl, "feedback": feedback}[start]
    return Flow(start=entry)


def run_flow(rt, shared: dict, start: str) -> dict:
    """Run the graph from `start`; on Ctrl-C leave a resumable session and re-raise."""
    warnings.filterwarnings("ignore", message="Flow ends: 'done'")
    t0 = time.monotonic()
    base = shared.get("elapsed_ms", 0)
    rt.start_round()  # --time-limit counts from here (and again after feedback)
    try:
        build_flow(rt, start).run(shared)
    except KeyboardInterrupt:
        if shared.get("status") != "awaiting_feedback":  # a report was shown: resume at the feedback prompt
            shared["status"] = "interrupted"
        shared["pending"] = {}
        shared["elapsed_ms"] = base + int((time.monotonic() - t0) * 1000)
        rt.checkpoint(shared)
        raise
    shared["elapsed_ms"] = base + int((time.monotonic() - t0) * 1000)
    rt.checkpoint(shared)
    return shared
