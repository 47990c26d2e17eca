"""What each research tool does in one step: ask its client (utils/runtime.py: Tools) and turn what
it found into ToolItems and a ToolOutcome (research/loopdata.py). The tool nodes (nodes.py) run
these off the shared store; nothing here reads or writes it."""

from __future__ import annotations

from .config import Settings
from .research.loopdata import Form, ToolItem, ToolOutcome
from .research.loopguard import split_urls
from .runtime import Tools
from .urls import normalize_url

CRAWL_MAX_URLS = 8  # pages read in one crawl step
KB_HITS = 10  # KB passages for the query...
KB_LINKED = 4  # ...and passages of documents the best of them link to
WIKI_PAGES = 3  # wiki pages read in one search


def web_search(tools: Tools, tool: str, query: str) -> ToolOutcome:
    """A web search: `duckduckgo` is SearXNG when SEARXNG_URL is set, then DuckDuckGo; `google` is
    Custom Search while configured and before 2027-01-01, else Gemini grounding (utils/web/search.py)."""
    outcome = tools.search().search(tool, query)
    items = [
        ToolItem(
            url=r.url,
            title=r.title,
            text=f"{r.title}. {r.snippet}",
            form=Form.SNIPPET,
            snippet=r.snippet,
            tool=r.backend,
        )
        for r in outcome.results
    ]
    errors = [dict(e) for e in outcome.errors]
    error = None
    if not items:
        error = "; ".join(f"{e.get('backend')}: {e['kind']} ({e['message'][:80]})" for e in errors) or "no results"
    return ToolOutcome(bool(items), items, outcome.tool_used, error, errors, fallback_used=outcome.fallback_used)


def crawl(
    tools: Tools, settings: Settings, tool: str, query_or_url: str, visited: set[str], session_id: str
) -> ToolOutcome:
    """Reads the URLs named (the unvisited ones, at most CRAWL_MAX_URLS, concurrently: robots, SSRF and
    size rules in utils/web/), and remembers what it read in the knowledge base unless --no-remember."""
    urls = [u for u in dict.fromkeys(split_urls(query_or_url)) if normalize_url(u) not in visited]
    results = tools.fetcher().fetch_many(urls[:CRAWL_MAX_URLS])
    items, errors = [], []
    for r in results:
        if r.error or not r.text.strip():
            errors.append({"url": r.url, "kind": r.error_kind or "empty", "message": r.error or "no text"})
            continue
        items.append(
            ToolItem(
                url=r.final_url or r.url,
                title=r.title or r.final_url or r.url,
                text=r.text,
                form=Form.PAGE,
                lead=True,  # the page from its start: its first sentence introduces its subject
                links=r.links,
                snippet=r.text[:200],
                requested=r.url,
            )
        )
    if items and settings.remember and "kb" in settings.tools:
        try:
            kb = tools.kb()
            for it in items:
                kb.add_document(source=it.url, title=it.title, text=it.text, source_type="web", session_id=session_id)
        except Exception as exc:  # noqa: BLE001 - memory is a bonus; the research goes on
            errors.append({"url": "(knowledge base)", "kind": "remember", "message": f"not remembered: {exc}"})
    error = "; ".join(f"{e['url']}: {e['message'][:100]}" for e in errors) if errors else None
    used = tool if items else None
    return ToolOutcome(bool(items), items, used, error, errors, fetched=[r.url for r in results])


def kb_search(tools: Tools, tool: str, query: str, session_id: str) -> ToolOutcome:
    """The best chunks for the query, plus the best chunks of documents the top hits link to (an
    ingested HTML file's links are followed the way a crawl follows a page's: utils/kb/links.py)."""
    from .kb.hits import distinct
    from .kb.links import follow

    kb = tools.kb()
    # Pages this very session read (research memory) are already among its sources: skip them.
    # ...and a passage another document repeats (a page and its rendering) is read once.
    hits = kb.search(query, k=KB_HITS * 3)
    hits = distinct([h for h in hits if h.metadata.get("session_id") != session_id])[:KB_HITS]
    hits += [h for h in follow(kb, hits, query, keep=KB_LINKED) if h.metadata.get("session_id") != session_id]
    items = [
        ToolItem(
            url=h.source,
            title=h.title or h.source,
            section=h.section,  # heading path of the chunk ("Title › Section"), "" if none
            text=h.text,
            form=Form.KB,
            tool=tool,
            kb_id=h.id,
            snippet=h.text[:200],
            score=h.score,
            linked=bool(h.metadata.get("via_link")),
            lead=h.chunk == 0,  # the document's first chunk: its first sentence introduces the title
        )
        for h in hits
    ]
    best = round(max((h.score for h in hits), default=0.0), 3)
    error = None if items else "no matching passages"
    return ToolOutcome(bool(items), items, tool, error, retrieval_confidence=best)


def wiki_search(tools: Tools, tool: str, query: str) -> ToolOutcome:
    """Searches a MediaWiki (--wiki-url; English Wikipedia by default) and reads its best pages' plain
    text through the API (utils/web/wiki.py): no crawling; a page's source is its canonical URL."""
    pages, problems = tools.wiki().search_and_read(query, k=WIKI_PAGES)
    items = [
        ToolItem(url=p.url, title=p.title, text=p.text, form=Form.PAGE, lead=True, snippet=p.text[:200]) for p in pages
    ]
    errors = [{"url": title, "kind": "wiki", "message": why} for title, why in problems]
    error = None if items else "; ".join(f"{e['url']}: {e['message']}" for e in errors)
    return ToolOutcome(bool(items), items, tool if items else None, error, errors)
