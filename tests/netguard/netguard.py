"""The test network guard: refuse any connection or DNS lookup that would leave loopback.

`install(on_violation)` patches the socket module; `on_violation(message)` is called for each
attempt (and the attempt fails). tests/conftest.py installs it in the test process (a violation
fails the test); sitecustomize.py installs it in CLI subprocesses started by the tests (a
violation is written to $SLEUTH_NETGUARD_LOG, which the test checks)."""

from __future__ import annotations

import ipaddress
import socket


def is_loopback(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def is_ip_literal(host) -> bool:
    try:
        ipaddress.ip_address(str(host).split("%")[0])
        return True
    except ValueError:
        return False


class NonLoopbackConnection(ConnectionRefusedError):
    pass


def install(on_violation) -> None:
    real_connect, real_connect_ex, real_getaddrinfo = (
        socket.socket.connect,
        socket.socket.connect_ex,
        socket.getaddrinfo,
    )

    def check(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not is_loopback(address[0]):
            msg = f"connection to non-loopback address {address!r}"
            on_violation(msg)
            raise NonLoopbackConnection(msg)

    def connect(self, address):
        check(self, address)
        return real_connect(self, address)

    def connect_ex(self, address):
        check(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        h = host.decode() if isinstance(host, bytes) else host
        if not is_loopback(h) and not is_ip_literal(h):  # a name lookup leaves the machine too (DNS)
            on_violation(f"DNS lookup of non-loopback host {h!r}")
            raise socket.gaierror(socket.EAI_NONAME, f"netguard: no DNS in tests ({h})")
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo
