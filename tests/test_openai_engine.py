"""The OpenAI-compatible engine through the real `openai` client, against a fake server on
127.0.0.1: the structured-output ladder, tolerant parsing, repair, retries, timeouts, streaming,
usage, cost and the context budget."""

from __future__ import annotations

import json

import openai
import pytest
from fakes import reading
from openai_fake import FakeOpenAI, Reply, kind_of, prompt_of, response_format

from sleuth.utils.engine.context import CHAT_OVERHEAD, estimate_tokens
from sleuth.utils.engine.offline import OfflineEngine
from sleuth.utils.engine.openai import OpenAIEngine
from sleuth.utils.engine.parse import ParseError, ThinkFilter, extract_json
from sleuth.utils.engine.protocol import EngineContext
from sleuth.utils.engine.resilient import ResilientEngine
from sleuth.utils.errors import EngineError
from sleuth.utils.research.loopdata import Choice, Fact, PendingStep, Source, ToolItem

DECISION = {"next_action": "search_duckduckgo", "query_or_url": "sleuth research agent", "reasoning": "start"}
ANALYSIS = {
    "extracted_info": [{"fact": "Sleuth is a CLI.", "source": 1}],
    "assessment": "ok",
    "confidence_score": 0.5,
    "suggestions_for_next_step": [],
    "new_potential_urls": [],
    "inconsistencies_found": "",
}
CHOICE = Choice("search_duckduckgo", "sleuth research agent", "start")
CTX = EngineContext("What is Sleuth?", actions=["search_duckduckgo", "send_to_hitl"], threshold=0.7, steps_left=8)
ITEMS = [ToolItem(source=1, title="Sleuth", url="https://a.example/", text="Sleuth is a CLI.", form="page")]


def engine(url, **kw):
    kw.setdefault("timeout_s", 10)
    kw.setdefault("max_retries", 2)
    return OpenAIEngine(model="fake-model", base_url=url, **kw)


# ---------------------------------------------------------------- tolerant parsing


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps(DECISION),
        "<think>The user wants {something}. I should search.</think>\n" + json.dumps(DECISION),
        "```json\n" + json.dumps(DECISION, indent=2) + "\n```",
        "Sure! Here is my decision:\n" + json.dumps(DECISION) + "\nLet me know if you need more.",
        '{"next_action": "search_duckduckgo", "query_or_url": "sleuth research agent", "reasoning": "start",}',
        '```\n{"next_action": "search_duckduckgo",\n "query_or_url": "sleuth research agent",\n'
        ' "reasoning": "start", }\n```',
        "reasoning about it...</think>" + json.dumps(DECISION),  # the opening tag eaten by the server
    ],
    ids=["plain", "think", "fence", "prose", "trailing-comma", "fence+comma", "close-tag-only"],
)
def test_replies_small_models_send_are_read(reply):
    assert extract_json(reply) == DECISION


def test_braces_and_commas_inside_strings_are_left_alone():
    text = 'Answer: {"a": "x, }", "b": ["{", "y,]"],}'
    assert extract_json(text) == {"a": "x, }", "b": ["{", "y,]"]}


NESTED = '{"a": ' * 3000 + "1" + "}" * 3000  # deeper than Python's JSON reader can go


@pytest.mark.parametrize("reply", ["", "I cannot help with that.", "<think>hmm {not json}</think>", "{broken", NESTED])
def test_no_object_is_a_parse_error(reply):
    with pytest.raises(ParseError):
        extract_json(reply)


def test_think_filter_removes_blocks_split_across_chunks():
    text = "<think>plan: cite [1]</think>Sleuth is a CLI [1]. <thi" + "nk>more</think>Done."
    f = ThinkFilter()
    out = "".join(f.feed(text[i : i + 3]) for i in range(0, len(text), 3)) + f.flush()
    assert out == "Sleuth is a CLI [1]. Done."


# ---------------------------------------------------------------- the structured-output ladder


