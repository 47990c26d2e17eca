"""What every search backend shares: the result shape and the backend interface."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def clean(text: object) -> str:
    return " ".join(str(text or "").split())


@dataclass
class SearchResult:
    title: str
    url: str
    snippet: str
    rank: int
    backend: str
    query: str
    time: str  # ISO-8601 UTC, when the backend was asked

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> SearchResult:
        return cls(
            title=str(d.get("title", "")),
            url=str(d.get("url", "")),
            snippet=str(d.get("snippet", "")),
            rank=int(d.get("rank", 0)),
            backend=str(d.get("backend") or d.get("engine") or ""),  # "engine": entries cached before the rename
            query=str(d.get("query", "")),
            time=str(d.get("time", "")),
        )


class Backend:
    """One search provider. ``search`` returns (results, notes) or raises ``BackendError``.

    ``notes`` are non-fatal problems worth showing in the journey, as (kind, message) pairs (for
    example SearXNG engines that timed out while others answered). Implementations keep
    per-thread HTTP clients themselves: one instance is shared by every research thread.
    """

    name = ""
    label = ""  # how messages name it

    @property
    def configured(self) -> bool:
        return True

    def cache_scope(self) -> str:
        """What besides the query decides the answer (the endpoint); part of the cache key."""
        return ""

    def search(self, query: str, max_results: int) -> tuple[list[SearchResult], list[tuple[str, str]]]:
        raise NotImplementedError

    def results(self, found: Iterable[tuple[str, str | None, str]], query: str, max_results: int) -> list[SearchResult]:
        """(title, url, snippet) as the provider gave them -> at most max_results web results, ranked
        from 1, one timestamp; anything that is not an http(s) URL is skipped."""
        when = now_iso()
        out: list[SearchResult] = []
        for title, url, snippet in found:
            url = str(url or "")
            if not url.startswith(("http://", "https://")):
                continue
            title = clean(title) or url
            out.append(
                SearchResult(title, url, clean(snippet), len(out) + 1, backend=self.name, query=query, time=when)
            )
            if len(out) >= max_results:
                break
        return out
