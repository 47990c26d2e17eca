"""Sleuth's research graph (see docs/design.md for the diagram).

QueryInput -> Decision -(search_duckduckgo|search_google|crawl_url|search_kb)-> tool -> Analyzer -> Decision
Decision -(send_to_hitl)-> HITLOutput -> HumanFeedback -(research)-> Decision
                                                       -(done)-> end
"""

from __future__ import annotations

from pocketflow import Flow

from nodes import (
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
