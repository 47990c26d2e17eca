"""Parallel batch questions share one Gemini client: with a healthy endpoint no answer falls back to
the offline engine, whatever --jobs is (a client built twice by racing jobs was closed under the
other job's request: "Cannot send a request, as the client has been closed")."""

from __future__ import annotations

import json

from gemini_fake import FakeGemini, prompt_of

QUESTIONS = [f"What is fact number {i} about okapis?" for i in range(8)]


def responder(body, path):
    prompt = prompt_of(body)
    if "Decision Node" in prompt:
        return 200, json.dumps({"next_action": "send_to_hitl", "query_or_url": "", "reasoning": "enough"})
    return 200, "Okapis live in the forests of central Africa."


def test_a_batch_with_four_jobs_against_a_healthy_gemini_never_falls_back(cli, tmp_path):
    fallbacks, engines = [], []
    with FakeGemini(responder) as fake:
        env = {"GEMINI_API_KEY": "k", "GEMINI_BASE_URL": fake.url, "SLEUTH_TOOLS": "duckduckgo"}
        for run in range(4):
            proc = cli(
                "batch", "--jobs", "4", input="\n".join(QUESTIONS) + "\n", env=env, data_dir=tmp_path / f"d{run}"
            )
            assert proc.returncode == 0, proc.stderr
            recs = [json.loads(x) for x in proc.stdout.splitlines()]
            assert len(recs) == len(QUESTIONS)
            fallbacks += [r["llm_fallbacks"] for r in recs]
            engines += [r["engine"] for r in recs]
    assert sum(fallbacks) == 0, fallbacks
    assert set(engines) == {"gemini"}