def test_ladder_steps_down_on_http_500_and_remembers_the_working_mode():
    # What llama-cpp-python's server does: json_schema -> HTTP 500; json_object with a schema works.
    def responder(body):
        if response_format(body) == "json_schema":
            return Reply("Internal Server Error", status=500, headers={"retry-after-ms": "1"})
        return json.dumps(DECISION) if kind_of(body) == "decide" else json.dumps(ANALYSIS)

    warnings = []
    with FakeOpenAI(responder) as fake:
        eng = engine(fake.url, warn=warnings.append)
        first = eng.decide(CTX)
        second = eng.analyze(reading(CTX.query, ITEMS))
        third = eng.decide(CTX)
    modes = [response_format(r["body"]) for r in fake.requests]
    # the client retried the 500 twice, then the engine stepped down once and stayed there
    assert modes == ["json_schema"] * 3 + ["json_object+schema"] * 3
    assert fake.requests[3]["body"]["response_format"]["schema"]["properties"]["next_action"]["enum"]
    assert first.data == CHOICE and third.data == CHOICE
    assert second.data.facts == [Fact("Sleuth is a CLI.", 1, 1.0, 1)]
    assert eng.mode == "json_object+schema"
    assert warnings == ["openai: json_schema refused (HTTP 500); using json_object+schema"]


def test_ladder_reaches_plain_text_with_the_schema_in_the_prompt():
    def responder(body):
        if body.get("response_format"):
            return Reply("response_format is not supported", status=400)
        return "<think>ok</think>```json\n" + json.dumps(DECISION) + "\n```"

    with FakeOpenAI(responder) as fake:
        eng = engine(fake.url)
        res = eng.decide(CTX)
        eng.decide(CTX)
    assert res.data == CHOICE and eng.mode == "text"
    assert [response_format(r["body"]) for r in fake.requests] == [
        "json_schema",
        "json_object+schema",
        "json_object",
        "text",
        "text",
    ]
    assert "JSON schema of the answer" in prompt_of(fake.requests[-1]["body"])
    assert "JSON schema of the answer" not in prompt_of(fake.requests[0]["body"])  # the server had it


def test_invalid_answer_is_repaired_once_quoting_the_error():
    answers = [json.dumps({**DECISION, "next_action": "launch_rockets"}), json.dumps(DECISION)]
    with FakeOpenAI(lambda body: answers.pop(0)) as fake:
        eng = engine(fake.url)
        res = eng.decide(CTX)
    assert res.data == CHOICE and res.usage["calls"] == 2
    repair = prompt_of(fake.requests[1]["body"])
    assert "previous answer was not valid" in repair and "next_action" in repair.split("not valid")[1]
    assert eng.stats["decide"] == {"replies": 2, "valid": 1}


def test_garbage_twice_falls_back_to_the_offline_engine_with_the_tokens_counted():
    with FakeOpenAI(lambda body: "I am a language model and I like turtles.") as fake:
        with pytest.raises(EngineError, match="invalid JSON"):
            engine(fake.url).decide(CTX)
        res = ResilientEngine(engine(fake.url), OfflineEngine()).decide(CTX)
    assert res.fallback and res.engine == "offline" and "no JSON object" in res.error
    assert res.data.action in CTX.actions
    assert res.usage["calls"] == 2 and res.usage["prompt"] == sum(u["prompt_tokens"] for u in fake.usages[-2:])


@pytest.mark.parametrize("status", [429, 503])
def test_rate_limits_and_overload_are_retried(status):
    answers = [Reply("slow down", status=status, headers={"retry-after-ms": "5"}), Reply(json.dumps(DECISION))]
    with FakeOpenAI(lambda body: answers.pop(0)) as fake:
        eng = engine(fake.url)
        res = eng.decide(CTX)
    assert res.data == CHOICE and len(fake.requests) == 2
    assert eng.mode == "json_schema"  # a busy server is not a refusal of the format


def test_timeout_fires_and_the_offline_engine_answers():
    with FakeOpenAI(lambda body: Reply(hang=True)) as fake:
        eng = engine(fake.url, timeout_s=0.3, max_retries=0)
        with pytest.raises(openai.APITimeoutError):
            eng.decide(CTX)
        res = ResilientEngine(eng, OfflineEngine()).decide(CTX)
    assert res.fallback and "Timeout" in res.error


# ---------------------------------------------------------------- report, usage, cost


