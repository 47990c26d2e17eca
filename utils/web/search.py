"""Web search: one client in front of the search backends, with fallback and caching.

Backends (``utils/web/backends/``): DuckDuckGo (``ddgs``), SearXNG (with SEARXNG_URL), Google
Custom Search (with GOOGLE_API_KEY + GOOGLE_CSE_ID, until the API ends on 2027-01-01) and Google
Search through Gemini grounding (with GEMINI_API_KEY).

``SearchClient.search(tool, query)`` never raises. ``tool`` is what the research asked for:
``duckduckgo`` (a general web search: SearXNG first when configured, then DuckDuckGo) or
``google`` (Custom Search while configured and before its end date, Gemini grounding otherwise);
a backend name asks for that backend. A backend that errors, times out, is rate-limited or finds
fewer than two results hands over to the next configured one; results are merged, de-duplicated
by :func:`normalize_url` and re-ranked. Everything that went wrong is reported in
``SearchOutcome.errors`` as ``{"backend", "kind", "message"}``; rate limits start a cool-down
shared by all threads using this client, during which the backend is skipped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, cast

from ..errors import BACKEND_ERROR_KINDS as ERROR_KINDS  # noqa: F401
from ..errors import BackendError
from ..urls import normalize_url  # noqa: F401 - re-exported (one owner: utils.urls)
from .backends.base import Backend, SearchResult
from .backends.duckduckgo import DuckDuckGoBackend
from .backends.google_cse import CSE_END, GoogleCSEBackend
from .backends.google_grounding import GoogleGroundingBackend
from .backends.searxng import SearxngBackend
from .cache import Cache

__all__ = ["SearchClient", "SearchOutcome", "SearchResult", "normalize_url", "TOOLS", "BACKENDS"]

log = logging.getLogger(__name__)

TOOLS = ("duckduckgo", "google")  # what the research's search actions ask for
BACKENDS = ("searxng", "duckduckgo", "google_cse", "google_grounding")  # fallback order after the preferred ones
RELATED = {"duckduckgo": ("searxng", "duckduckgo"), "google": ("google_cse", "google_grounding")}  # tried next
MIN_RESULTS = 2  # fewer than this from a backend -> try the next one


@dataclass
class SearchOutcome:
    results: list[SearchResult] = field(default_factory=list)
    tool_used: str | None = None  # the backend that answered first
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


class SearchClient:
    """Runs searches with fallback between backends, a shared cache and rate-limit cool-downs.

    Thread-safe: one instance may be shared by many research jobs (backends keep per-thread HTTP
    clients where their libraries need it).
    """

    def __init__(
        self,
        *,
        google_api_key: str = "",
        google_cse_id: str = "",
        google_endpoint: str = "",
        gemini_api_key: str = "",
        gemini_model: str = "gemini-2.5-flash",
        gemini_base_url: str = "",
        searxng_url: str = "",
        ddg_url: str = "",
        cache: Cache | None = None,
        timeout: float = 10.0,
        max_results: int = 20,
        rate_limit_cooldown: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
        today: Callable[[], date] = date.today,
        cse_end: date = CSE_END,
    ):
        self.cache = cache if cache is not None else Cache.disabled()
        self.timeout = float(timeout)
        self.max_results = max(1, int(max_results))
        self.rate_limit_cooldown = float(rate_limit_cooldown)
        self.clock = clock
        self.backends: dict[str, Backend] = {
            "searxng": SearxngBackend(searxng_url, timeout=self.timeout),
            "duckduckgo": DuckDuckGoBackend(ddg_url, timeout=self.timeout),
            "google_cse": GoogleCSEBackend(
                google_api_key, google_cse_id, google_endpoint, timeout=self.timeout, end=cse_end, today=today
            ),
            "google_grounding": GoogleGroundingBackend(
                gemini_api_key, gemini_model, gemini_base_url, timeout=max(self.timeout, 30.0)
            ),
        }
        self._lock = threading.Lock()
        self._cooldown_until: dict[str, float] = {}

    @classmethod
    def from_settings(cls, settings: Any, cache: Cache | None = None, **kw: Any) -> SearchClient:
        return cls(
            google_api_key=settings.google_api_key,
            google_cse_id=settings.google_cse_id,
            google_endpoint=settings.google_cse_endpoint,
            gemini_api_key=settings.gemini_api_key,
            gemini_model=settings.gemini_model,
            gemini_base_url=settings.gemini_base_url,
            searxng_url=settings.searxng_url,
            ddg_url=settings.ddg_url,
            cache=cache,
            **kw,
        )

    # -- backend selection --------------------------------------------------------------

    @property
    def google_available(self) -> bool:
        return bool(self.preferred("google"))

    def available_backends(self) -> list[str]:
        return [name for name in BACKENDS if self.backends[name].configured]

    def preferred(self, tool: str) -> list[str]:
        """The backends that answer ``tool`` when they work (before any fallback)."""
        b = self.backends
        if tool == "duckduckgo":
            return [n for n in ("searxng", "duckduckgo") if b[n].configured]
        if tool == "google":
            if b["google_cse"].configured:  # configured and before its end date
                return ["google_cse"]
            return ["google_grounding"] if b["google_grounding"].configured else []
        return [tool] if tool in b and b[tool].configured else []

    def cooling_down(self, backend: str) -> float:
        """Seconds left in the backend's rate-limit cool-down (0 when usable)."""
        with self._lock:
            until = self._cooldown_until.get(backend, 0.0)
        return max(0.0, until - self.clock())

    def _start_cooldown(self, backend: str, seconds: float | None) -> None:
        wait = self.rate_limit_cooldown if seconds is None else max(float(seconds), 1.0)
        with self._lock:
            self._cooldown_until[backend] = max(self._cooldown_until.get(backend, 0.0), self.clock() + wait)

    def _cse(self) -> GoogleCSEBackend:
        return cast(GoogleCSEBackend, self.backends["google_cse"])

    def _unavailable(self, requested: str) -> dict:
        if requested == "google":
            cse = self._cse()
            why = (
                f"Google Custom Search ended on {cse.end.isoformat()} and GEMINI_API_KEY is not set"
                if cse.keys_set
                else "Google search needs GOOGLE_API_KEY + GOOGLE_CSE_ID or GEMINI_API_KEY"
            )
        elif requested in self.backends:
            why = f"{self.backends[requested].label} is not configured"
        else:
            why = f"unknown search tool {requested!r}; use one of {', '.join(TOOLS + BACKENDS)}"
        return {"backend": requested or "none", "kind": "config", "message": why}

    # -- the public entry point ---------------------------------------------------------

    def search(self, tool: str, query: str) -> SearchOutcome:
        """Search for ``query`` with ``tool`` ("duckduckgo", "google" or a backend name), falling
        back to the other configured backends."""
        outcome = SearchOutcome()
        q = " ".join(str(query or "").split())
        requested = str(tool or "").strip().lower()
        if not q:
            outcome.errors.append({"backend": requested or "none", "kind": "config", "message": "empty query"})
            return outcome
        preferred = self.preferred(requested)
        if not preferred:
            outcome.errors.append(self._unavailable(requested))
        elif requested == "google" and self._cse().keys_set and preferred != ["google_cse"]:
            end = self._cse().end.isoformat()
            outcome.errors.append({"backend": "google_cse", "kind": "config", "message": f"the API ended on {end}"})
        related = [n for n in RELATED.get(requested, ()) if n not in preferred and self.backends[n].configured]
        chain = preferred + related
        chain += [n for n in self.available_backends() if n not in chain]

        merged: list[SearchResult] = []
        seen: set[str] = set()
        contributors: list[str] = []
        network_used = False
        for name in chain:
            if len(merged) >= MIN_RESULTS:
                break
            try:
                results, notes, cached = self._backend_results(name, q)
            except BackendError as exc:
                outcome.errors.append({"backend": name, "kind": exc.kind, "message": exc.message})
                network_used = network_used or exc.network
                continue
            network_used = network_used or not cached
            outcome.errors += [{"backend": name, "kind": kind, "message": msg} for kind, msg in notes]
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
                msg = f"{len(results)} result(s); trying another backend" if results else "no results"
                outcome.errors.append({"backend": name, "kind": "no_results", "message": msg})

        merged = merged[: self.max_results]
        for i, r in enumerate(merged, start=1):
            r.rank = i
        outcome.results = merged
        if contributors:
            outcome.tool_used = contributors[0]
            outcome.fallback_used = any(c not in preferred for c in contributors)
            outcome.from_cache = not network_used
        return outcome

    # -- per-backend plumbing -----------------------------------------------------------

    def _backend_results(self, name: str, query: str) -> tuple[list[SearchResult], list[tuple[str, str]], bool]:
        """(results, notes, from_cache). Raises BackendError; an empty list is a valid answer."""
        backend = self.backends[name]
        key = {"q": query.lower(), "n": self.max_results, "endpoint": backend.cache_scope()}
        hit = self.cache.get(name, key)
        if isinstance(hit, list) and hit:
            try:
                return [SearchResult.from_dict(d) for d in hit], [], True
            except (TypeError, ValueError, AttributeError):
                pass
        left = self.cooling_down(name)
        if left > 0:
            raise BackendError(
                "rate_limited", f"skipped: cooling down after a rate limit ({left:.0f}s left)", network=False
            )
        try:
            results, notes = backend.search(query, self.max_results)
        except BackendError as exc:
            if exc.kind == "rate_limited":
                self._start_cooldown(name, exc.retry_after)
            raise
        except Exception as exc:  # noqa: BLE001 - a backend must never take the agent down
            log.debug("search backend %s failed", name, exc_info=True)
            raise BackendError("error", f"{type(exc).__name__}: {exc}") from exc
        if results and not notes:
            self.cache.set(name, key, [r.to_dict() for r in results])
        return results, notes, False
