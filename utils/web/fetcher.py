"""A safe, polite page fetcher: SSRF guard, robots.txt, per-host pacing, retries, caps, caching.

``Fetcher.fetch(url)`` never raises; it returns a :class:`FetchResult` whose ``error_kind`` says
what went wrong (``invalid_url``, ``ssrf``, ``robots``, ``timeout``, ``too_large``,
``content_type``, ``http``, ``network``, ``redirects``, ``decode``).

Safety design
-------------
* Only http/https. Redirects are followed by hand (``allow_redirects=False``), at most
  ``max_redirects`` hops, and every hop goes through the same checks as the first URL.
* SSRF: the host is resolved and refused if *any* address is loopback, private, link-local,
  multicast, reserved, unspecified or otherwise not globally routable (IPv4 and IPv6,
  IPv4-mapped IPv6 unwrapped), unless ``allow_private_hosts``.
* DNS pinning: the check is repeated inside the connection itself. ``requests`` is given an
  adapter whose urllib3 connections resolve the host with the Fetcher's resolver, vet every
  address and then connect to exactly those vetted addresses (TLS still uses the host name for
  SNI and certificate checks). A name that re-binds to 127.0.0.1 between the pre-flight check
  and the connection is therefore still refused, and no connection is ever made to an address
  that was not checked. Environment proxies are ignored (``trust_env=False``) for the same
  reason.
* Test hooks: ``resolve(host, port) -> [ip, ...]`` replaces DNS, and ``dial(ip, port) ->
  (ip, port)`` maps a vetted address to the one actually dialled. With both, a test can make
  "public.test" look like a public address to the guard while its connection lands on a local
  test server, so a redirect from it to 127.0.0.1 exercises the per-hop check for real.
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

import codecs
import email.utils
import io
import ipaddress
import logging
import re
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from utils.errors import FetchError
from utils.urls import normalize_url
from utils.web.cache import Cache

log = logging.getLogger(__name__)

DEFAULT_UA = "Sleuth/0.1 (+https://github.com/sleuth-research/sleuth; research agent)"
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
ALLOWED_TYPES = {"text/html": "html", "application/xhtml+xml": "html", "text/plain": "text", "application/pdf": "pdf"}
REDIRECT_CODES = (301, 302, 303, 307, 308)
ROBOTS_MAX_BYTES = 512_000
MAX_PDF_PAGES = 300
CACHE_NAMESPACE = "page"

Resolver = Callable[[str, int], list[str]]
Dialer = Callable[[str, int], tuple[str, int]]


@dataclass
class FetchResult:
    url: str
    final_url: str = ""
    status: int | None = None
    title: str = ""
    published: str | None = None
    text: str = ""
    links: list[str] = field(default_factory=list)
    content_type: str = ""
    error: str | None = None
    error_kind: str | None = None
    elapsed_ms: int = 0
    from_cache: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict:
        return {
            "url": self.url,
            "final_url": self.final_url,
            "status": self.status,
            "title": self.title,
            "published": self.published,
            "text": self.text,
            "links": list(self.links),
            "error": self.error,
            "error_kind": self.error_kind,
            "content_type": self.content_type,
            "elapsed_ms": self.elapsed_ms,
            "from_cache": self.from_cache,
        }

    @classmethod
    def from_dict(cls, d: dict) -> FetchResult:
        return cls(
            url=str(d.get("url", "")),
            final_url=str(d.get("final_url", "")),
            status=d.get("status"),
            title=str(d.get("title") or ""),
            published=d.get("published"),
            text=str(d.get("text") or ""),
            links=[str(x) for x in d.get("links") or []],
            content_type=str(d.get("content_type") or ""),
            error=d.get("error"),
            error_kind=d.get("error_kind"),
            elapsed_ms=int(d.get("elapsed_ms") or 0),
            from_cache=bool(d.get("from_cache")),
        )


# -- address checks ------------------------------------------------------------------------

_IP_CLASSES = (
    ("is_unspecified", "unspecified"),
    ("is_loopback", "loopback"),
    ("is_link_local", "link-local"),
    ("is_multicast", "multicast"),
    ("is_private", "private"),
    ("is_reserved", "reserved"),
)


def ip_refusal(ip: str) -> str | None:
    """Why an address must not be fetched ("a loopback address", ...), or None if it is public."""
    try:
        addr: Any = ipaddress.ip_address(str(ip).split("%", 1)[0])
    except ValueError:
        return "an unparseable address"
    if addr.version == 6:
        for inner in (addr.ipv4_mapped, addr.sixtofour, (addr.teredo or (None, None))[1]):
            if inner is not None:
                why = ip_refusal(str(inner))
                if why:
                    return why
    for attr, label in _IP_CLASSES:
        if getattr(addr, attr, False):
            return f"a {label} address"
    if not addr.is_global:
        return "a non-public address"
    return None


def default_resolve(host: str, port: int) -> list[str]:
    """All addresses of ``host`` (IP literals are returned as-is, without a lookup)."""
    h = host.strip("[]")
    try:
        ipaddress.ip_address(h.split("%", 1)[0])
        return [h]
    except ValueError:
        pass
    infos = socket.getaddrinfo(h, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    out: list[str] = []
    for info in infos:
        ip = str(info[4][0])
        if ip not in out:
            out.append(ip)
    return out


def _split_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, or FetchError('invalid_url')."""
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").rstrip(".")
        port = parts.port
    except ValueError as exc:
        raise FetchError("invalid_url", f"invalid URL {url!r}: {exc}") from None
    if scheme not in ("http", "https"):
        raise FetchError(
            "invalid_url", f"unsupported URL scheme {scheme or '(none)'!r} in {url!r}; only http and https are fetched"
        )
    if not host:
        raise FetchError("invalid_url", f"no host in URL {url!r}")
    if any(ord(c) < 32 or ord(c) == 127 for c in url):
        raise FetchError("invalid_url", f"control characters in URL {url!r}")
    return scheme, host, port or (443 if scheme == "https" else 80)


