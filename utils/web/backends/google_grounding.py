"""Google Search through Gemini's built-in grounding tool; needs only GEMINI_API_KEY.

The model is asked to search for the query with ``types.Tool(google_search=types.GoogleSearch())``
and the results are read from the response's grounding metadata, not from the model's prose:
each ``grounding_chunks[i].web`` gives a URI and a title (in the Gemini API the title is the
site's domain), and the ``grounding_supports`` whose ``grounding_chunk_indices`` name chunk ``i``
give the grounded sentences (``segment.text``), used as its snippet. The URIs are Google redirect
links (``https://vertexaisearch.cloud.google.com/grounding-api-redirect/...``); the crawler follows
them and the source then records the final URL and the redirect it came from.
"""

from __future__ import annotations

import threading
from typing import Any

from ...errors import BackendError
from .base import Backend, SearchResult, clean

PROMPT = (
    "Use Google Search to find web pages about the query below. Answer with one short factual "
    "sentence per page you found, each based on that page only.\n\nQuery: {query}"
)
SNIPPET_CHARS = 300


class GoogleGroundingBackend(Backend):
    name = "google_grounding"
    label = "Google Search (Gemini grounding)"

    def __init__(self, api_key: str = "", model: str = "gemini-2.5-flash", base_url: str = "", timeout: float = 30.0):
        self.api_key, self.model, self.base_url = api_key or "", model or "gemini-2.5-flash", base_url or ""
        self.timeout = float(timeout)
        self._client: Any = None  # a google.genai.Client, built on first use
        self._lock = threading.Lock()

    @property
    def configured(self) -> bool:
        return bool(self.api_key)

    def cache_scope(self) -> str:
        return f"{self.base_url}|{self.model}"

    def client(self):
        with self._lock:
            if self._client is None:
                from google import genai
                from google.genai import types

                http = types.HttpOptions(
                    timeout=int(self.timeout * 1000),
                    base_url=self.base_url or None,
                    retry_options=types.HttpRetryOptions(attempts=1),  # the fallback chain is the retry
                )
                self._client = genai.Client(api_key=self.api_key, http_options=http)
            return self._client

    def search(self, query: str, max_results: int) -> tuple[list[SearchResult], list[tuple[str, str]]]:
        import httpx
        from google.genai import errors, types

        config = types.GenerateContentConfig(tools=[types.Tool(google_search=types.GoogleSearch())], temperature=0.0)
        try:
            resp = self.client().models.generate_content(
                model=self.model, contents=PROMPT.format(query=query), config=config
            )
        except errors.APIError as exc:
            raise api_error(exc) from exc
        except httpx.TimeoutException as exc:
            raise BackendError("timeout", f"Gemini grounding timed out after {self.timeout:g}s") from exc
        except httpx.HTTPError as exc:
            raise BackendError("network", f"Gemini grounding request failed: {type(exc).__name__}: {exc}") from exc
        return results_from_response(resp, query, max_results, self), []


def results_from_response(resp, query: str, max_results: int, backend: Backend) -> list[SearchResult]:
    """Search results from the grounding metadata of a GenerateContentResponse (empty when the
    model did not search)."""
    cand = (getattr(resp, "candidates", None) or [None])[0]
    meta = getattr(cand, "grounding_metadata", None)
    chunks = list(getattr(meta, "grounding_chunks", None) or [])
    snippets: dict[int, list[str]] = {}
    for sup in getattr(meta, "grounding_supports", None) or []:
        text = clean(getattr(getattr(sup, "segment", None), "text", ""))
        if not text:
            continue
        for i in sup.grounding_chunk_indices or []:
            if text not in snippets.setdefault(i, []):
                snippets[i].append(text)

    def snippet(i: int) -> str:
        text = " ".join(snippets.get(i, []))
        return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rsplit(" ", 1)[0] + "\u2026"

    webs = [getattr(chunk, "web", None) for chunk in chunks]
    found = (
        (getattr(web, "title", "") or getattr(web, "domain", "") or "", getattr(web, "uri", ""), snippet(i))
        for i, web in enumerate(webs)
    )
    return backend.results(found, query, max_results)


def api_error(exc) -> BackendError:
    code = int(getattr(exc, "code", 0) or 0)
    msg = f"Gemini grounding answered HTTP {code}: {str(getattr(exc, 'message', '') or exc)[:200]}"
    if code == 429:
        return BackendError("rate_limited", msg)
    if code in (401, 403) or (code == 400 and "api key" in msg.lower()):
        return BackendError("auth", msg)
    return BackendError("error", msg)
