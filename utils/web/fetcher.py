"""A safe, polite page fetcher: SSRF guard, robots.txt, per-host pacing, retries, caps, caching.

``Fetcher.fetch(url)`` never raises; it returns a :class:`FetchResult` whose ``error_kind`` says
what went wrong (``invalid_url``, ``ssrf``, ``robots``, ``timeout``, ``too_large``,
``content_type``, ``http``, ``network``, ``redirects``, ``decode``).

Safety design
-------------
* Only http/https. Redirects are followed by hand (``allow_redirects=False``), at most
  ``max_redirects`` hops, and every hop goes through the same checks as the first URL.
* SSRF guard (utils/web/guard.py): every resolved address of the host, and of each redirect hop,
  must be public unless ``allow_private_hosts``; the check is repeated inside the connection,
  which dials only vetted addresses (DNS pinning). Environment proxies are ignored
  (``trust_env=False``) for the same reason. ``resolve`` and ``dial`` are the guard's test hooks.
* Bodies are streamed: a Content-Length above ``max_bytes`` is refused before reading, and
  reading stops as soon as ``max_bytes`` is exceeded. Every exchange also has a wall-clock
  ``deadline`` (checked between reads, each read bounded by ``read_timeout``) so a server that
  drips one byte at a time cannot hold a worker forever.
* Politeness: a descriptive User-Agent, robots.txt (cached per origin; missing/4xx = allowed;
  5xx/unreachable = allowed but logged; ``Crawl-delay`` honoured up to ``max_backoff``), a
  minimum interval between requests to the same host shared by all threads using this Fetcher,
  at most ``concurrency`` fetches in flight, bounded retries on 429/5xx with exponential backoff
  honouring ``Retry-After``. ``sleep`` and ``clock`` are injectable so tests record the delays
  instead of waiting. No cookies are kept.
* Page content is data: it is decoded and handed to the extractor, never executed.
"""

from __future__ import annotations

import email.utils
import logging
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from ..errors import FetchError
from ..urls import normalize_url
from .cache import Cache
from .decode import codec_name as _codec
from .decode import parse_content_type
from .guard import Dialer, Resolver, default_resolve, pinned_adapter, split_url, vet_host
from .page import ALLOWED_TYPES, FetchResult, read_page, sniff
from .robots import DEFAULT_UA, ROBOTS_MAX_BYTES, RobotsRules, parse_robots, robots_allows, robots_token  # noqa: F401

log = logging.getLogger(__name__)

ERROR_KINDS = (
    "invalid_url",
    "ssrf",
    "robots",
    "timeout",
    "too_large",
    "content_type",
    "http",
    "network",
    "redirects",
    "decode",
)
REDIRECT_CODES = (301, 302, 303, 307, 308)
CACHE_NAMESPACE = "page"


# -- helpers -------------------------------------------------------------------------------


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    v = value.strip()
    if v.isdigit():
        return float(v)
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


# -- the fetcher -----------------------------------------------------------------------------


