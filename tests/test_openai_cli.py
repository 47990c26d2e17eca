"""`--engine openai` as a user runs it: the CLI in a subprocess against a fake OpenAI-compatible
server and the local web. The same paths against a real model: tests/test_local_model.py."""

from __future__ import annotations

import json

from conftest import web_env
from openai_fake import FakeOpenAI, Reply, kind_of, prompt_of

QUESTION = "Were Rolf Amsel and Ned Marlow from the same country?"
ANALYSIS = {
    "extracted_info": [{"fact": "Rolf Amsel is a Vestian director.", "source": 1}],
    "assessment": "partial",
    "confidence_score": 0.4,
    "suggestions_for_next_step": [],
    "new_potential_urls": [],
    "inconsistencies_found": "",
}


def scripted(body):
    """A well-behaved model: searches once per distinct query, then reports."""
    kind = kind_of(body)
    if kind == "decide":
        prompt = prompt_of(body)
        if "(nothing yet)" in prompt:
            return json.dumps({"next_action": "search_duckduckgo", "query_or_url": "Rolf Amsel", "reasoning": "a"})
        if "Ned Marlow" not in prompt.split("Research so far")[1].split("What has been found")[0]:
            return json.dumps({"next_action": "search_duckduckgo", "query_or_url": "Ned Marlow", "reasoning": "b"})
        return json.dumps({"next_action": "send_to_hitl", "query_or_url": "", "reasoning": "enough"})
    if kind == "analyze":
        return "<think>Source 1 says he is Vestian.</think>\n```json\n" + json.dumps(ANALYSIS) + "\n```"
    return "Both were Vestian [1]."


def test_research_through_an_openai_compatible_server(cli, web):
    with FakeOpenAI(scripted, models=("local-model",)) as fake:
        proc = cli("--json", "--engine", "openai", "--base-url", fake.url, QUESTION, env=web_env(web))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["engine"] == "openai" and data["model"] == "local-model"
    assert data["stop_reason"] == "decided" and data["answer"].startswith("Both were Vestian [1].")
    assert data["llm_fallbacks"] == 0
    sent = fake.total_usage()
    assert data["tokens"]["calls"] == len(fake.usages) == 6  # 3 decisions, 2 analyses, 1 report
    assert (data["tokens"]["prompt"], data["tokens"]["output"]) == (sent["prompt"], sent["output"])
    assert data["cost_usd"] is None  # a local server's model has no price: unknown, not guessed


def test_auto_picks_the_server_says_so_and_the_footer_names_model_and_cost(cli, web):
    with FakeOpenAI(scripted, models=("local-model",)) as fake:
        proc = cli(QUESTION, env={**web_env(web), "OPENAI_BASE_URL": fake.url})
    assert proc.returncode == 0, proc.stderr
    assert f"engine: openai (server {fake.url}" in proc.stderr
    assert "engine openai (local-model) \u00b7 cost unknown" in proc.stdout


def test_garbage_from_the_model_falls_back_and_is_counted(cli, web):
    with FakeOpenAI(lambda body: "Sure, I can help with research!", models=("m",)) as fake:
        proc = cli(
            "--json", "--engine", "openai", "--base-url", fake.url, "--max-iterations", "2", QUESTION, env=web_env(web)
        )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    decide_analyze = [k for k in fake.kinds() if k != "report"]
    assert len(decide_analyze) == 2 * data["llm_fallbacks"]  # each failed step: one try and one repair
    assert data["llm_fallbacks"] >= 3 and data["answer"]  # the offline engine answered those steps
    assert data["tokens"]["calls"] == len(fake.requests)  # the wasted tokens are still counted


def test_max_cost_ends_the_round_with_a_report(cli, web):
    # A price for the unknown model (SLEUTH_PRICE) makes the cost known: $1000 per million tokens.
    env = {**web_env(web), "SLEUTH_PRICE": "1000,1000"}
    with FakeOpenAI(scripted, models=("m",)) as fake:
        proc = cli("--engine", "openai", "--base-url", fake.url, "--max-cost", "0.01", QUESTION, env=env)
        data_proc = cli("--json", "--engine", "openai", "--base-url", fake.url, "--max-cost", "0.01", QUESTION, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "stopped: budget used up" in proc.stdout and "est. cost $" in proc.stdout
    data = json.loads(data_proc.stdout)
    assert data["stop_reason"] == "budget" and data["iterations"] == 1  # stopped after the first step
    sent = fake.usages[-3:]  # decide, analyze, report of the JSON run
    expected = sum(u["prompt_tokens"] + u["completion_tokens"] for u in sent) * 1000 / 1e6
    assert abs(data["cost_usd"] - expected) < 1e-9
    assert data["answer"]


def test_batch_lines_carry_model_and_fallbacks(cli, web):
    with FakeOpenAI(scripted, models=("local-model",)) as fake:
        proc = cli(
            "batch",
            "--engine",
            "openai",
            "--base-url",
            fake.url,
            "--jobs",
            "2",
            input=f"{QUESTION}\n{QUESTION}\n",
            env=web_env(web),
        )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert len(lines) == 2
    assert all(x["model"] == "local-model" and x["llm_fallbacks"] == 0 and x["answer"] for x in lines)


def test_unreachable_server_still_ends_with_an_offline_report(cli, web):
    proc = cli(
        "--json",
        "--engine",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--max-iterations",
        "1",
        QUESTION,
        env={**web_env(web), "SLEUTH_LLM_TIMEOUT": "2"},
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] and data["llm_fallbacks"] == 3 and data["tokens"]["calls"] == 0  # decide, analyze, report


def test_bad_base_url_is_a_clear_error(cli):
    proc = cli("--engine", "openai", "--base-url", "localhost:11434", "question")
    assert proc.returncode == 2 and "--base-url must be an http(s) URL" in proc.stderr
    proc = cli("--engine", "openai", "question")
    assert proc.returncode == 2 and "OPENAI_API_KEY" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_rate_limited_server_is_retried_through_the_cli(cli, web):
    seen = []

    def responder(body):
        seen.append(1)
        if len(seen) == 1:
            return Reply("rate limited", status=429, headers={"retry-after-ms": "10"})
        return scripted(body)

    with FakeOpenAI(responder, models=("m",)) as fake:
        proc = cli("--json", "--engine", "openai", "--base-url", fake.url, QUESTION, env=web_env(web))
    data = json.loads(proc.stdout)
    assert data["llm_fallbacks"] == 0 and fake.requests[0]["body"] == fake.requests[1]["body"]
