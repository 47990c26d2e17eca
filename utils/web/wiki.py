"""Any MediaWiki as a source, through its Action API (`api.php`): Wikipedia in any language, Fandom,
a company wiki. No HTML crawling: the API searches and hands back each page's plain text.

- search: ``action=query&list=search&srsearch=…`` (titles, best first);
- text: ``action=query&prop=extracts|info&explaintext&inprop=url&titles=…`` (TextExtracts gives one
  whole-page extract per request and a ``continue`` for the rest, which is followed), falling back
  to ``action=parse&prop=text`` through our HTML extractor on wikis without TextExtracts;
- a page's source URL is its ``canonicalurl``; a missing page is reported, not guessed.

API etiquette (https://www.mediawiki.org/wiki/API:Etiquette): a descriptive User-Agent, ``maxlag``
with the server's Retry-After honoured on a ``maxlag`` error (a few times, then a ``rate_limited``
error), one request at a time per host (across every client in the process), JSON format version 2.
Results are cached like other searches (namespace ``wiki``), so a cached question sends nothing.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..config import DEFAULT_WIKI_URL
from ..errors import BackendError

USER_AGENT = "Sleuth/0.2 (+https://github.com/sleuth-research/sleuth; research agent) python-requests"
MAXLAG_S = 5  # ask the wiki to refuse us while its replicas lag more than this (what bots use)
MAXLAG_TRIES = 3
RETRY_CAP_S = 30.0  # never wait longer than this for one Retry-After
MAX_CONTINUES = 10  # continuation rounds for one batch of pages
MAX_ANSWER_BYTES = 5 * 1024 * 1024  # one API answer, at most: the crawler's cap on a page

_HOST_LOCKS: dict[str, threading.Lock] = {}
_HOST_LOCKS_GUARD = threading.Lock()


def _read_capped(resp) -> bytes:
    """An answer's body, read up to MAX_ANSWER_BYTES; a larger one is refused before it fills memory."""
    try:
        body = bytearray()
        for chunk in resp.iter_content(65536):
            body += chunk
            if len(body) > MAX_ANSWER_BYTES:
                raise BackendError(
                    "too_large", f"the wiki's answer is larger than {MAX_ANSWER_BYTES // (1024 * 1024)} MB; not read"
                )
        return bytes(body)
    finally:
        resp.close()


def _host_lock(url: str) -> threading.Lock:
    host = (urlsplit(url).hostname or "").lower()
    with _HOST_LOCKS_GUARD:
        return _HOST_LOCKS.setdefault(host, threading.Lock())


@dataclass
class WikiPage:
    title: str
    url: str  # the canonical URL
    text: str
    via: str = "extracts"  # or "parse" (no TextExtracts on that wiki)