def test_report_streams_without_think_blocks_and_counts_the_servers_usage():
    text = "<think>Let me cite source 1.</think>Sleuth is a research agent for the terminal [1]."
    chunks = []
    with FakeOpenAI(lambda body: Reply(text, prompt_tokens=321)) as fake:
        eng = engine(fake.url, price=(1.0, 2.0))
        res = eng.report(EngineContext("What is Sleuth?"), on_chunk=chunks.append)
    body = fake.requests[0]["body"]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert len(chunks) > 3 and "".join(chunks) == res.data.text == "Sleuth is a research agent for the terminal [1]."
    sent = fake.usages[0]
    assert res.usage["prompt"] == 321 and res.usage["output"] == sent["completion_tokens"]
    assert res.usage["cost_usd"] == pytest.approx((321 * 1.0 + sent["completion_tokens"] * 2.0) / 1e6)


def test_unknown_price_is_reported_as_unknown():
    with FakeOpenAI(lambda body: json.dumps(DECISION)) as fake:
        res = engine(fake.url).decide(CTX)
    assert res.usage["cost_usd"] is None and res.usage["prompt"] > 0


def test_the_servers_first_model_is_used_when_none_is_named():
    with FakeOpenAI(lambda body: json.dumps(DECISION), models=("gemma-3-270m", "other")) as fake:
        eng = OpenAIEngine(base_url=fake.url, timeout_s=5)
        eng.decide(CTX)
    assert eng.model == "gemma-3-270m" and fake.requests[0]["body"]["model"] == "gemma-3-270m"


def test_openai_engine_needs_a_key_or_a_server():
    with pytest.raises(EngineError, match="OPENAI_API_KEY"):
        OpenAIEngine()


# ---------------------------------------------------------------- the context budget


def big_ctx() -> EngineContext:
    page = " ".join(f"Sentence {i} about Sleuth, the research agent, and 1234 other things." for i in range(3000))
    facts = [Fact(f"Fact {i}: Sleuth was written in 20{i % 100:02d}.", 1, i / 500) for i in range(500)]
    history = [
        {"step": i, "action": "search_duckduckgo", "query_or_url": f"query {i}", "ok": True, "results": 3}
        for i in range(40)
    ]
    items = [
        ToolItem(source=n, title=f"Page {n}", url=f"https://a.example/{n}", text=page, form="page") for n in (1, 2, 3)
    ]
    return EngineContext(
        CTX.query,
        actions=CTX.actions,
        step=PendingStep(41, Choice("search_duckduckgo", CTX.query), items),
        facts=facts,
        history=history,
        feedback=["Look for the release year. " * 30],
        candidate_urls=[{"url": f"https://b.example/{i}"} for i in range(50)],
        visited_urls=[f"https://c.example/{i}" for i in range(50)],
        sources=[Source(n, f"Page {n}", f"https://a.example/{n}") for n in range(1, 200)],
        analyzer={"assessment": "partial " * 200},
    )


@pytest.mark.parametrize("window", [1024, 2048, 8192])
def test_prompts_never_exceed_the_context_window(window):
    def responder(body):
        return {"decide": json.dumps(DECISION), "analyze": json.dumps(ANALYSIS)}.get(kind_of(body), "Sleuth [1].")

    ctx = big_ctx()
    with FakeOpenAI(responder) as fake:
        eng = engine(fake.url, context_tokens=window)
        eng.decide(ctx)
        eng.analyze(ctx)
        eng.report(ctx)
        eng.report(ctx, on_chunk=lambda c: None)
    assert len(fake.requests) == 4
    for r in fake.requests:
        body = r["body"]
        prompt = prompt_of(body)
        assert estimate_tokens(prompt) + CHAT_OVERHEAD + body["max_tokens"] <= window
        assert "What is Sleuth?" in prompt  # the question always survives
    analyze = prompt_of(fake.requests[1]["body"])
    assert all(f"[{n}] Page {n}" in analyze for n in (1, 2, 3))  # every page gets a share
    assert "\u2026" in analyze  # long page text was trimmed
    decide = prompt_of(fake.requests[0]["body"])
    assert "Fact 499" in decide  # the most relevant facts come first


def test_estimator_over_counts_ordinary_text():
    text = "Rolf Amsel (born March 3, 1967) is a Vestian director, screenwriter and producer."
    words = len(text.split())
    assert estimate_tokens(text) >= words + 6  # digits and punctuation count on their own