class Fetcher:
    """Fetch pages safely and politely; share one instance across threads and jobs."""

    def __init__(
        self,
        *,
        allow_private_hosts: bool = False,
        ignore_robots: bool = False,
        cache: Cache | None = None,
        user_agent: str = DEFAULT_UA,
        connect_timeout: float = 5.0,
        read_timeout: float = 15.0,
        deadline: float = 30.0,
        max_bytes: int = 5_000_000,
        max_redirects: int = 5,
        per_host_interval: float = 1.0,
        max_retries: int = 2,
        backoff_base: float = 1.0,
        max_backoff: float = 30.0,
        concurrency: int = 4,
        resolve: Resolver | None = None,
        dial: Dialer | None = None,
        verify: bool | str = True,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.allow_private_hosts = bool(allow_private_hosts)
        self.ignore_robots = bool(ignore_robots)
        self.cache = cache if cache is not None else Cache.disabled()
        self.user_agent = user_agent or DEFAULT_UA
        self.connect_timeout = float(connect_timeout)
        self.read_timeout = float(read_timeout)
        self.deadline = float(deadline)
        self.max_bytes = int(max_bytes)
        self.max_redirects = max(0, int(max_redirects))
        self.per_host_interval = max(0.0, float(per_host_interval))
        self.max_retries = max(0, int(max_retries))
        self.backoff_base = max(0.0, float(backoff_base))
        self.max_backoff = max(0.0, float(max_backoff))
        self.concurrency = max(1, int(concurrency))
        self.resolve: Resolver = resolve or default_resolve
        self.dial = dial
        self.verify = verify  # True, or a CA bundle path (e.g. a corporate CA)
        self._sleep = sleep
        self._clock = clock
        self._local = threading.local()
        self._sessions: list = []  # every thread's session, so that close() reaches them all
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._pace_lock = threading.Lock()
        self._next_slot: dict[str, float] = {}
        self._host_interval: dict[str, float] = {}
        self._robots = RobotsRules(self.user_agent, self._load_robots)  # read once per origin
        self.robots_notes: dict[str, str] = {}

    @classmethod
    def from_settings(cls, settings: Any, cache: Cache | None = None, **kw: Any) -> Fetcher:
        kw.setdefault("per_host_interval", getattr(settings, "crawl_interval", 1.0))
        return cls(
            allow_private_hosts=settings.allow_private_hosts, ignore_robots=settings.ignore_robots, cache=cache, **kw
        )

    # -- public API --------------------------------------------------------------------------

    def fetch(self, url: str) -> FetchResult:
        """Fetch one URL. Never raises: failures come back with ``error``/``error_kind`` set."""
        start = time.monotonic()
        url = str(url or "").strip()
        try:
            with self._slots:
                result = self._fetch(url)
        except FetchError as exc:
            result = FetchResult(
                url=url,
                final_url=exc.final_url or url,
                status=exc.status,
                content_type=exc.content_type,
                error=exc.message,
                error_kind=exc.kind,
            )
        except Exception as exc:  # noqa: BLE001 - a bug or an unexpected library error must not escape
            log.debug("fetch %s failed", url, exc_info=True)
            result = FetchResult(url=url, final_url=url, error=f"{type(exc).__name__}: {exc}", error_kind="network")
        result.elapsed_ms = int((time.monotonic() - start) * 1000)
        return result

    def fetch_many(self, urls: list[str]) -> list[FetchResult]:
        """Fetch several URLs concurrently (at most ``concurrency`` at once); results in input order."""
        urls = list(urls)
        if len(urls) <= 1 or self.concurrency == 1:
            return [self.fetch(u) for u in urls]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(urls)), thread_name_prefix="sleuth-fetch") as ex:
            return list(ex.map(self.fetch, urls))

    # -- the pipeline ------------------------------------------------------------------------

    def _fetch(self, url: str) -> FetchResult:
        url = _drop_fragment(url)
        _, host, port = split_url(url)
        self._vet(host, port)
        key = normalize_url(url)
        hit = self.cache.get(CACHE_NAMESPACE, key)
        if isinstance(hit, dict):
            cached = FetchResult.from_dict(hit)
            cached.url = url
            cached.from_cache = True
            return cached
        final_url, resp = self._open(url, check_robots=not self.ignore_robots, retries=self.max_retries, pace=True)
        try:
            result = self._consume(url, final_url, resp)
        finally:
            resp.close()
        if result.error is None:
            data = result.to_dict()
            data.pop("elapsed_ms", None)
            data.pop("from_cache", None)
            self.cache.set(CACHE_NAMESPACE, key, data)
        return result

    def _vet(self, host: str, port: int) -> list[str]:
        """The host's addresses, all allowed by this fetcher's rules; FetchError otherwise."""
        return vet_host(host, port, self.allow_private_hosts, self.resolve)

    def _session(self):
        s = getattr(self._local, "session", None)
        if s is None:
            import http.cookiejar

            import requests

            s = requests.Session()
            s.trust_env = False  # no environment proxies / netrc: connections must go where we checked
            s.verify = self.verify
            s.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
            adapter = pinned_adapter(self._vet, self.dial)
            s.mount("http://", adapter)
            s.mount("https://", adapter)
            s.headers.update(
                {
                    "User-Agent": self.user_agent,
                    "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8,*/*;q=0.1",
                    "Accept-Language": "en;q=0.9,*;q=0.5",
                }
            )
            self._local.session = s
            self._sessions.append(s)  # list.append is atomic: no lock needed
        return s

    def close(self) -> None:
        """Close every thread's HTTP session (their pooled connections); a later fetch opens a new one."""
        sessions, self._sessions = self._sessions, []
        self._local = threading.local()
        for s in sessions:
            s.close()

    def _open(self, url: str, *, check_robots: bool, retries: int, pace: bool):
        """Follow redirects by hand, vetting every hop. Returns (final_url, streaming response)."""
        current = url
        seen = {normalize_url(url)}
        for hop in range(self.max_redirects + 1):
            _, host, port = split_url(current)
            if hop:
                try:
                    self._vet(host, port)
                except FetchError as exc:
                    exc.final_url = current
                    if exc.kind == "ssrf":
                        exc.message = f"redirect to {current} {exc.message}"
                    raise
            if check_robots and not self._robots.allow(current):
                raise FetchError(
                    "robots",
                    f"disallowed by robots.txt: {current} (use --ignore-robots to override)",
                    final_url=current,
                )
            resp = self._request(current, retries=retries, pace=pace)
            if resp.status_code in REDIRECT_CODES and resp.headers.get("Location"):
                location = resp.headers["Location"]
                resp.close()
                try:
                    nxt = _drop_fragment(urljoin(current, location.strip()))
                    scheme = urlsplit(nxt).scheme.lower()  # ValueError for "http://[::1" too
                except ValueError:
                    raise FetchError(
                        "invalid_url", f"bad redirect Location {location!r}", final_url=current, status=resp.status_code
                    ) from None
                if scheme not in ("http", "https"):
                    raise FetchError(
                        "invalid_url",
                        f"redirect to unsupported URL {nxt!r}",
                        final_url=current,
                        status=resp.status_code,
                    )
                norm = normalize_url(nxt)
                if norm in seen:
                    raise FetchError(
                        "redirects", f"redirect loop: {current} -> {nxt}", final_url=nxt, status=resp.status_code
                    )
                seen.add(norm)
                current = nxt
                continue
            return current, resp
        raise FetchError("redirects", f"too many redirects (more than {self.max_redirects})", final_url=current)

    def _request(self, url: str, *, retries: int, pace: bool):
        """One GET with retries on 429/5xx. Returns the (streaming) response of the last attempt."""
        import requests

        host_key = urlsplit(url).netloc.lower()
        attempt = 0
        while True:
            if pace:
                self._pace(host_key)
            try:
                resp = self._session().get(
                    url, timeout=(self.connect_timeout, self.read_timeout), allow_redirects=False, stream=True
                )
            except FetchError as exc:
                exc.final_url = exc.final_url or url
                raise
            except requests.exceptions.ConnectTimeout:
                raise FetchError(
                    "timeout", f"connect timeout after {self.connect_timeout:g}s: {url}", final_url=url
                ) from None
            except requests.exceptions.ReadTimeout:
                raise FetchError(
                    "timeout", f"no response within {self.read_timeout:g}s: {url}", final_url=url
                ) from None
            except requests.exceptions.InvalidURL as exc:
                raise FetchError("invalid_url", f"invalid URL {url!r}: {exc}", final_url=url) from None
            except ValueError as exc:  # requests reads a redirect's Location even when not following it
                raise FetchError("invalid_url", f"bad redirect Location from {url}: {exc}", final_url=url) from None
            except requests.exceptions.RequestException as exc:
                raise FetchError("network", f"network error for {url}: {_short(exc)}", final_url=url) from None
            status = resp.status_code
            if (status == 429 or 500 <= status <= 599) and attempt < retries:
                hinted = _retry_after(resp.headers.get("Retry-After"))
                delay = hinted if hinted is not None else self.backoff_base * (2**attempt)
                delay = min(max(delay, 0.0), self.max_backoff)
                resp.close()
                log.info("HTTP %s from %s; retrying in %.1fs", status, url, delay)
                if delay > 0:
                    self._sleep(delay)
                attempt += 1
                continue
            return resp

    def _pace(self, host_key: str) -> None:
        """Reserve the next slot for this host; sleep until it comes (shared by all threads)."""
        with self._pace_lock:
            interval = self._host_interval.get(host_key, self.per_host_interval)
            now = self._clock()
            slot = max(now, self._next_slot.get(host_key, now))
            self._next_slot[host_key] = slot + interval
        wait = slot - now
        if wait > 0:
            self._sleep(wait)

    def _consume(self, url: str, final_url: str, resp) -> FetchResult:
        status = resp.status_code
        mime, charset = parse_content_type(resp.headers.get("Content-Type"))

        def fail(kind: str, message: str) -> FetchError:
            return FetchError(kind, message, status=status, final_url=final_url, content_type=mime)

        if status >= 400 or status in REDIRECT_CODES:
            reason = getattr(resp, "reason", "") or ""
            raise fail("http", f"HTTP {status} {reason}".strip() + f" for {final_url}")
        if mime and mime not in ALLOWED_TYPES:
            raise fail("content_type", f"skipped: content type {mime} is not text, HTML or PDF")
        length = resp.headers.get("Content-Length")
        if length and length.strip().isdigit() and int(length) > self.max_bytes:
            raise fail("too_large", f"skipped: {int(length)} bytes is over the {self.max_bytes}-byte limit")
        body = self._read_body(resp, final_url, status, mime)
        if not mime:
            mime = sniff(body)
            if mime not in ALLOWED_TYPES:
                raise fail("content_type", "skipped: binary content without a content type")
        try:
            return read_page(url, final_url, status, mime, charset, body)
        except FetchError:
            raise
        except Exception as exc:  # noqa: BLE001 - malformed documents
            raise fail("decode", f"could not read the {mime} document: {type(exc).__name__}: {exc}") from None

    def _read_body(self, resp, final_url: str, status: int, mime: str, max_bytes: int | None = None) -> bytes:
        from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError

        cap = self.max_bytes if max_bytes is None else max_bytes

        def fail(kind: str, message: str) -> FetchError:
            return FetchError(kind, message, status=status, final_url=final_url, content_type=mime)

        deadline_at = time.monotonic() + self.deadline
        buf = bytearray()
        raw = resp.raw
        while True:
            if time.monotonic() > deadline_at:
                raise fail("timeout", f"download took longer than {self.deadline:g}s: {final_url}")
            try:
                chunk = raw.read1(65536, decode_content=True)
            except (ReadTimeoutError, TimeoutError):
                raise fail("timeout", f"body stalled for more than {self.read_timeout:g}s: {final_url}") from None
            except DecodeError as exc:
                raise fail("decode", f"bad content encoding: {_short(exc)}") from None
            except (ProtocolError, OSError) as exc:
                raise fail("network", f"connection broken while reading {final_url}: {_short(exc)}") from None
            if not chunk:
                return bytes(buf)
            buf += chunk
            if len(buf) > cap:
                raise fail("too_large", f"stopped reading: body is over the {cap}-byte limit")

    # -- robots.txt --------------------------------------------------------------------------

    def _load_robots(self, origin: str):
        """The parsed robots.txt of the origin (RFC 9309, protego), or None (= everything allowed)."""
        robots_url = origin + "/robots.txt"
        try:
            final_url, resp = self._open(robots_url, check_robots=False, retries=0, pace=False)
            try:
                status = resp.status_code
                if status >= 500:
                    self._note_robots(origin, f"robots.txt answered HTTP {status}; treating the site as allowed")
                    return None
                if status >= 400 or status in REDIRECT_CODES:
                    return None  # no robots.txt: everything is allowed
                mime, charset = parse_content_type(resp.headers.get("Content-Type"))
                body = self._read_body(resp, final_url, status, mime, max_bytes=ROBOTS_MAX_BYTES)
            finally:
                resp.close()
        except FetchError as exc:
            if exc.kind == "too_large":
                self._note_robots(origin, "robots.txt is too large; treating the site as allowed")
                return None
            self._note_robots(origin, f"robots.txt unavailable ({exc.message}); treating the site as allowed")
            return None
        text = body.decode(_codec(charset) or "utf-8", errors="replace")
        parser = parse_robots(text)
        try:
            delay = parser.crawl_delay(robots_token(self.user_agent))
        except Exception:  # noqa: BLE001
            delay = None
        if delay:
            host_key = urlsplit(origin).netloc.lower()
            with self._pace_lock:
                self._host_interval[host_key] = min(max(float(delay), self.per_host_interval), self.max_backoff)
        return parser

    def _note_robots(self, origin: str, note: str) -> None:
        self.robots_notes[origin] = note
        log.info("%s: %s", origin, note)


def _drop_fragment(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.fragment and "#" not in url:
        return url
    return urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))


def _short(exc: BaseException) -> str:
    """The innermost useful message of a requests/urllib3 exception chain."""
    inner = exc.args[0] if exc.args else None
    reason = getattr(inner, "reason", None)  # requests wraps urllib3's MaxRetryError(reason=...)
    if isinstance(reason, BaseException):
        exc = reason
    msg = str(exc)
    m = re.search(r"\[SSL[^\]]*\][^\n]*", msg)
    if m:
        return "TLS error: " + m.group(0).split(" (_ssl.c", 1)[0].strip().rstrip(".")
    m = re.search(r"\[Errno [^\]]+\] [^'\")]+", msg)
    if m:
        return m.group(0).strip()
    return msg[:300]