class WikiClient:
    """Search one MediaWiki and read its pages' text. Thread-safe; share one per process."""

    def __init__(
        self,
        api_url: str = DEFAULT_WIKI_URL,
        *,
        cache=None,
        timeout: float = 15.0,
        user_agent: str = USER_AGENT,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not api_url.startswith(("http://", "https://")):
            raise BackendError("config", f"the wiki URL must be an http(s) address of api.php, got {api_url!r}")
        self.api_url = api_url
        if cache is None:
            from .cache import Cache

            cache = Cache.disabled()
        self.cache = cache
        self.timeout = timeout
        self.user_agent = user_agent
        self.sleep = sleep
        self._local = threading.local()
        self._lock = _host_lock(api_url)

    def _session(self):
        s = getattr(self._local, "session", None)
        if s is None:
            import requests

            s = requests.Session()
            s.headers["User-Agent"] = self.user_agent
            s.headers["Accept"] = "application/json"
            self._local.session = s
        return s

    # -- one API call ---------------------------------------------------------------------
    def call(self, params: dict) -> dict:
        """One API request (JSON, format version 2, maxlag); an `error` object raises BackendError."""
        import requests

        query = {**params, "format": "json", "formatversion": "2", "maxlag": str(MAXLAG_S)}
        for attempt in range(1, MAXLAG_TRIES + 1):
            with self._lock:  # one request at a time per host
                try:
                    resp = self._session().get(self.api_url, params=query, timeout=(5.0, self.timeout), stream=True)
                    body = _read_capped(resp)
                except requests.Timeout as exc:
                    raise BackendError("timeout", f"the wiki timed out after {self.timeout:g}s") from exc
                except requests.RequestException as exc:
                    raise BackendError("network", f"the wiki could not be reached: {type(exc).__name__}") from exc
            try:
                data = json.loads(body)
            except ValueError:
                data = None
            error = data.get("error") if isinstance(data, dict) else None
            lagged = (isinstance(error, dict) and error.get("code") == "maxlag") or resp.status_code == 503
            if lagged:
                wait = _retry_after(resp.headers.get("Retry-After"))
                if attempt < MAXLAG_TRIES:
                    self.sleep(wait)
                    continue
                raise BackendError("rate_limited", "the wiki is lagging (maxlag); try later", retry_after=wait)
            if resp.status_code == 429:
                wait = _retry_after(resp.headers.get("Retry-After"))
                raise BackendError("rate_limited", "the wiki rate-limited us (HTTP 429)", retry_after=wait)
            if isinstance(error, dict):
                code, info = error.get("code", "error"), error.get("info", "")
                raise BackendError("error", f"the wiki answered an error: {code}: {info}"[:300])
            if resp.status_code >= 400 or not isinstance(data, dict):
                raise BackendError("error", f"the wiki answered HTTP {resp.status_code}, not API JSON; is it api.php?")
            return data
        raise AssertionError("unreachable")

    # -- search and read -------------------------------------------------------------------
    def search(self, query: str, limit: int = 5) -> list[str]:
        """Titles of the pages that best match `query` (articles only), best first."""
        key = {"q": query.lower(), "n": limit, "api": self.api_url}
        hit = self.cache.get("wiki_search", key)
        if hit is not None:
            return hit
        data = self.call(
            {"action": "query", "list": "search", "srsearch": query, "srlimit": str(limit), "srnamespace": "0"}
        )
        titles = [r["title"] for r in (data.get("query") or {}).get("search", []) if r.get("title")]
        self.cache.set("wiki_search", key, titles)
        return titles

    def pages(self, titles: list[str]) -> tuple[list[WikiPage], list[tuple[str, str]]]:
        """The plain text of each page (in the order given) and (title, reason) for those that
        could not be read (missing, empty)."""
        found: dict[str, WikiPage] = {}
        problems: list[tuple[str, str]] = []
        todo = []
        for t in titles:
            cached = self.cache.get("wiki_page", {"t": t, "api": self.api_url})
            if cached:
                found[t] = WikiPage(**cached)
            else:
                todo.append(t)
        if todo:
            read, missing, no_extract = self._extracts(todo)
            for t in no_extract:  # a wiki without TextExtracts (or an extract it would not give)
                page = self._parsed(t)
                if page is not None:
                    read[t] = page
                else:
                    problems.append((t, "no text"))
            problems += [(t, "no such page") for t in missing]
            for t, page in read.items():
                found[t] = page
                self.cache.set("wiki_page", {"t": t, "api": self.api_url}, page.__dict__)
        return [found[t] for t in titles if t in found], problems

    def _extracts(self, titles: list[str]) -> tuple[dict[str, WikiPage], list[str], list[str]]:
        params = {
            "action": "query",
            "prop": "extracts|info",
            "explaintext": "1",
            "exsectionformat": "plain",
            "inprop": "url",
            "redirects": "1",
            "titles": "|".join(titles),
        }
        by_title: dict[str, dict] = {}
        aliases = {t: t for t in titles}  # asked-for title -> the page's own title
        cont: dict = {}
        for _ in range(MAX_CONTINUES):
            data = self.call({**params, **cont})
            q = data.get("query") or {}
            for step in (*q.get("normalized", []), *q.get("redirects", [])):
                for asked, now in aliases.items():
                    if now == step.get("from"):
                        aliases[asked] = step.get("to", now)
            for p in q.get("pages", []):
                have = by_title.setdefault(p.get("title", ""), {})
                have.update({k: v for k, v in p.items() if v not in (None, "")})
            cont = data.get("continue") or {}
            if not cont:
                break
        read, missing, no_extract = {}, [], []
        for asked in titles:
            p = by_title.get(aliases[asked], {})
            if not p or p.get("missing") or p.get("invalid"):
                missing.append(asked)
            elif str(p.get("extract") or "").strip():
                url = p.get("canonicalurl") or p.get("fullurl") or self.page_url(p["title"])
                read[asked] = WikiPage(p["title"], url, p["extract"].strip())
            else:
                no_extract.append(asked)
        return read, missing, no_extract

    def _parsed(self, title: str) -> WikiPage | None:
        from .extract import extract

        data = self.call({"action": "parse", "page": title, "prop": "text", "redirects": "1"})
        parse = data.get("parse") or {}
        html = parse.get("text") or ""
        if isinstance(html, dict):  # format version 1 shape
            html = html.get("*", "")
        text = extract(f"<html><body><article>{html}</article></body></html>").text.strip()
        if not text:
            return None
        page_title = parse.get("title") or title
        info = self.call({"action": "query", "prop": "info", "inprop": "url", "titles": page_title})
        pages = (info.get("query") or {}).get("pages") or [{}]
        url = pages[0].get("canonicalurl") or pages[0].get("fullurl") or self.page_url(page_title)
        return WikiPage(page_title, url, text, via="parse")

    def page_url(self, title: str) -> str:
        """A page's address when the wiki does not say it: index.php beside api.php."""
        from urllib.parse import quote

        base = self.api_url.rsplit("/", 1)[0]
        return f"{base}/index.php?title={quote(title.replace(' ', '_'))}"

    def search_and_read(self, query: str, k: int = 3) -> tuple[list[WikiPage], list[tuple[str, str]]]:
        """The text of the `k` best pages for `query`, and what could not be read."""
        titles = self.search(query, limit=k)
        if not titles:
            return [], [("search", "no matching pages")]
        return self.pages(titles)


def _retry_after(value: str | None) -> float:
    try:
        wait = float(value) if value is not None else float(MAXLAG_S)
    except ValueError:
        wait = float(MAXLAG_S)
    return max(0.0, min(wait, RETRY_CAP_S))
