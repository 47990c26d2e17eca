"""The tool registry: every research tool the Decision may choose, declared once.

Each `ToolSpec` says what the action is called, its `--tools` name, which node runs it (a class
name in nodes.py), what it needs before it is offered, what replaces it when it is not offered,
and its line in the decision prompt. flow.py wires the graph from this table, research/actions.py
offers and remaps actions with it, config.py takes its `--tools` names, the engines' schema enum
and prompt come from it, and the offline policy asks it which actions search the web, read pages
or search the knowledge base. No other module spells an action name (tests/test_layout.py).

Adding a tool = one entry here + its node in nodes.py + its backend under utils/.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

# The action names: the only place they are spelled.
SEARCH_DDG = "search_duckduckgo"
SEARCH_GOOGLE = "search_google"
CRAWL = "crawl_url"
SEARCH_KB = "search_kb"
SEARCH_WIKI = "search_wiki"
HITL = "send_to_hitl"  # not a tool: the Decision hands the research over to the report and the human


def _always(settings: Any, kb_available: Callable[[], bool]) -> bool:
    return True


@dataclass(frozen=True)
class ToolSpec:
    action: str  # what the Decision chooses (the schema enum, the graph's edge label)
    tool: str  # its name in --tools / SLEUTH_TOOLS
    node: str  # the node class in nodes.py that runs it
    takes: Literal["query", "urls"]  # what its query_or_url holds
    role: Literal["web_search", "crawl", "kb_search", "wiki_search"]  # how the offline policy uses it
    fallbacks: tuple[str, ...]  # actions to use instead when it is not offered, in order of preference
    prompt: str  # its rule line in the decision prompt (tools sharing a line give the same text)
    title: str  # what the user sees it called (progress, journey): the action names stay internal
    # besides being asked for with --tools, what it needs to be offered: (settings, kb_available) -> bool
    available: Callable[[Any, Callable[[], bool]], bool] = _always


_WEB_RULE = (
    "- For search actions, query_or_url is a concise web search query. Never repeat a query already in\n"
    "  the history; reformulate with new names or terms you learned."
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        action=SEARCH_DDG,
        title="web search",
        tool="duckduckgo",
        node="WebSearch",
        takes="query",
        role="web_search",
        fallbacks=(SEARCH_GOOGLE, SEARCH_KB),
        prompt=_WEB_RULE,
    ),
    ToolSpec(
        action=SEARCH_GOOGLE,
        title="Google",
        tool="google",
        node="WebSearch",
        takes="query",
        role="web_search",
        fallbacks=(SEARCH_DDG, SEARCH_KB),
        prompt=_WEB_RULE,
        available=lambda settings, kb_available: settings.google_search_configured(),
    ),
    ToolSpec(
        action=CRAWL,
        title="read page",
        tool="crawl",
        node="WebCrawl",
        takes="urls",
        role="crawl",
        fallbacks=(SEARCH_DDG, SEARCH_GOOGLE, SEARCH_KB),
        prompt=f"- For {CRAWL}, query_or_url is one or more absolute http(s) URLs separated by spaces, taken from\n"
        "  search results or the analyzer's new_potential_urls, never a URL already visited.",
    ),
    ToolSpec(
        action=SEARCH_KB,
        title="knowledge base",
        tool="kb",
        node="KnowledgeBaseSearch",
        takes="query",
        role="kb_search",
        fallbacks=(SEARCH_DDG, SEARCH_GOOGLE),
        prompt=f"- For {SEARCH_KB}, query_or_url is a query for the local knowledge base.",
        available=lambda settings, kb_available: kb_available(),
    ),
    ToolSpec(
        action=SEARCH_WIKI,
        title="wiki",
        tool="wiki",
        node="WikiSearch",
        takes="query",
        role="wiki_search",
        fallbacks=(SEARCH_DDG, SEARCH_GOOGLE, SEARCH_KB),
        prompt=f"- For {SEARCH_WIKI}, query_or_url is a name to look up in the wiki (a page title, not a sentence).",
    ),
)
HITL_PROMPT = f"- Choose {HITL} when the facts answer the question, or when no tool can add more."

BY_ACTION: dict[str, ToolSpec] = {t.action: t for t in TOOLS}
ACTIONS: tuple[str, ...] = (*BY_ACTION, HITL)  # the Decision schema's enum
TOOL_NAMES: tuple[str, ...] = tuple(t.tool for t in TOOLS)  # --tools choices, in order
WEB_SEARCHES: tuple[str, ...] = tuple(t.action for t in TOOLS if t.role == "web_search")


def role_of(action: str | None) -> str | None:
    """The role of an action's tool (None for the hand-over or an unknown action)."""
    spec = BY_ACTION.get(action or "")
    return spec.role if spec else None


def title_of(action: str | None) -> str:
    """What the user sees an action called ("web search", "knowledge base"); the hand-over or an
    unknown action as it is."""
    spec = BY_ACTION.get(action or "")
    return spec.title if spec else str(action or "")


def takes_urls(action: str | None) -> bool:
    """The action's tool reads URLs (a crawl) rather than a query."""
    spec = BY_ACTION.get(action or "")
    return bool(spec and spec.takes == "urls")


def prompt_rules() -> str:
    """The decision prompt's tool rules: one line per tool (shared lines once), then the hand-over."""
    return "\n".join([*dict.fromkeys(t.prompt for t in TOOLS), HITL_PROMPT])
