"""No terminal escape from a page or a file reaches the screen: every command that prints web or
file text (fetch, kb ingest, kb search, the research report, sessions show/list), on a pipe and
on a pseudo-terminal. The payloads: clear screen, an OSC 8 hyperlink, BEL, and a C1 CSI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from conftest import ROOT, cli_env

from tests.webfixtures import LocalServer, send

EVIL = "Evil \x1b[2J\x1b[Hheading \x1b]8;;http://evil.example/\x07click me\x1b]8;;\x07 ring\x07 \x9b2J done"
MARKERS = ("\x1b[2J", "\x1b]8;;http://evil", "\x07", "\x9b")
TEXT = f"{EVIL}\n\nThe okapi is a giraffid of the Congo rainforest. {EVIL}\n"


def assert_clean(output: str) -> None:
    for m in MARKERS:
        assert m not in output, f"{m!r} reached the terminal"


def run_pipe(args, env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "main.py"), *args],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, input="",
    )  # fmt: skip


def run_pty(args, env, answer_feedback=False) -> str:
    child = pexpect.spawn(
        sys.executable, [str(ROOT / "main.py"), *args], env={**env, "TERM": "xterm-256color"},
        cwd=str(ROOT), dimensions=(40, 120), encoding="utf-8", codec_errors="replace", timeout=120,
        use_poll=True,
    )  # fmt: skip
    seen = ""
    if answer_feedback:
        child.expect("Feedback")
        seen = child.before + child.after
        child.sendline("")
    seen += child.read()
    child.close()
    return seen


@pytest.fixture
def env(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "okapi.md").write_text(f"# Okapi {EVIL}\n\n{TEXT}")
    (notes / "evil\x1b[2J\x07.xyz").write_bytes(b"\x00\x01 not a document, named with escapes \x00")
    e = cli_env(tmp_path, SLEUTH_ALLOW_PRIVATE_HOSTS="1", SLEUTH_CRAWL_INTERVAL="0")
    ingest = run_pipe(["kb", "ingest", str(notes)], e)
    assert ingest.returncode == 0, ingest.stderr
    assert_clean(ingest.stdout + ingest.stderr)
    assert "skipped 1 file" in ingest.stderr
    return e


@pytest.fixture
def evil_site():
    routes = {
        "/robots.txt": lambda req: send(req, 200, "", "text/plain"),
        "/okapi.txt": lambda req: send(req, 200, TEXT, "text/plain; charset=utf-8"),
    }
    with LocalServer(routes) as s:
        yield s


@pytest.mark.parametrize("terminal", ["pipe", "pty"])
def test_fetch_prints_page_text_without_escapes(terminal, env, evil_site):
    args = ["fetch", evil_site.url("/okapi.txt")]
    out = run_pipe(args, env).stdout if terminal == "pipe" else run_pty(args, env)
    assert "click me" in out and "giraffid" in out
    assert_clean(out)


@pytest.mark.parametrize("terminal", ["pipe", "pty"])
def test_kb_search_prints_titles_and_passages_without_escapes(terminal, env):
    args = ["kb", "search", "okapi giraffid"]
    out = run_pipe(args, env).stdout if terminal == "pipe" else run_pty(args, env)
    assert "giraffid" in out and "Okapi Evil" in out
    assert_clean(out)


@pytest.mark.parametrize("terminal", ["pipe", "pty"])
def test_the_report_and_the_sessions_commands_print_no_escapes(terminal, env):
    question = "What is the okapi? \x1b[2J"
    args = ["--tools", "kb", question]
    if terminal == "pipe":
        proc = run_pipe(args, env)
        out = proc.stdout + proc.stderr
    else:
        out = run_pty(args, env, answer_feedback=True)
    assert "giraffid" in out
    assert_clean(out)
    sessions = json.loads(run_pipe(["sessions", "list", "--json"], env).stdout.splitlines()[0])
    sid = sessions["session_id"]
    for sub in (["sessions", "show", sid], ["sessions", "list"]):
        shown = run_pipe(sub, env).stdout if terminal == "pipe" else run_pty(sub, env)
        assert sid in shown or "giraffid" in shown
        assert_clean(shown)


def test_json_output_escapes_control_characters(env):
    proc = run_pipe(["--tools", "kb", "--json", "What is the okapi?"], env)
    assert proc.returncode == 0, proc.stderr
    assert_clean(proc.stdout)
    assert "giraffid" in json.loads(proc.stdout)["answer"]


def test_the_payload_really_is_in_the_knowledge_base(env, tmp_path):
    """The tests above would pass vacuously if ingestion dropped the escapes: it keeps them as data."""
    proc = run_pipe(["kb", "search", "okapi giraffid", "--json"], env)
    hits = json.loads(proc.stdout)["hits"]
    assert any("\x1b[2J" in h["text"] or "\x1b[2J" in (h.get("title") or "") for h in hits)
    assert Path(tmp_path / "notes" / "okapi.md").exists()
