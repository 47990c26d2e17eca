"""Web search: DuckDuckGo (through ``ddgs``) and Google Custom Search, with fallback and caching.

``SearchClient.search(engine, query)`` never raises: an engine that errors, times out, is
rate-limited or finds fewer than two results hands over to the other configured engine; results
are merged, de-duplicated by :func:`normalize_url` and re-ranked. Everything that went wrong is
reported in ``SearchOutcome.errors`` as ``{"engine", "kind", "message"}``.

DuckDuckGo: we use ddgs' own ``Duckduckgo`` engine class (the "duckduckgo" backend only: ddgs'
``DDGS.text`` would fan out to other backends and hides HTTP status codes). We drive its HTTP
client ourselves so we can see the status: ddgs turns an HTTP 429 into a generic "No results
found", which would make a blocked engine look like an empty one. 429/403 (and DuckDuckGo's 202
bot-challenge page) count as ``rate_limited`` and start a cool-down shared by all threads using
this client, during which the engine is skipped.

Google: the Custom Search JSON API via google-api-python-client, using the discovery document
bundled with the library (``static_discovery=True``: no discovery fetch) and an ``httplib2``
client with an explicit timeout. Google has closed this API to new customers and will turn it
off on 2027-01-01, so it is strictly optional: it is offered only when both GOOGLE_API_KEY and
GOOGLE_CSE_ID are set.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import unquote

from utils.errors import BACKEND_ERROR_KINDS as ERROR_KINDS  # noqa: F401
from utils.errors import BackendError
from utils.urls import normalize_url  # noqa: F401 - re-exported (one owner: utils.urls)
from utils.web.cache import Cache

log = logging.getLogger(__name__)

ENGINES = ("duckduckgo", "google")
MIN_RESULTS = 2  # fewer than this from an engine -> try the next one


def _now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass
class SearchResult:
    title: str
    url: str
    snippet: str
    rank: int
    engine: str
    query: str
    time: str  # ISO-8601 UTC, when the engine was asked

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> SearchResult:
        return cls(
            title=str(d.get("title", "")),
            url=str(d.get("url", "")),
            snippet=str(d.get("snippet", "")),
            rank=int(d.get("rank", 0)),
            engine=str(d.get("engine", "")),
            query=str(d.get("query", "")),
            time=str(d.get("time", "")),
        )


@dataclass
class SearchOutcome:
    results: list[SearchResult] = field(default_factory=list)
    tool_used: str | None = None
    fallback_used: bool = False
    errors: list[dict] = field(default_factory=list)
    from_cache: bool = False

    def to_dict(self) -> dict:
        return {
            "results": [r.to_dict() for r in self.results],
            "tool_used": self.tool_used,
            "fallback_used": self.fallback_used,
            "errors": [dict(e) for e in self.errors],
            "from_cache": self.from_cache,
        }


# DuckDuckGo's "are you a robot" page (served with 202 or 200 instead of results).
_DDG_BLOCK_MARKERS = ("anomaly-modal", "challenge-form", "cc=botnet", "unusual traffic", "captcha")


class SearchClient:
    """Runs searches with fallback between engines, a shared cache and rate-limit cool-downs.

    Thread-safe: one instance may be shared by many research jobs. Each thread gets its own
    HTTP client objects (neither primp's nor httplib2's clients are shared across threads).
    """

    def __init__(
        self,
        *,
        google_api_key: str = "",
        google_cse_id: str = "",
        google_endpoint: str = "",
        ddg_url: str = "",
        cache: Cache | None = None,
        timeout: float = 10.0,
        max_results: int = 8,
        rate_limit_cooldown: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.google_api_key = google_api_key or ""
        self.google_cse_id = google_cse_id or ""
        self.google_endpoint = google_endpoint or ""
        self.ddg_url = ddg_url or ""
        self.cache = cache if cache is not None else Cache.disabled()
        self.timeout = float(timeout)
        self.max_results = max(1, int(max_results))
        self.rate_limit_cooldown = float(rate_limit_cooldown)
        self.clock = clock
        self._lock = threading.Lock()
        self._cooldown_until: dict[str, float] = {}
        self._local = threading.local()

    @classmethod
    def from_settings(cls, settings: Any, cache: Cache | None = None, **kw: Any) -> SearchClient:
        return cls(
            google_api_key=settings.google_api_key,
            google_cse_id=settings.google_cse_id,
            google_endpoint=settings.google_cse_endpoint,
            ddg_url=settings.ddg_url,
            cache=cache,
            **kw,
        )

    # -- engine selection ---------------------------------------------------------------

    @property
    def google_configured(self) -> bool:
        return bool(self.google_api_key and self.google_cse_id)

    def available_engines(self) -> list[str]:
        engines = ["duckduckgo"]
        if self.google_configured:
            engines.append("google")
        return engines

    def cooling_down(self, engine: str) -> float:
        """Seconds left in the engine's rate-limit cool-down (0 when usable)."""
        with self._lock:
            until = self._cooldown_until.get(engine, 0.0)
        return max(0.0, until - self.clock())

    def _start_cooldown(self, engine: str, seconds: float | None) -> None:
        wait = self.rate_limit_cooldown if seconds is None else max(float(seconds), 1.0)
        with self._lock:
            self._cooldown_until[engine] = max(self._cooldown_until.get(engine, 0.0), self.clock() + wait)

    # -- the public entry point ---------------------------------------------------------

    def search(self, engine: str, query: str) -> SearchOutcome:
        """Search with ``engine`` ("duckduckgo" or "google"), falling back to the other one."""
        outcome = SearchOutcome()
        q = " ".join(str(query or "").split())
        requested = str(engine or "").strip().lower()
        if not q:
            outcome.errors.append({"engine": requested or "none", "kind": "config", "message": "empty query"})
            return outcome
        chain: list[str] = []
        if requested not in ENGINES:
            outcome.errors.append(
                {
                    "engine": requested or "none",
                    "kind": "config",
                    "message": f"unknown search engine {engine!r}; use one of {', '.join(ENGINES)}",
                }
            )
        elif requested == "google" and not self.google_configured:
            outcome.errors.append(
                {
                    "engine": "google",
                    "kind": "config",
                    "message": "Google Custom Search is not configured (GOOGLE_API_KEY and GOOGLE_CSE_ID)",
                }
            )
        else:
            chain.append(requested)
        chain += [e for e in self.available_engines() if e not in chain]

        merged: list[SearchResult] = []
        seen: set[str] = set()
        contributors: list[str] = []
        network_used = False
        for name in chain:
            if len(merged) >= MIN_RESULTS:
                break
            try:
                results, cached = self._engine_results(name, q)
            except BackendError as exc:
                outcome.errors.append({"engine": name, "kind": exc.kind, "message": exc.message})
                network_used = network_used or exc.network
                continue
            network_used = network_used or not cached
            added = 0
            for r in results:
                key = normalize_url(r.url)
                if not key or key in seen:
                    continue
                seen.add(key)
                merged.append(r)
                added += 1
            if added:
                contributors.append(name)
            if len(results) < MIN_RESULTS:
                outcome.errors.append(
                    {
                        "engine": name,
                        "kind": "no_results",
                        "message": f"{len(results)} result(s); trying another engine" if len(results) else "no results",
                    }
                )

        merged = merged[: self.max_results]
        for i, r in enumerate(merged, start=1):
            r.rank = i
        outcome.results = merged
        if contributors:
            outcome.tool_used = contributors[0]
            outcome.fallback_used = any(c != requested for c in contributors)
            outcome.from_cache = not network_used
        return outcome

    # -- per-engine plumbing ------------------------------------------------------------

    def _cache_key(self, name: str, query: str) -> dict:
        endpoint = self.ddg_url if name == "duckduckgo" else self.google_endpoint
        return {"q": query.lower(), "n": self.max_results, "endpoint": endpoint}

    def _engine_results(self, name: str, query: str) -> tuple[list[SearchResult], bool]:
        """(results, from_cache). Raises BackendError; an empty list is a valid answer."""
        key = self._cache_key(name, query)
        hit = self.cache.get(name, key)
        if isinstance(hit, list) and hit:
            try:
                return [SearchResult.from_dict(d) for d in hit], True
            except (TypeError, ValueError, AttributeError):
                pass
        left = self.cooling_down(name)
        if left > 0:
            raise BackendError(
                "rate_limited", f"skipped: cooling down after a rate limit ({left:.0f}s left)", network=False
            )
        try:
            if name == "duckduckgo":
                results = self._search_duckduckgo(query)
            else:
                results = self._search_google(query)
        except BackendError as exc:
            if exc.kind == "rate_limited":
                self._start_cooldown(name, exc.retry_after)
            raise
        except Exception as exc:  # noqa: BLE001 - an engine must never take the agent down
            log.debug("search engine %s failed", name, exc_info=True)
            raise BackendError("error", f"{type(exc).__name__}: {exc}") from exc
        if results:
            self.cache.set(name, key, [r.to_dict() for r in results])
        return results, False

    def _search_duckduckgo(self, query: str) -> list[SearchResult]:
        from ddgs.exceptions import DDGSException, TimeoutException

        eng = self._ddg_engine()
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
        if status in (202, 403) or (status == 200 and _looks_blocked(body)):
            raise BackendError("rate_limited", f"DuckDuckGo served a bot check (HTTP {status})")
        if status != 200:
            raise BackendError("error", f"DuckDuckGo answered HTTP {status}")
        items = eng.post_extract_results(eng.extract_results(body)) if body.strip() else []
        when = _now_iso()
        out: list[SearchResult] = []
        for item in items:
            url = _unwrap_ddg_href(getattr(item, "href", "") or "")
            if not url.startswith(("http://", "https://")):
                continue
            out.append(
                SearchResult(
                    title=getattr(item, "title", "") or url,
                    url=url,
                    snippet=getattr(item, "body", "") or "",
                    rank=len(out) + 1,
                    engine="duckduckgo",
                    query=query,
                    time=when,
                )
            )
            if len(out) >= self.max_results:
                break
        return out

    def _ddg_engine(self):
        """This thread's ddgs Duckduckgo engine (its primp client is not shared across threads)."""
        from ddgs.engines.duckduckgo import Duckduckgo

        eng = getattr(self._local, "ddg", None)
        if eng is None:
            eng = Duckduckgo(timeout=self.timeout)  # type: ignore[arg-type]  # primp accepts float seconds
            if self.ddg_url:
                eng.search_url = self.ddg_url
            self._local.ddg = eng
        return eng

    def _search_google(self, query: str) -> list[SearchResult]:

        import httplib2
        from googleapiclient.errors import HttpError

        service = self._google_service()
        try:
            resp = (
                service.cse().list(q=query, cx=self.google_cse_id, num=min(10, self.max_results)).execute(num_retries=0)
            )
        except HttpError as exc:
            raise _google_http_error(exc) from exc
        except TimeoutError as exc:
            raise BackendError("timeout", f"Google Custom Search timed out after {self.timeout:g}s") from exc
        except (httplib2.HttpLib2Error, OSError) as exc:
            raise BackendError("network", f"Google Custom Search request failed: {type(exc).__name__}: {exc}") from exc
        when = _now_iso()
        out: list[SearchResult] = []
        for item in (resp or {}).get("items") or []:
            if not isinstance(item, dict):
                continue
            url = str(item.get("link") or "")
            if not url.startswith(("http://", "https://")):
                continue
            out.append(
                SearchResult(
                    title=" ".join(str(item.get("title") or url).split()),
                    url=url,
                    snippet=" ".join(str(item.get("snippet") or "").split()),
                    rank=len(out) + 1,
                    engine="google",
                    query=query,
                    time=when,
                )
            )
            if len(out) >= self.max_results:
                break
        return out

    def _google_service(self):
        """This thread's Custom Search client (httplib2.Http is not thread-safe)."""
        svc = getattr(self._local, "google", None)
        if svc is not None:
            return svc
        import httplib2
        from googleapiclient.discovery import build

        try:
            http = httplib2.Http(timeout=self.timeout)
            svc = build(
                "customsearch",
                "v1",
                developerKey=self.google_api_key,
                http=http,
                client_options={"api_endpoint": self.google_endpoint} if self.google_endpoint else None,
                cache_discovery=False,
                static_discovery=True,
            )
        except Exception as exc:  # noqa: BLE001
            raise BackendError(
                "config", f"cannot set up Google Custom Search: {type(exc).__name__}: {exc}", network=False
            ) from exc
        self._local.google = svc
        return svc