def _vet_host(host: str, port: int, allow_private_hosts: bool, resolve: Resolver) -> list[str]:
    """The host's addresses, all checked; FetchError('ssrf') if any is not public."""
    try:
        ips = list(resolve(host, port))
    except FetchError:
        raise
    except (OSError, UnicodeError, ValueError) as exc:
        raise FetchError("network", f"cannot resolve host {host!r}: {exc}") from None
    if not ips:
        raise FetchError("network", f"cannot resolve host {host!r}: no addresses")
    if not allow_private_hosts:
        for ip in ips:
            why = ip_refusal(ip)
            if why:
                shown = host if host == ip else f"{host} ({ip})"
                raise FetchError(
                    "ssrf",
                    f"refused: {shown} is {why}; use --allow-private-hosts to fetch loopback or private addresses",
                )
    return ips


def check_url(url: str, allow_private_hosts: bool = False, resolve: Resolver | None = None) -> str | None:
    """Why ``url`` would be refused (bad scheme/host, non-public address, unresolvable), or None."""
    try:
        _, host, port = _split_url(str(url or "").strip())
        _vet_host(host, port, allow_private_hosts, resolve or default_resolve)
    except FetchError as exc:
        return exc.message
    return None


# -- decoding --------------------------------------------------------------------------------

