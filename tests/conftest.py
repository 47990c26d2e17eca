"""Test-wide fixtures. The socket guard fails any test that opens a non-loopback connection."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SHARED = ROOT.parent / "shared"

# Never let a test read the developer's real configuration or keys.
for _var in (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_CSE_ID",
    "SLEUTH_DATA_DIR",
    "SLEUTH_CHROMA_URL",
    "SLEUTH_ENGINE",
    "SLEUTH_TOOLS",
    "GEMINI_BASE_URL",
    "SLEUTH_DDG_URL",
    "GOOGLE_CSE_ENDPOINT",
):
    os.environ.pop(_var, None)
os.environ["ANONYMIZED_TELEMETRY"] = "False"


def _is_loopback(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


class NonLoopbackConnection(AssertionError):
    pass


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


_violations: list[str] = []


def _violation(msg: str):
    _violations.append(msg)
    return NonLoopbackConnection(msg)


def _check(sock, address):
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
        raise _violation(f"test tried to connect to non-loopback address {address!r}")


def _is_ip_literal(host) -> bool:
    try:
        ipaddress.ip_address(str(host).split("%")[0])
        return True
    except ValueError:
        return False


def _guarded_connect(self, address):
    _check(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    _check(self, address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host, *args, **kwargs):
    if isinstance(host, bytes):
        host = host.decode()
    if not _is_loopback(host) and not _is_ip_literal(host):
        # A name lookup leaves the machine too (DNS): it counts as a violation.
        _violation(f"test tried to resolve non-loopback host {host!r}")
        raise socket.gaierror(socket.EAI_NONAME, f"socket guard: no DNS in tests ({host})")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex
socket.getaddrinfo = _guarded_getaddrinfo


def _guard_ddgs() -> None:
    """ddgs talks HTTP through primp (Rust), below Python's socket module: guard it at its client."""
    from urllib.parse import urlsplit

    try:
        from ddgs import http_client
    except ImportError:
        return
    real = http_client.HttpClient.request

    def request(self, method, url, *args, **kwargs):
        host = urlsplit(str(url)).hostname
        if not _is_loopback(host):
            raise _violation(f"test made a ddgs request to non-loopback {url!r}")
        return real(self, method, url, *args, **kwargs)

    http_client.HttpClient.request = request


_guard_ddgs()


@pytest.fixture(autouse=True)
def _socket_guard():
    """Fail the test if it tried to leave loopback, even if the code under test caught the error."""
    start = len(_violations)
    yield
    new = _violations[start:]
    if new:
        pytest.fail("non-loopback network access in a test: " + "; ".join(new), pytrace=False)


@pytest.fixture
def shared_eval() -> Path:
    path = SHARED / "eval"
    if not path.is_dir():
        pytest.skip("../shared/eval is not present")
    return path


@pytest.fixture
def data_dir(tmp_path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    return d


@pytest.fixture
def cli(tmp_path):
    """Run `python main.py ...` in a subprocess under the network guard; returns a runner."""
    import subprocess

    guard_log = tmp_path / "netguard.log"

    def run(*args, input=None, env=None, data_dir=None, timeout=120, check_guard=True):
        e = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "GOOGLE", "SLEUTH"))}
        e.update(
            {
                "PYTHONPATH": str(ROOT / "tests" / "netguard"),
                "SLEUTH_NETGUARD_LOG": str(guard_log),
                # ddgs's HTTP client (primp, Rust) bypasses Python sockets: point it at a closed local port.
                "SLEUTH_DDG_URL": "http://127.0.0.1:9/html/",
                "SLEUTH_DATA_DIR": str(data_dir or tmp_path / "data"),
                "NO_COLOR": "1",
                "ANONYMIZED_TELEMETRY": "False",
            }
        )
        e.update(env or {})
        proc = subprocess.run(
            [sys.executable, str(ROOT / "main.py"), *args],
            input=input,
            capture_output=True,
            text=True,
            env=e,
            timeout=timeout,
            cwd=tmp_path,
        )
        if check_guard and guard_log.exists():
            pytest.fail("CLI left loopback: " + guard_log.read_text(), pytrace=False)
        return proc

    return run