def _looks_blocked(body: str) -> bool:
    head = body[:20000].lower()
    return "result__" not in head and any(m in head for m in _DDG_BLOCK_MARKERS)


def _unwrap_ddg_href(href: str) -> str:
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


_GOOGLE_QUOTA_REASONS = {
    "ratelimitexceeded",
    "userratelimitexceeded",
    "dailylimitexceeded",
    "quotaexceeded",
    "resource_exhausted",
}


def _google_http_error(exc) -> BackendError:
    status = int(getattr(getattr(exc, "resp", None), "status", 0) or 0)
    reasons: set[str] = set()
    try:
        for d in exc.error_details or []:
            if isinstance(d, dict):
                reasons.add(str(d.get("reason", "")).lower())
    except Exception:  # noqa: BLE001
        pass
    try:
        detail = exc._get_reason()  # noqa: SLF001 - the library's own message extraction
    except Exception:  # noqa: BLE001
        detail = ""
    msg = f"Google Custom Search answered HTTP {status}" + (f": {detail}" if detail else "")
    retry_after = None
    try:
        ra = exc.resp.get("retry-after")
        retry_after = float(ra) if ra else None
    except (AttributeError, TypeError, ValueError):
        pass
    if status == 429 or reasons & _GOOGLE_QUOTA_REASONS or "quota" in msg.lower():
        return BackendError("rate_limited", msg, retry_after)
    if status in (400, 401, 403):
        return BackendError("auth", msg)
    return BackendError("error", msg)
