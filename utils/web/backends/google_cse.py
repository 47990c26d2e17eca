"""Google's Custom Search JSON API through google-api-python-client.

The discovery document bundled with the library is used (``static_discovery=True``: no discovery
fetch) with an ``httplib2`` client that has an explicit timeout. Google has closed this API to new
customers and turns it off on 2027-01-01 (``CSE_END``): it is used only while GOOGLE_API_KEY and
GOOGLE_CSE_ID are set *and* before that date; ``today`` is injectable for tests.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import date

from ...config import CSE_END  # noqa: F401 - Google's announced end of the Custom Search JSON API
from ...errors import BackendError
from .base import Backend, SearchResult

_QUOTA_REASONS = {
    "ratelimitexceeded",
    "userratelimitexceeded",
    "dailylimitexceeded",
    "quotaexceeded",
    "resource_exhausted",
}


class GoogleCSEBackend(Backend):
    name = "google_cse"
    label = "Google Custom Search"

    def __init__(
        self,
        api_key: str = "",
        cse_id: str = "",
        endpoint: str = "",
        timeout: float = 10.0,
        end: date = CSE_END,
        today: Callable[[], date] = date.today,
    ):
        self.api_key, self.cse_id, self.endpoint = api_key or "", cse_id or "", endpoint or ""
        self.timeout = float(timeout)
        self.end, self.today = end, today
        self._local = threading.local()

    @property
    def keys_set(self) -> bool:
        return bool(self.api_key and self.cse_id)

    @property
    def ended(self) -> bool:
        return self.today() >= self.end

    @property
    def configured(self) -> bool:
        return self.keys_set and not self.ended

    def cache_scope(self) -> str:
        return self.endpoint

    def search(self, query: str, max_results: int) -> tuple[list[SearchResult], list[tuple[str, str]]]:
        import httplib2
        from googleapiclient.errors import HttpError

        service = self._service()
        try:
            resp = service.cse().list(q=query, cx=self.cse_id, num=min(10, max_results)).execute(num_retries=0)
        except HttpError as exc:
            raise http_error(exc) from exc
        except TimeoutError as exc:
            raise BackendError("timeout", f"Google Custom Search timed out after {self.timeout:g}s") from exc
        except (httplib2.HttpLib2Error, OSError) as exc:
            raise BackendError("network", f"Google Custom Search request failed: {type(exc).__name__}: {exc}") from exc
        items = [it for it in (resp or {}).get("items") or [] if isinstance(it, dict)]
        found = ((it.get("title") or "", it.get("link"), it.get("snippet") or "") for it in items)
        return self.results(found, query, max_results), []

    def _service(self):
        """This thread's Custom Search client (httplib2.Http is not thread-safe)."""
        svc = getattr(self._local, "svc", None)
        if svc is not None:
            return svc
        import httplib2
        from googleapiclient.discovery import build

        try:
            svc = build(
                "customsearch",
                "v1",
                developerKey=self.api_key,
                http=httplib2.Http(timeout=self.timeout),
                client_options={"api_endpoint": self.endpoint} if self.endpoint else None,
                cache_discovery=False,
                static_discovery=True,
            )
        except Exception as exc:  # noqa: BLE001
            raise BackendError(
                "config", f"cannot set up Google Custom Search: {type(exc).__name__}: {exc}", network=False
            ) from exc
        self._local.svc = svc
        return svc


def http_error(exc) -> BackendError:
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
    if status == 429 or reasons & _QUOTA_REASONS or "quota" in msg.lower():
        return BackendError("rate_limited", msg, retry_after)
    if status in (400, 401, 403):
        return BackendError("auth", msg)
    return BackendError("error", msg)
