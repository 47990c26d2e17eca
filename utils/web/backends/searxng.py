"""SearXNG, the self-hostable metasearch server, through its JSON API.

``GET {SEARXNG_URL}/search?q=...&format=json`` answers ``{"results": [{"url", "title", "content",
"engine", ...}], "unresponsive_engines": [[engine, reason], ...], ...}``. An instance whose
``search.formats`` lacks ``json`` answers 403; its rate limiter answers 429. Upstream engines that
failed while others answered are reported as a ``partial`` note; when nothing answered, their
reasons are the error.
"""

from __future__ import annotations

import threading

from ...errors import BackendError
from .base import Backend, SearchResult


class SearxngBackend(Backend):
    name = "searxng"
    label = "SearXNG"

    def __init__(self, url: str = "", timeout: float = 10.0):
        base = (url or "").strip().rstrip("/")
        self.base = base
        self.endpoint = base if base.endswith("/search") else base + "/search" if base else ""
        self.timeout = float(timeout)
        self._local = threading.local()

    @property
    def configured(self) -> bool:
        return bool(self.base)

    def cache_scope(self) -> str:
        return self.endpoint

    def _session(self):
        s = getattr(self._local, "session", None)
        if s is None:
            import requests

            s = requests.Session()
            s.headers["User-Agent"] = "Sleuth/0.1 (research agent)"
            s.headers["Accept"] = "application/json"
            self._local.session = s
        return s

    def search(self, query: str, max_results: int) -> tuple[list[SearchResult], list[tuple[str, str]]]:
        import requests

        try:
            resp = self._session().get(
                self.endpoint, params={"q": query, "format": "json"}, timeout=(5.0, self.timeout), allow_redirects=False
            )
        except requests.Timeout as exc:
            raise BackendError("timeout", f"SearXNG timed out after {self.timeout:g}s") from exc
        except requests.RequestException as exc:
            raise BackendError("network", f"SearXNG request failed: {type(exc).__name__}") from exc
        status = resp.status_code
        if status == 403:
            raise BackendError(
                "config", "SearXNG refused JSON (HTTP 403): add `json` to search.formats in its settings.yml"
            )
        if status == 429:
            ra = resp.headers.get("Retry-After", "")
            raise BackendError("rate_limited", "SearXNG answered HTTP 429", float(ra) if ra.isdigit() else None)
        if status != 200:
            raise BackendError("error", f"SearXNG answered HTTP {status}")
        try:
            data = resp.json()
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply to read
            raise BackendError("error", "SearXNG answered something that is not JSON") from exc
        if not isinstance(data, dict):
            raise BackendError("error", "SearXNG answered JSON of an unexpected shape")
        items = [it for it in data.get("results") or [] if isinstance(it, dict)]
        out = self.results(
            ((it.get("title") or "", it.get("url"), it.get("content") or "") for it in items), query, max_results
        )
        failed = unresponsive(data)
        if failed and not out:
            kind = "timeout" if any("timeout" in why.lower() for _, why in failed) else "error"
            raise BackendError(kind, "SearXNG found nothing; engines that did not answer: " + describe(failed))
        return out, ([("partial", "engines that did not answer: " + describe(failed))] if failed else [])


def unresponsive(data: dict) -> list[tuple[str, str]]:
    out = []
    for entry in data.get("unresponsive_engines") or []:
        if isinstance(entry, (list, tuple)) and entry:
            out.append((str(entry[0]), str(entry[1]) if len(entry) > 1 else "no answer"))
        elif isinstance(entry, str):
            out.append((entry, "no answer"))
    return out


def describe(failed: list[tuple[str, str]]) -> str:
    return ", ".join(f"{name} ({why})" for name, why in failed[:6])