_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""", re.I)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
# WHATWG: these labels mean windows-1252 in browsers.
_LATIN1_LABELS = {"iso-8859-1", "iso8859-1", "latin-1", "latin1", "l1", "us-ascii", "ascii", "cp819", "ibm819"}
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def parse_content_type(value: str | None) -> tuple[str, str | None]:
    """('text/html', 'windows-1251') from 'text/html; charset="windows-1251"'."""
    if not value:
        return "", None
    parts = [p.strip() for p in str(value).split(";")]
    mime = parts[0].lower()
    charset = None
    for p in parts[1:]:
        k, _, v = p.partition("=")
        if k.strip().lower() == "charset" and v.strip():
            charset = v.strip().strip("\"'").strip()
    return mime, charset or None


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    try:
        return codecs.lookup(label.strip()).name
    except LookupError:
        return None


def _candidates(label: str | None) -> list[str]:
    name = _codec(label)
    if not name:
        return []
    if label.strip().lower() in _LATIN1_LABELS or name in ("latin-1", "iso8859-1", "ascii"):
        return ["cp1252", "latin-1"]
    return [name]


def decode_body(body: bytes, header_charset: str | None = None, html: bool = True) -> tuple[str, str]:
    """(text, encoding used): BOM, then HTTP charset, then <meta charset>, then detection."""
    for bom, enc in _BOMS:
        if body.startswith(bom):
            return body.decode(enc, errors="replace"), enc
    declared: list[str] = list(_candidates(header_charset))
    if html:
        head = body[:8192]
        m = _XML_ENCODING.search(head) or _META_CHARSET.search(head)
        if m:
            meta = m.group(1).decode("ascii", "replace")
            cands = _candidates(meta)
            # A page that can be read as ASCII cannot really be UTF-16 (WHATWG rule).
            declared += ["utf-8" if c.startswith("utf-16") else c for c in cands]
    for enc in declared:
        try:
            return body.decode(enc), enc
        except (UnicodeDecodeError, LookupError):
            continue
    # Nothing declared fits. Mostly-valid UTF-8 (a stray bad byte) stays UTF-8.
    text = body.decode("utf-8", errors="replace")
    if text.count("\ufffd") <= max(0, len(text) // 200):
        return text, "utf-8"
    try:
        from charset_normalizer import from_bytes

        best = from_bytes(body[:200_000]).best()
        enc = best.encoding if best is not None else None
        # Web pages are ASCII-compatible: reject detector guesses such as UTF-16 or EBCDIC.
        if enc and _ascii_compatible(enc):
            return body.decode(enc, errors="replace"), enc
    except Exception:  # noqa: BLE001 - detection is best effort
        log.debug("charset detection failed", exc_info=True)
    return body.decode("cp1252", errors="replace"), "cp1252"


def _ascii_compatible(enc: str) -> bool:
    sample = b"<html lang='en'>Az09 ?&;</html>"
    try:
        return sample.decode(enc) == sample.decode("ascii")
    except (UnicodeDecodeError, LookupError):
        return False


def _sniff(body: bytes) -> str:
    head = body[:1024].lstrip()
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    low = head.lower()
    if low.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<?xml")) or b"<html" in low:
        return "text/html"
    if b"\x00" in head:
        return "application/octet-stream"
    return "text/plain"


def _pdf_extract(body: bytes) -> tuple[str, str | None, str]:
    """(title, published ISO date or None, text) of a PDF."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(body))
    if reader.is_encrypted:
        reader.decrypt("")
    texts = []
    for i, page in enumerate(reader.pages):
        if i >= MAX_PDF_PAGES:
            break
        try:
            texts.append(page.extract_text() or "")
        except Exception:  # noqa: BLE001 - one bad page should not lose the rest
            log.debug("pdf page %d failed", i, exc_info=True)
    title, published = "", None
    meta = reader.metadata
    if meta is not None:
        title = str(meta.title or "").strip()
        try:
            dt = meta.creation_date
            published = dt.isoformat() if dt else None
        except Exception:  # noqa: BLE001 - malformed dates are common
            published = None
    text = "\n\n".join(t.strip() for t in texts if t and t.strip())
    return title, published, text


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


# -- the pinned transport ---------------------------------------------------------------------


