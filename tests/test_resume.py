"""Kill a run mid-way (SIGINT, SIGKILL) and resume it: the session on disk is always whole."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest
from conftest import FIXTURE_WEB, ROOT, assert_no_network, cli_env, web_env
from localweb import LocalWeb

QUESTION = "What office did the actress who played Dora Penhallow in the film Whisper and Wait later hold?"


@pytest.fixture
def slow_web():
    with LocalWeb(FIXTURE_WEB, page_delay=0.4) as w:
        yield w


def env_for(tmp_path, web):
    return cli_env(tmp_path, **web_env(web, SLEUTH_MAX_ITERATIONS="6"))


def wait_for_progress(tmp_path, proc, steps=2, timeout=60.0):
    """Poll the session file until the run has taken `steps` steps (bounded)."""
    deadline = time.monotonic() + timeout
    sessions = tmp_path / "data" / "sessions"
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run finished before it could be interrupted"
        for f in sessions.glob("*.json") if sessions.is_dir() else []:
            data = json.loads(f.read_text())  # never a torn file: writes are atomic
            if data["iteration_count"] >= steps:
                return data["session_id"]
        time.sleep(0.05)
    pytest.fail("the run made no progress")


def steps_saved(tmp_path) -> int:
    """The most steps any saved session has taken (0 before the first save)."""
    sessions = tmp_path / "data" / "sessions"
    files = sessions.glob("*.json") if sessions.is_dir() else []
    return max((json.loads(f.read_text())["iteration_count"] for f in files), default=0)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_killed_run_resumes(tmp_path, slow_web, sig):
    env = env_for(tmp_path, slow_web)
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "--json", QUESTION],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    held, release = threading.Event(), threading.Event()

    def hold_after_two_steps():  # a page asked for after step 2 waits: the run cannot end before the signal
        if steps_saved(tmp_path) >= 2:
            held.set()
            release.wait(60)

    slow_web.before_page = hold_after_two_steps
    sid = wait_for_progress(tmp_path, proc)
    assert held.wait(60), "no step after the second asked for a page"
    proc.send_signal(sig)
    release.set()
    out, err = proc.communicate(timeout=60)
    saved = json.loads((tmp_path / "data" / "sessions" / f"{sid}.json").read_text())
    if sig == signal.SIGINT:
        assert proc.returncode == 130
        assert f"--resume {sid}" in err
        assert saved["status"] == "interrupted"
    else:
        assert proc.returncode == -signal.SIGKILL
        assert saved["status"] == "running"
    assert out == ""  # no half report
    assert saved["final_answer"] is None and saved["iteration_count"] >= 2
    done_before = saved["iteration_count"]

    resumed = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "--json", "--resume", sid],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    data = json.loads(resumed.stdout)
    assert data["session_id"] == sid and data["stop_reason"]
    assert data["iterations"] >= done_before
    final = json.loads((tmp_path / "data" / "sessions" / f"{sid}.json").read_text())
    assert final["status"] == "done" and final["final_answer"]
    assert final["research_history"][:done_before] == saved["research_history"][:done_before]
    assert_no_network(tmp_path)


def test_ctrl_c_stops_a_batch_cleanly_and_reports_finished_ids(tmp_path, slow_web):
    env = env_for(tmp_path, slow_web)
    questions = "".join(f'{{"id": "q{i}", "query": "{QUESTION} ({i})"}}\n' for i in range(6))
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "--batch", "--jobs", "2"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    proc.stdin.write(questions)
    proc.stdin.close()
    proc.stdin = None  # communicate() must not touch the closed pipe
    wait_for_progress(tmp_path, proc, steps=2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "batch interrupted; finished ids:" in err
    printed = [json.loads(x)["id"] for x in out.splitlines()]
    finished = err.split("finished ids:")[1].strip().splitlines()[0]
    assert all(i in finished for i in printed)  # every answer printed was reported finished
    states = [json.loads(f.read_text())["status"] for f in (tmp_path / "data" / "sessions").glob("*.json")]
    assert "interrupted" in states  # the jobs in flight left resumable sessions
    assert len(states) < 6  # and no new question was started after Ctrl-C
