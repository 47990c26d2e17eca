"""--time-limit and --max-tokens bound every research round, LLM calls included: a slow LLM's call
in flight is abandoned, no new step starts, and the report is written anyway (offline)."""

from __future__ import annotations

import json
import threading

from conftest import assert_no_network
from gemini_fake import FakeGemini, prompt_of

DECISION = {"next_action": "search_duckduckgo", "query_or_url": "okapi", "reasoning": "look"}
ANALYSIS = {
    "extracted_info": [],
    "assessment": "nothing yet",
    "confidence_score": 0.1,
    "suggestions_for_next_step": [],
    "new_potential_urls": [],
    "inconsistencies_found": "",
}


def slow_gemini(release: threading.Event):
    """A Gemini endpoint whose every answer takes until the test ends (far beyond any limit)."""

    def responder(body, path):
        release.wait(60)
        return 200, json.dumps(DECISION)

    return FakeGemini(responder)


def session(data_dir, sid) -> dict:
    return json.loads((data_dir / "sessions" / f"{sid}.json").read_text())


def test_a_slow_llm_is_abandoned_at_the_time_limit_and_the_report_is_written(cli, tmp_path):
    release = threading.Event()
    with slow_gemini(release) as fake:
        env = {"GEMINI_API_KEY": "k", "GEMINI_BASE_URL": fake.url, "SLEUTH_TOOLS": "duckduckgo"}
        proc = cli("--json", "--time-limit", "1", "What is an okapi?", env=env, data_dir=tmp_path / "d")
        release.set()
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["stop_reason"] == "time_limit" and out["answer"]
    saved = session(tmp_path / "d", out["session_id"])
    phases = [f["phase"] for f in saved["llm_fallbacks"]]
    assert phases[0] == "decision" and phases[-1] == "report"  # both answered offline after the abandon
    assert "TimeLimitExceeded" in saved["llm_fallbacks"][0]["error"], saved["llm_fallbacks"]  # abandoned, not failed
    assert saved["iteration_count"] == 0  # no tool step started once the time was spent
    assert_no_network(tmp_path)


def test_each_batch_question_gets_its_own_time_limit(cli, tmp_path):
    release = threading.Event()
    with slow_gemini(release) as fake:
        env = {"GEMINI_API_KEY": "k", "GEMINI_BASE_URL": fake.url, "SLEUTH_TOOLS": "duckduckgo"}
        proc = cli("batch", "--jobs", "2", "--time-limit", "1", input="What is an okapi?\nWho wrote Dune?\n", env=env)
        release.set()
    assert proc.returncode == 0, proc.stderr
    recs = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [r["stop_reason"] for r in recs] == ["time_limit", "time_limit"] and all(r["answer"] for r in recs)


def test_max_tokens_ends_the_round_with_budget(cli, tmp_path):
    def responder(body, path):  # every call costs 18 tokens (tests/gemini_fake.py)
        prompt = prompt_of(body)
        if "Decision Node" in prompt:
            return 200, json.dumps(DECISION)
        if "Analyzer Node" in prompt:
            return 200, json.dumps(ANALYSIS)
        return 200, "An okapi is a giraffid."

    with FakeGemini(responder) as fake:
        env = {"GEMINI_API_KEY": "k", "GEMINI_BASE_URL": fake.url, "SLEUTH_TOOLS": "duckduckgo"}
        proc = cli("--json", "--max-tokens", "15", "What is an okapi?", env=env, data_dir=tmp_path / "d")
    assert proc.returncode == 1, proc.stderr  # its one web search failed (no network here): status 1
    out = json.loads(proc.stdout)
    saved = session(tmp_path / "d", out["session_id"])
    assert out["stop_reason"] == "budget" and "--max-tokens 15" in saved["stop_detail"]
    assert out["tokens"]["calls"] == 2  # decide (18 tokens >= 15: no further decision), report
    assert out["answer"] == "An okapi is a giraffid."