def _pinned_adapter(fetcher: Fetcher):
    """A requests adapter whose connections only ever go to addresses the Fetcher has vetted."""
    from requests.adapters import HTTPAdapter
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
    from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
    from urllib3.util import connection as u3conn

    def new_conn(conn) -> socket.socket:
        host = conn._dns_host  # noqa: SLF001 - the host urllib3 would resolve
        ips = _vet_host(host, conn.port, fetcher.allow_private_hosts, fetcher.resolve)
        last: BaseException | None = None
        for ip in ips:
            addr = fetcher.dial(ip, conn.port) if fetcher.dial else (ip, conn.port)
            try:
                return u3conn.create_connection(
                    addr, conn.timeout, source_address=conn.source_address, socket_options=conn.socket_options
                )
            except TimeoutError as exc:
                raise ConnectTimeoutError(
                    conn, f"Connection to {host} timed out. (connect timeout={conn.timeout})"
                ) from exc
            except OSError as exc:
                last = exc
        raise NewConnectionError(conn, f"Failed to establish a new connection: {last}")

    class PinnedHTTPConnection(HTTPConnection):
        def _new_conn(self):
            return new_conn(self)

    class PinnedHTTPSConnection(HTTPSConnection):
        def _new_conn(self):
            return new_conn(self)

    class PinnedHTTPPool(HTTPConnectionPool):
        ConnectionCls = PinnedHTTPConnection

    class PinnedHTTPSPool(HTTPSConnectionPool):
        ConnectionCls = PinnedHTTPSConnection

    class PinnedAdapter(HTTPAdapter):
        def init_poolmanager(self, *args, **kwargs):
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": PinnedHTTPPool, "https": PinnedHTTPSPool}

    return PinnedAdapter(max_retries=0, pool_connections=8, pool_maxsize=8)


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
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._pace_lock = threading.Lock()
        self._next_slot: dict[str, float] = {}
        self._host_interval: dict[str, float] = {}
        self._robots_lock = threading.Lock()
        self._robots: dict[str, Any] = {}  # origin -> protego.Protego | None (None = allow all)
        self._robots_locks: dict[str, threading.Lock] = {}
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
        _, host, port = _split_url(url)
        _vet_host(host, port, self.allow_private_hosts, self.resolve)
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

    def _session(self):
        s = getattr(self._local, "session", None)
        if s is None:
            import http.cookiejar

            import requests

            s = requests.Session()
            s.trust_env = False  # no environment proxies / netrc: connections must go where we checked
            s.verify = self.verify
            s.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
            adapter = _pinned_adapter(self)
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
        return s

    def _open(self, url: str, *, check_robots: bool, retries: int, pace: bool):
        """Follow redirects by hand, vetting every hop. Returns (final_url, streaming response)."""
        current = url
        seen = {normalize_url(url)}
        for hop in range(self.max_redirects + 1):
            _, host, port = _split_url(current)
            if hop:
                try:
                    _vet_host(host, port, self.allow_private_hosts, self.resolve)
                except FetchError as exc:
                    exc.final_url = current
                    if exc.kind == "ssrf":
                        exc.message = f"redirect to {current} {exc.message}"
                    raise
            if check_robots and not self._robots_allow(current):
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
                except ValueError:
                    raise FetchError(
                        "invalid_url", f"bad redirect Location {location!r}", final_url=current, status=resp.status_code
                    ) from None
                if urlsplit(nxt).scheme.lower() not in ("http", "https"):
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
        if status >= 400 or status in REDIRECT_CODES:
            reason = getattr(resp, "reason", "") or ""
            raise FetchError(
                "http",
                f"HTTP {status} {reason}".strip() + f" for {final_url}",
                status=status,
                final_url=final_url,
                content_type=mime,
            )
        if mime and mime not in ALLOWED_TYPES:
            raise FetchError(
                "content_type",
                f"skipped: content type {mime} is not text, HTML or PDF",
                status=status,
                final_url=final_url,
                content_type=mime,
            )
        length = resp.headers.get("Content-Length")
        if length and length.strip().isdigit() and int(length) > self.max_bytes:
            raise FetchError(
                "too_large",
                f"skipped: {int(length)} bytes is over the {self.max_bytes}-byte limit",
                status=status,
                final_url=final_url,
                content_type=mime,
            )
        body = self._read_body(resp, final_url, status, mime)
        if not mime:
            mime = _sniff(body)
            if mime not in ALLOWED_TYPES:
                raise FetchError(
                    "content_type",
                    "skipped: binary content without a content type",
                    status=status,
                    final_url=final_url,
                    content_type=mime,
                )
        kind = ALLOWED_TYPES[mime]
        result = FetchResult(url=url, final_url=final_url, status=status, content_type=mime)
        try:
            if kind == "pdf":
                result.title, result.published, result.text = _pdf_extract(body)
            elif kind == "text":
                result.text, _ = decode_body(body, charset, html=False)
                result.text = result.text.strip()
            else:
                html, _ = decode_body(body, charset, html=True)
                self._extract_html(result, html, body, final_url)
        except FetchError:
            raise
        except Exception as exc:  # noqa: BLE001 - malformed documents
            raise FetchError(
                "decode",
                f"could not read the {mime} document: {type(exc).__name__}: {exc}",
                status=status,
                final_url=final_url,
                content_type=mime,
            ) from None
        return result

    @staticmethod
    def _extract_html(result: FetchResult, html: str, body: bytes, final_url: str) -> None:
        from utils.web.extract import extract

        html = _XML_DECL.sub("", html, count=1)
        try:
            ex = extract(html, final_url)
        except Exception:  # noqa: BLE001 - let the extractor try the raw bytes before giving up
            log.debug("extract(str) failed for %s; retrying with bytes", final_url, exc_info=True)
            ex = extract(body, final_url)
        result.title = str(getattr(ex, "title", "") or "").strip()
        published = getattr(ex, "published", None) or None
        if published is not None and not isinstance(published, str):
            published = published.isoformat() if hasattr(published, "isoformat") else str(published)
        result.published = published
        result.text = str(getattr(ex, "text", "") or "")
        result.links = [str(x) for x in (getattr(ex, "links", None) or [])]

    def _read_body(self, resp, final_url: str, status: int, mime: str, max_bytes: int | None = None) -> bytes:
        from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError

        cap = self.max_bytes if max_bytes is None else max_bytes
        deadline_at = time.monotonic() + self.deadline
        buf = bytearray()
        raw = resp.raw
        while True:
            if time.monotonic() > deadline_at:
                raise FetchError(
                    "timeout",
                    f"download took longer than {self.deadline:g}s: {final_url}",
                    status=status,
                    final_url=final_url,
                    content_type=mime,
                )
            try:
                chunk = raw.read1(65536, decode_content=True)
            except (ReadTimeoutError, TimeoutError):
                raise FetchError(
                    "timeout",
                    f"body stalled for more than {self.read_timeout:g}s: {final_url}",
                    status=status,
                    final_url=final_url,
                    content_type=mime,
                ) from None
            except DecodeError as exc:
                raise FetchError(
                    "decode",
                    f"bad content encoding: {_short(exc)}",
                    status=status,
                    final_url=final_url,
                    content_type=mime,
                ) from None
            except (ProtocolError, OSError) as exc:
                raise FetchError(
                    "network",
                    f"connection broken while reading {final_url}: {_short(exc)}",
                    status=status,
                    final_url=final_url,
                    content_type=mime,
                ) from None
            if not chunk:
                return bytes(buf)
            buf += chunk
            if len(buf) > cap:
                raise FetchError(
                    "too_large",
                    f"stopped reading: body is over the {cap}-byte limit",
                    status=status,
                    final_url=final_url,
                    content_type=mime,
                )

    # -- robots.txt --------------------------------------------------------------------------

    def _robots_allow(self, url: str) -> bool:
        parts = urlsplit(url)
        origin = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
        with self._robots_lock:
            lock = self._robots_locks.setdefault(origin, threading.Lock())
        with lock:
            with self._robots_lock:
                known = origin in self._robots
                parser = self._robots.get(origin)
            if not known:
                parser = self._load_robots(origin)
                with self._robots_lock:
                    self._robots[origin] = parser
        if parser is None:
            return True
        try:
            return bool(parser.can_fetch(url, robots_token(self.user_agent)))
        except Exception:  # noqa: BLE001
            return True

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


def parse_robots(text: str):
    """robots.txt parsed as RFC 9309 says (protego): ``*`` and ``$`` wildcards, and the longest
    matching rule wins (``Allow`` on a tie) — the standard library's ``urllib.robotparser`` takes
    the first matching rule and treats wildcards literally."""
    from protego import Protego

    return Protego.parse(text)


def robots_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against ("Sleuth" for "Sleuth/0.1 (...)")."""
    m = re.match(r"[A-Za-z_-]+", user_agent.strip())
    return m.group(0) if m else user_agent


def robots_allows(text: str, url: str, user_agent: str = DEFAULT_UA) -> bool:
    """Whether robots.txt ``text`` lets ``user_agent`` fetch ``url``."""
    return bool(parse_robots(text).can_fetch(url, robots_token(user_agent)))


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
