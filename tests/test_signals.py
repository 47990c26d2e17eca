"""SIGTERM takes the Ctrl-C path, and a closed stdout stops a batch: real processes, real signals,
real pipes, against the fake Gemini endpoint (tests/gemini_fake.py) whose answers a test can hold."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

from conftest import ROOT, assert_no_network, cli_env
from gemini_fake import FakeGemini, prompt_of

from sleuth.utils.cli.output import EXIT_PIPE_CLOSED, EXIT_TERMINATED


class HeldGemini(FakeGemini):
    """Answers at once, except for the questions named in `held`, whose calls wait for `release`."""

    def __init__(self, *held: str):
        self.release = threading.Event()
        self.calls: list[str] = []

        def responder(body, path):
            prompt = prompt_of(body)
            self.calls.append(path)
            if any(q in prompt for q in held):
                self.release.wait(60)
            if "Decision Node" in prompt:
                return 200, json.dumps({"next_action": "send_to_hitl", "query_or_url": "", "reasoning": "enough"})
            return 200, "Okapis live in the forests of central Africa."

        super().__init__(responder)


def start(tmp_path, fake, *args):
    env = cli_env(tmp_path, GEMINI_API_KEY="k", GEMINI_BASE_URL=fake.url, SLEUTH_TOOLS="duckduckgo", NO_COLOR="1")
    return subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), *args],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def feed(proc, lines: list[str]) -> None:
    proc.stdin.write("".join(line + "\n" for line in lines))
    proc.stdin.close()
    proc.stdin = None  # communicate() must not touch the closed pipe


def sessions(tmp_path) -> dict[str, dict]:
    folder = tmp_path / "data" / "sessions"
    out = {}
    for f in folder.glob("*.json") if folder.is_dir() else []:
        data = json.loads(f.read_text())
        out[data["original_query"]] = data
    return out


def wait_for_line(stream, text: str) -> str:
    """Read `stream` line by line until one holds `text` (EOF ends the wait: the process is gone)."""
    seen = []
    for line in stream:
        seen.append(line)
        if text in line:
            return "".join(seen)
    raise AssertionError(f"{text!r} never came; the process wrote: {''.join(seen)!r}")


def test_sigterm_prints_the_finished_answers_and_leaves_the_one_in_flight_resumable(tmp_path):
    questions = [f"Okapi question {i}?" for i in range(1, 7)]
    with HeldGemini("Okapi question 1?") as fake:
        proc = start(tmp_path, fake, "batch", "--jobs", "4", "-q")
        feed(proc, questions)
        # Questions 2-6 finish; question 1, first in the output order, is held: nothing is printed yet.
        sessions_dir = tmp_path / "data" / "sessions"
        while sum(s["status"] == "done" for s in sessions(tmp_path).values()) < 5:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)  # polling the session files, as tests/test_resume.py does
        proc.send_signal(signal.SIGTERM)
        wait_for_line(proc.stderr, "stopping")  # the batch took the Ctrl-C path...
        fake.release.set()  # ...and the held question may now reach its next step, where it stops
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_TERMINATED, err
    printed = {json.loads(line)["query"]: json.loads(line) for line in out.splitlines()}
    assert sorted(printed) == questions[1:]  # the five finished answers, though question 1 never finished
    assert all(r["answer"] and r["engine"] == "gemini" for r in printed.values())
    finished = err.split("finished ids:")[1].splitlines()[0]
    assert sorted(finished.replace(",", " ").split()) == ["2", "3", "4", "5", "6"] and "Traceback" not in err
    held = sessions(tmp_path)["Okapi question 1?"]
    assert held["status"] == "interrupted" and not held["final_answer"]
    assert sessions_dir.is_dir()

    with HeldGemini() as fake:  # the interrupted question resumes and finishes
        resumed = start(tmp_path, fake, "--json", "--resume", held["session_id"])
        out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, err
    assert json.loads(out)["answer"] and sessions(tmp_path)["Okapi question 1?"]["status"] == "done"
    assert_no_network(tmp_path)


def test_sigterm_on_a_single_question_saves_it_resumable_with_status_143(tmp_path):
    with HeldGemini("Okapi question?") as fake:
        proc = start(tmp_path, fake, "--json", "Okapi question?")
        proc.stdin.close()
        proc.stdin = None
        while not fake.calls:  # the first LLM call is in flight
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        fake.release.set()
    assert proc.returncode == EXIT_TERMINATED, err
    assert out == "" and "resume with:" in err and "--resume" in err and "Traceback" not in err
    assert sessions(tmp_path)["Okapi question?"]["status"] == "interrupted"


def test_a_closed_stdout_stops_the_batch_and_saves_what_is_in_flight(tmp_path):
    questions = [f"Okapi question {i}?" for i in range(1, 9)]
    with HeldGemini(*questions[2:]) as fake:  # questions 1 and 2 finish; 3 and 4 start and wait
        proc = start(tmp_path, fake, "--jobs", "2", "-q")
        feed(proc, questions)
        first = proc.stdout.readline()  # `| head -1`: one line, then the reader is gone
        proc.stdout.close()
        fake.release.set()  # questions 3 and 4 finish; writing 3's answer finds the pipe closed
        proc.stdout = None
        _, err = proc.communicate(timeout=60)
    assert json.loads(first)["query"] == "Okapi question 1?"
    assert proc.returncode == EXIT_PIPE_CLOSED, err
    assert "Traceback" not in err and "Exception ignored" not in err and "BrokenPipe" not in err
    saved = sessions(tmp_path)
    # Not the eight questions: 1-4, and at most the two that took the freed places before the
    # answer to 3 met the closed pipe; nothing starts after that.
    assert len(saved) <= 6, sorted(saved)
    statuses = {q: s["status"] for q, s in saved.items()}
    # In flight: saved and resumable (awaiting_feedback: the report was written, the flow stopped after it).
    assert set(statuses.values()) <= {"done", "interrupted", "awaiting_feedback"}, statuses
    assert_no_network(tmp_path)
