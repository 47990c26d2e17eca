"""Test-wide fixtures. The socket guard fails any test that opens a non-loopback connection."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from utils.checkout import as_package  # noqa: E402 - the checkout is imported as the `sleuth` package

as_package()

SHARED = ROOT.parent / "shared"  # shared eval data: only quality gates and benches need it
FIXTURE_WEB = ROOT / "tests" / "fixtures" / "web"  # a small wiki written for the tests

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
    "GEMINI_MODEL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "SLEUTH_MODEL",
    "SLEUTH_CONTEXT_TOKENS",
    "SLEUTH_MAX_COST",
    "SLEUTH_PRICE",
    "SLEUTH_LLM_TIMEOUT",
    "SLEUTH_WIKI_URL",
):
    os.environ.pop(_var, None)
os.environ["ANONYMIZED_TELEMETRY"] = "False"


sys.path.insert(0, str(ROOT / "tests" / "netguard"))
import netguard  # noqa: E402

_violations: list[str] = []


def _violation(msg: str) -> AssertionError:
    _violations.append(msg)
    return AssertionError(msg)


netguard.install(_violation)


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
        if not netguard.is_loopback(host):
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


def files_open_under(folder: Path) -> list[str]:
    """The files under `folder` this process holds open (Linux: /proc/self/fd)."""
    prefix, found = f"{folder}{os.sep}", []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed by now
            continue
        if target.startswith(prefix):
            found.append(target)
    return sorted(found)


@pytest.fixture(autouse=True)
def _no_file_left_open(request):
    """Fail a test that leaves a file of its tmp_path open (a store, index, cache or lock file never
    closed): the product or the test leaks it, and a full run once held over 1,024 descriptors.
    What only a reference cycle holds is the collector's to close, not a leak."""
    yield
    tmp = request.node.funcargs.get("tmp_path") if hasattr(request.node, "funcargs") else None
    if tmp is None or not os.path.isdir("/proc/self/fd"):
        return
    left = files_open_under(tmp)
    if left:
        import gc

        gc.collect()
        left = files_open_under(tmp)
    if left:
        pytest.fail(f"the test left {len(left)} file(s) of its tmp_path open: {left[:6]}", pytrace=False)


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


def cli_env(tmp_path: Path, **extra: str) -> dict:
    """Environment for a CLI subprocess: no real keys or config, the network guard, a tmp data dir,
    and ddgs (primp, below Python's sockets) and the wiki pointed at a closed local port unless overridden."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "GOOGLE", "OPENAI", "SLEUTH", "NO_COLOR"))
    }
    env.update(
        {
            "PYTHONPATH": str(ROOT / "tests" / "netguard"),
            "SLEUTH_NETGUARD_LOG": str(tmp_path / "netguard.log"),
            "SLEUTH_DDG_URL": "http://127.0.0.1:9/html/",
            "SLEUTH_WIKI_URL": "http://127.0.0.1:9/w/api.php",
            "SLEUTH_DATA_DIR": str(tmp_path / "data"),
            "ANONYMIZED_TELEMETRY": "False",
        }
    )
    env.update(extra)
    return env


def web_env(web, **extra: str) -> dict:
    """Settings that point Sleuth's web tools at a LocalWeb (tests/localweb.py)."""
    return {
        "SLEUTH_DDG_URL": web.search_url,
        "SLEUTH_ALLOW_PRIVATE_HOSTS": "1",
        "SLEUTH_CRAWL_INTERVAL": "0",
        "SLEUTH_TOOLS": "duckduckgo,crawl",
        **extra,
    }


def assert_no_network(tmp_path: Path) -> None:
    log = tmp_path / "netguard.log"
    if log.exists():
        pytest.fail("CLI left loopback: " + log.read_text(), pytrace=False)


@pytest.fixture
def cli(tmp_path):
    """Run `python main.py ...` in a subprocess under the network guard; returns a runner."""
    import subprocess

    def run(*args, input=None, env=None, data_dir=None, timeout=120, check_guard=True):
        e = cli_env(tmp_path, NO_COLOR="1", **({"SLEUTH_DATA_DIR": str(data_dir)} if data_dir else {}))
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
        if check_guard:
            assert_no_network(tmp_path)
        return proc

    return run


@pytest.fixture
def web():
    """The fixture wiki (tests/fixtures/web) and a fake DuckDuckGo on 127.0.0.1 (tests/localweb.py)."""
    from localweb import LocalWeb

    with LocalWeb(FIXTURE_WEB) as w:
        yield w


# A made-up manual of a few notes that the newcomer and report tests research (ingest_notes).
QUILLWORT_NOTES = {
    "press.md": "# Quillwort press\n\nThe Quillwort press squeezes fibre mats between two heated drums.\n\n"
    "## Settings\n\nThe default drum gap of the Quillwort press is 4 millimetres.\n",
    "drums.md": "# Quillwort drums\n\nThe Quillwort press drums are cast in bronze and heated by steam.\n",
    "pump.md": "# Quillwort pump\n\nThe brine pump of the Quillwort press runs at level 7 by default.\n",
    "history.md": "# Quillwort history\n\nThe first Quillwort press was built in a harbour workshop.\n",
}


def ingest_notes(tmp_path: Path, cli, notes: dict[str, str]) -> None:
    """Write `notes` (file name -> text) into tmp_path/notes and ingest the folder through the CLI."""
    folder = tmp_path / "notes"
    folder.mkdir(exist_ok=True)
    for name, text in notes.items():
        (folder / name).write_text(text)
    done = cli("kb", "ingest", str(folder))
    assert done.returncode == 0, done.stderr
