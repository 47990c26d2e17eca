"""Loaded by CLI subprocesses started from the tests (PYTHONPATH): the same socket guard as
tests/conftest.py. A non-loopback connect or DNS lookup is refused and logged to
$SLEUTH_NETGUARD_LOG, which the test then checks is empty."""

import ipaddress
import os
import socket


def _loopback(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _literal(host) -> bool:
    try:
        ipaddress.ip_address(str(host).split("%")[0])
        return True
    except ValueError:
        return False


def _log(msg: str) -> None:
    path = os.environ.get("SLEUTH_NETGUARD_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(msg + "\n")


_connect, _connect_ex, _gai = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo


def _check(sock, address):
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address[0]):
        _log(f"connect {address!r}")
        raise ConnectionRefusedError(f"netguard: non-loopback connection refused: {address!r}")


def connect(self, address):
    _check(self, address)
    return _connect(self, address)


def connect_ex(self, address):
    _check(self, address)
    return _connect_ex(self, address)


def getaddrinfo(host, *args, **kwargs):
    h = host.decode() if isinstance(host, bytes) else host
    if not _loopback(h) and not _literal(h):
        _log(f"resolve {h!r}")
        raise socket.gaierror(socket.EAI_NONAME, f"netguard: no DNS ({h})")
    return _gai(host, *args, **kwargs)


socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo
