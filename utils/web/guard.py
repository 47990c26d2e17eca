"""The SSRF guard: which hosts the crawler may connect to, checked before and during the connection.

* Only http/https URLs with a host and no control characters (`split_url`).
* The host is resolved and refused if *any* address is loopback, private, link-local, multicast,
  reserved, unspecified or otherwise not globally routable (IPv4 and IPv6; IPv4-mapped, 6to4 and
  Teredo addresses unwrapped), unless private hosts are allowed (`vet_host`, `check_url`).
* Link-local addresses (169.254.0.0/16, fe80::/10) and the cloud metadata endpoints in them or
  next to them (169.254.169.254, fd00:ec2::254) are refused even then (`always_refused`): that is
  where a cloud machine hands out its credentials, the classic prize of a request forged through a
  crawler, and an intranet or a test never needs them.
* DNS pinning (`pinned_adapter`): a requests adapter whose urllib3 connections resolve the host
  with the same resolver, vet every address and then connect to exactly those vetted addresses
  (TLS still uses the host name for SNI and certificate checks). A name that re-binds to 127.0.0.1
  between the pre-flight check and the connection is therefore still refused, and no connection
  is ever made to an address that was not checked.
* Test hooks: ``resolve(host, port) -> [ip, ...]`` replaces DNS, and ``dial(ip, port) -> (ip,
  port)`` maps a vetted address to the one actually dialled. With both, a test can make
  "public.test" look like a public address to the guard while its connection lands on a local
  test server, so a redirect from it to 127.0.0.1 exercises the per-hop check for real.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from ..errors import FetchError

Resolver = Callable[[str, int], list[str]]
Dialer = Callable[[str, int], tuple[str, int]]

_IP_CLASSES = (
    ("is_unspecified", "unspecified"),
    ("is_loopback", "loopback"),
    ("is_link_local", "link-local"),
    ("is_multicast", "multicast"),
    ("is_private", "private"),
    ("is_reserved", "reserved"),
)


def _address(ip: str) -> tuple[Any, list] | None:
    """The address and the IPv4 addresses inside it (IPv4-mapped, 6to4, Teredo), or None if unparseable."""
    try:
        addr: Any = ipaddress.ip_address(str(ip).split("%", 1)[0])
    except ValueError:
        return None
    if addr.version != 6:
        return addr, []
    inner = (addr.ipv4_mapped, addr.sixtofour, (addr.teredo or (None, None))[1])
    return addr, [a for a in inner if a is not None]


def ip_refusal(ip: str) -> str | None:
    """Why an address must not be fetched ("a loopback address", ...), or None if it is public."""
    parsed = _address(ip)
    if parsed is None:
        return "an unparseable address"
    addr, inner = parsed
    for why in map(ip_refusal, map(str, inner)):
        if why:
            return why
    for attr, label in _IP_CLASSES:
        if getattr(addr, attr, False):
            return f"{'an' if label[0] in 'aeiou' else 'a'} {label} address"
    if not addr.is_global:
        return "a non-public address"
    return None


# Cloud metadata endpoints: the IPv4 one is link-local, the IPv6 one unique-local (private).
_METADATA = frozenset(ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254"))


def always_refused(ip: str) -> str | None:
    """Why an address is refused even with --allow-private-hosts (a link-local address or a cloud
    metadata endpoint, also inside an IPv4-mapped, 6to4 or Teredo address), or None."""
    parsed = _address(ip)
    if parsed is None:
        return "an unparseable address"
    addr, inner = parsed
    for why in map(always_refused, map(str, inner)):
        if why:
            return why
    if addr in _METADATA:
        return "a cloud metadata address"
    if addr.is_link_local:
        return "a link-local address (where cloud metadata services live)"
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


def split_url(url: str) -> tuple[str, str, int]:
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


def vet_host(host: str, port: int, allow_private_hosts: bool, resolve: Resolver) -> list[str]:
    """The host's addresses, all checked; FetchError('ssrf') if any is not public."""
    try:
        ips = list(resolve(host, port))
    except FetchError:
        raise
    except (OSError, UnicodeError, ValueError) as exc:
        raise FetchError("network", f"cannot resolve host {host!r}: {exc}") from None
    if not ips:
        raise FetchError("network", f"cannot resolve host {host!r}: no addresses")
    for ip in ips:
        shown = host if host == ip else f"{host} ({ip})"
        why = always_refused(ip)
        if why:
            raise FetchError("ssrf", f"refused: {shown} is {why}; Sleuth never fetches these")
        why = None if allow_private_hosts else ip_refusal(ip)
        if why:
            raise FetchError(
                "ssrf", f"refused: {shown} is {why}; use --allow-private-hosts to fetch loopback or private addresses"
            )
    return ips


def check_url(url: str, allow_private_hosts: bool = False, resolve: Resolver | None = None) -> str | None:
    """Why ``url`` would be refused (bad scheme/host, non-public address, unresolvable), or None."""
    try:
        _, host, port = split_url(str(url or "").strip())
        vet_host(host, port, allow_private_hosts, resolve or default_resolve)
    except FetchError as exc:
        return exc.message
    return None


# -- the pinned transport ---------------------------------------------------------------------


def pinned_adapter(vet: Callable[[str, int], list[str]], dial: Dialer | None = None):
    """A requests adapter whose connections only ever go to addresses that `vet(host, port)` returned
    (it raises FetchError for a refused host); `dial` maps a vetted address to the one dialled (tests)."""
    from requests.adapters import HTTPAdapter
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
    from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
    from urllib3.util import connection as u3conn

    def new_conn(conn) -> socket.socket:
        host = conn._dns_host  # noqa: SLF001 - the host urllib3 would resolve
        ips = vet(host, conn.port)
        last: BaseException | None = None
        for ip in ips:
            addr = dial(ip, conn.port) if dial else (ip, conn.port)
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
