"""DuckDuckGo through ``ddgs``.

We use ddgs' own ``Duckduckgo`` engine class (the "duckduckgo" provider only: ``DDGS.text`` would
fan out to other providers and hides HTTP status codes) and drive its HTTP client ourselves so we
can see the status: ddgs turns an HTTP 429 into a generic "No results found", which would make a
blocked backend look like an empty one. 429/403 (and DuckDuckGo's 202 bot-challenge page) are
``rate_limited``; the client starts a cool-down on that.
"""

from __future__ import annotations

import re
import threading
from urllib.parse import unquote

from ...errors import BackendError
from .base import Backend, SearchResult

# DuckDuckGo's "are you a robot" page (served with 202 or 200 instead of results).
_BLOCK_MARKERS = ("anomaly-modal", "challenge-form", "cc=botnet", "unusual traffic", "captcha")


class DuckDuckGoBackend(Backend):
    name = "duckduckgo"
    label = "DuckDuckGo"

    def __init__(self, url: str = "", timeout: float = 10.0):
        self.url = url or ""
        self.timeout = float(timeout)
        self._local = threading.local()

    def cache_scope(self) -> str:
        return self.url

    def search(self, query: str, max_results: int) -> tuple[list[SearchResult], list[tuple[str, str]]]:
        from ddgs.exceptions import DDGSException, TimeoutException

        eng = self._client()
        payload = eng.build_payload(query=query, region="wt-wt", safesearch="moderate", timelimit=None, page=1)
        try:
            resp = eng.http_client.request(eng.search_method, eng.search_url, data=payload)
        except TimeoutException as exc:
            raise BackendError("timeout", f"DuckDuckGo timed out after {self.timeout:g}s") from exc
        except DDGSException as exc:
            msg = str(exc)
            kind = "timeout" if "timed out" in msg.lower() or "Timeout" in msg else "network"
            raise BackendError(kind, f"DuckDuckGo request failed: {msg[:300]}") from exc
        status = int(resp.status_code)
        body = resp.text or ""
        if status == 429:
            raise BackendError("rate_limited", "DuckDuckGo answered HTTP 429 Too Many Requests")
        if status in (202, 403) or (status == 200 and looks_blocked(body)):
            raise BackendError("rate_limited", f"DuckDuckGo served a bot check (HTTP {status})")
        if status != 200:
            raise BackendError("error", f"DuckDuckGo answered HTTP {status}")
        items = eng.post_extract_results(eng.extract_results(body)) if body.strip() else []
        found = (
            (getattr(it, "title", ""), unwrap_ddg_href(getattr(it, "href", "") or ""), getattr(it, "body", "") or "")
            for it in items
        )
        return self.results(found, query, max_results), []

    def _client(self):
        """This thread's ddgs Duckduckgo engine (its primp client is not shared across threads)."""
        from ddgs.engines.duckduckgo import Duckduckgo

        eng = getattr(self._local, "ddg", None)
        if eng is None:
            eng = Duckduckgo(timeout=self.timeout)  # type: ignore[arg-type]  # primp accepts float seconds
            if self.url:
                eng.search_url = self.url
            self._local.ddg = eng
        return eng


def looks_blocked(body: str) -> bool:
    head = body[:20000].lower()
    return "result__" not in head and any(m in head for m in _BLOCK_MARKERS)


def unwrap_ddg_href(href: str) -> str:
    """DuckDuckGo sometimes wraps results as //duckduckgo.com/l/?uddg=<target>&rut=...; unwrap them."""
    href = href.strip()
    if href.startswith("//"):
        href = "https:" + href
    if "duckduckgo.com/l/?" in href and "uddg=" in href:
        target = href.split("uddg=", 1)[1]
        target = re.split(r"&rut=", target, maxsplit=1)[0]
        target = unquote(target)
        if target.startswith(("http://", "https://")):
            return target
    return href
