"""The research loop end to end with a scripted LLM: every route, every stop reason, feedback,
bad LLM output, and the guarantee that a run cannot loop forever."""

from __future__ import annotations

import json

import pytest
from fakes import FakeSearch, FakeTools, ScriptedEngine, make_rt

from sleuth.flow import run_flow
from sleuth.utils.engine.offline import OfflineEngine
from sleuth.utils.engine.protocol import BaseEngine
from sleuth.utils.engine.resilient import LOW_CONFIDENCE_CAP, ResilientEngine
from sleuth.utils.research.state import new_shared, saved_form


def run(engine, tmp_path=None, query="What is Sleuth?", fake_tools=None, feedback=None, **kw):
    rt = make_rt(engine, tmp_path=tmp_path, fake_tools=fake_tools, feedback=feedback, **kw)
    shared = new_shared(query, engine=engine.name)
    run_flow(rt, shared, "query")
    return shared, rt


def test_every_action_reaches_its_node_and_returns_to_the_analyzer():
    engine = ScriptedEngine(
        [
            ("search_duckduckgo", "sleuth agent"),
            ("search_google", "sleuth agent google"),
            ("crawl_url", "https://example.org/page https://example.org/other"),
            ("search_kb", "sleuth notes"),
            ("send_to_hitl", ""),
        ],
        confidences=[0.1, 0.2, 0.3, 0.4],
    )
    shared, rt = run(engine, google_api_key="k", google_cse_id="cx")
    hist = shared["research_history"]
    assert [h["action"] for h in hist] == ["search_duckduckgo", "search_google", "crawl_url", "search_kb"]
    assert [h["tool_used"] for h in hist] == ["duckduckgo", "google", "crawl", "kb"]
    assert all(h["ok"] for h in hist)
    assert len(shared["analyzer_reports"]) == 4 and len(engine.analyze_calls) == 4
    assert rt.tools.fetcher().calls == [["https://example.org/page", "https://example.org/other"]]
    assert shared["stop_reason"] == "decided"
    assert shared["status"] == "done"
    kinds = {s.tool: s.kind for s in shared["sources"]}
    assert kinds["kb"] == "internal" and kinds["crawl"] == "external"
    # the answer's [1] resolves to a listed source; source 1 does not say "the answer is here": flagged
    assert "[1?]" in shared["answer"] and "## Key sources" in shared["final_answer"]
    assert "\n- [1] " in shared["final_answer"]
    assert shared["token_usage"]["calls"] == 5 and shared["token_usage"]["total"] == 75


def test_confident_stop():
    engine = ScriptedEngine([("search_duckduckgo", "q1"), ("search_duckduckgo", "q2")], confidences=[0.9])
    shared, _ = run(engine)
    assert shared["stop_reason"] == "confident"
    assert shared["iteration_count"] == 1


def test_confidence_threshold_flag_is_honoured():
    engine = ScriptedEngine([("search_duckduckgo", f"q{i}") for i in range(10)], confidences=[0.5, 0.6, 0.75, 0.8])
    shared, _ = run(engine, confidence=0.79)
    assert shared["stop_reason"] == "confident" and shared["iteration_count"] == 4


def test_budget_stop():
    engine = ScriptedEngine(
        [("search_duckduckgo", f"query number {i}") for i in range(50)], confidences=[0.1, 0.2, 0.3, 0.4, 0.5]
    )
    shared, _ = run(engine, max_iterations=3)
    assert shared["stop_reason"] == "budget" and shared["iteration_count"] == 3


def test_same_query_again_is_a_loop():
    # An LLM that always answers search_duckduckgo with the same query.
    engine = ScriptedEngine([("search_duckduckgo", "the same query")])
    shared, _ = run(engine, max_iterations=50)
    assert shared["stop_reason"] == "loop_repeat"
    assert shared["iteration_count"] == 1
    assert "the same query" in shared["stop_detail"]


def test_repeat_detection_normalizes_case_and_punctuation():
    engine = ScriptedEngine([("search_duckduckgo", "Pricing in Europe"), ("search_duckduckgo", "pricing  in europe?")])
    shared, _ = run(engine)
    assert shared["stop_reason"] == "loop_repeat" and shared["iteration_count"] == 1


def test_revisited_url_is_a_loop():
    engine = ScriptedEngine([("crawl_url", "https://example.org/a"), ("crawl_url", "https://www.example.org/a/#top")])
    shared, _ = run(engine)
    assert shared["stop_reason"] == "loop_revisit"
    assert shared["iteration_count"] == 1


def test_stall_stop_when_confidence_does_not_improve():
    engine = ScriptedEngine([("search_duckduckgo", f"q{i}") for i in range(20)], confidences=[0.3, 0.3, 0.2, 0.3])
    shared, _ = run(engine, max_iterations=20)
    assert shared["stop_reason"] == "stall"
    assert shared["iteration_count"] == 4


class RateLimitedSearch(FakeSearch):
    """Every search fails, though the network is up (a network failure ends the web for the round)."""

    def search(self, tool, query):
        got = super().search(tool, query)
        got.errors = [{**e, "kind": "rate_limit"} for e in got.errors]
        return got


def test_failing_tools_stop_and_are_recorded():
    engine = ScriptedEngine([("search_duckduckgo", f"q{i}") for i in range(20)])
    shared, _ = run(engine, fake_tools=FakeTools(search=RateLimitedSearch(fail=True)), max_iterations=20)
    assert shared["stop_reason"] == "tool_failures"
    assert shared["iteration_count"] == 3
    assert all(not h["ok"] and "unreachable" in h["error"] for h in shared["research_history"])
    assert "failed" in shared["final_answer"]


def test_unavailable_tool_is_remapped_and_recorded():
    # Google is not configured (no key): choosing it runs DuckDuckGo instead.
    engine = ScriptedEngine([("search_google", "sleuth"), ("send_to_hitl", "")])
    shared, _ = run(engine)
    h = shared["research_history"][0]
    assert h["action"] == "search_duckduckgo" and h["remapped_from"] == "search_google"
    assert "search_google" not in engine.decide_calls[0].actions
    assert "asked for Google, not available" in shared["final_answer"]  # named as the user knows it


def test_no_usable_tool_stops_with_no_tools():
    engine = ScriptedEngine([("search_kb", "x")])
    shared, _ = run(engine, fake_tools=FakeTools(kb_available=False), tools=("kb",))
    assert shared["stop_reason"] == "no_tools"
    assert shared["iteration_count"] == 0
    assert "I could not" not in shared["final_answer"]  # the scripted engine still wrote its report


def test_exhausted_offline_policy_ends_honestly():
    shared, _ = run(
        OfflineEngine(),
        fake_tools=FakeTools(search=RateLimitedSearch(fail=True), kb_available=False),
        tools=("duckduckgo",),
    )
    assert shared["stop_reason"] == "exhausted"
    assert "could not find" in shared["answer"]


def test_a_web_that_cannot_be_reached_is_not_tried_again():
    engine = ScriptedEngine([("search_duckduckgo", f"q{i}") for i in range(20)])
    shared, _ = run(
        engine, fake_tools=FakeTools(search=FakeSearch(fail=True), kb_available=False), tools=("duckduckgo",)
    )
    assert shared["iteration_count"] == 1 and shared["stop_reason"] == "tool_failures"


def test_feedback_restarts_the_loop_and_reaches_the_next_decision(tmp_path):
    given = []

    def feedback(prep):
        if given:
            return None
        given.append(1)
        return "look into pricing in Europe"

    engine = ScriptedEngine(
        [
            ("search_duckduckgo", "sleuth"),
            ("send_to_hitl", ""),
            ("search_duckduckgo", "sleuth europe"),
            ("send_to_hitl", ""),
        ]
    )
    shared, _ = run(engine, tmp_path=tmp_path, feedback=feedback)
    assert [f["text"] for f in shared["feedback_history"]] == ["look into pricing in Europe"]
    third = engine.decide_calls[2]
    assert third.feedback == ["look into pricing in Europe"]
    assert third.round_feedback == ["look into pricing in Europe"]
    # each round's report is written twice: the scripted answer's [1] fails its check the first time
    assert len(shared["reports"]) == 2 and len(engine.report_calls) == 4
    assert [h["query_or_url"] for h in shared["research_history"]] == ["sleuth", "sleuth europe"]
    assert "feedback: \u201clook into pricing in Europe\u201d" in shared["final_answer"]
    assert shared["status"] == "done"


def test_feedback_rejecting_a_source_excludes_it():
    from sleuth.utils.research.feedback import rejected_sources

    assert rejected_sources("the second source is outdated", [1, 2, 3]) == [2]
    assert rejected_sources("ignore [3], it is spam", [1, 2, 3]) == [3]
    assert rejected_sources("source 7 is wrong", [1, 2, 3]) == []
    assert rejected_sources("look into pricing in Europe", [1, 2, 3]) == []
    # numbered as the report showed them: its [2] is the session's source 7
    assert rejected_sources("ignore [2]", [2, 7, 1, 3, 4, 5, 6]) == [7]
    assert rejected_sources("the first source is wrong", [2, 7, 1]) == [2]


class Broken(BaseEngine):
    name = "gemini"

    def decide(self, ctx):
        raise RuntimeError("429 quota exhausted")

    analyze = report = decide


def test_failed_llm_falls_back_to_offline_with_low_confidence():
    engine = ResilientEngine(Broken(), OfflineEngine())
    shared, _ = run(engine, max_iterations=3)
    phases = {f["phase"] for f in shared["llm_fallbacks"]}
    assert {"decision", "analyzer", "report"} <= phases
    assert all(r["confidence_score"] <= LOW_CONFIDENCE_CAP for r in shared["analyzer_reports"] if r["fallback"])
    assert shared["research_history"], "the offline fallback still researched"
    assert shared["final_answer"]


def test_shared_store_round_trips_through_json(tmp_path):
    engine = ScriptedEngine([("search_duckduckgo", "a"), ("crawl_url", "https://example.org/x"), ("send_to_hitl", "")])
    shared, rt = run(engine, tmp_path=tmp_path)
    saved = saved_form(shared)
    assert shared["sources"] and shared["extracted_information"]
    assert json.loads(json.dumps(saved)) == saved  # a session file holds JSON types only
    assert rt.store.load(shared["session_id"]) == shared  # and reads back as the same store, sources and facts
    rt.store.close()


@pytest.mark.parametrize("bad", [("crawl_url", "not a url at all"), ("crawl_url", "")])
def test_crawl_without_url_becomes_a_search(bad):
    engine = ScriptedEngine([bad, ("send_to_hitl", "")])
    shared, _ = run(engine)
    h = shared["research_history"][0]
    assert h["action"] == "search_duckduckgo" and h["remapped_from"] == "crawl_url"


def test_search_fallback_and_its_errors_show_in_the_journey():
    class FallbackSearch(FakeSearch):
        def search(self, tool, query):
            out = super().search("google_cse", query)
            out.fallback_used = True
            out.errors = [{"backend": "duckduckgo", "kind": "rate_limited", "message": "HTTP 429"}]
            return out

    engine = ScriptedEngine([("search_duckduckgo", "q"), ("send_to_hitl", "")])
    shared, _ = run(engine, fake_tools=FakeTools(search=FallbackSearch()), google_api_key="k", google_cse_id="cx")
    h = shared["research_history"][0]
    assert h["tool_used"] == "google_cse" and h["fallback_used"] and h["errors"][0]["kind"] == "rate_limited"
    assert "via google_cse (fallback backend used; duckduckgo: rate_limited)" in shared["final_answer"]


def test_crawl_list_fetches_only_urls_not_yet_visited():
    engine = ScriptedEngine(
        [
            ("crawl_url", "https://example.org/a"),
            ("crawl_url", "https://example.org/a https://example.org/b https://example.org/b"),
            ("send_to_hitl", ""),
        ],
        confidences=[0.1, 0.2],
    )
    shared, rt = run(engine)
    assert rt.tools.fetcher().calls == [["https://example.org/a"], ["https://example.org/b"]]
    assert shared["stop_reason"] == "decided"


def test_kb_search_skips_pages_this_session_already_read():
    from types import SimpleNamespace

    tools = FakeTools()
    engine = ScriptedEngine([("search_kb", "notes"), ("send_to_hitl", "")])
    rt = make_rt(engine, fake_tools=tools)
    shared = new_shared("What is in my notes?", engine=engine.name)
    tools.kb().extra_hits = [
        SimpleNamespace(
            source="https://example.org/read-just-now",
            title="Read",
            text="Read.",
            id="r#0",
            chunk=0,
            score=0.95,
            metadata={"session_id": shared["session_id"]},
        )
    ]
    run_flow(rt, shared, "query")
    assert [s.url for s in shared["sources"]] == ["notes/a.md"]
    assert shared["research_history"][0]["retrieval_confidence"] == 0.9


def test_every_stop_reason_has_a_report_text_and_the_decision_schema_uses_the_action_vocabulary():
    from sleuth.utils.engine.base import DecisionModel
    from sleuth.utils.registry import ACTIONS
    from sleuth.utils.research.loopdata import StopReason
    from sleuth.utils.research.report import STOP_TEXT

    assert set(STOP_TEXT) == set(StopReason)
    assert DecisionModel.model_json_schema()["properties"]["next_action"]["enum"] == list(ACTIONS)


def test_every_engine_and_the_test_fakes_keep_to_the_engine_contract():
    """The offline, resilient and scripted engines all satisfy the one protocol the nodes call;
    a fake that drifted from it (a missing call, no capabilities) would not."""
    from sleuth.utils.engine.protocol import Capabilities, Engine

    offline = OfflineEngine()
    for engine in (offline, ResilientEngine(Broken(), offline), ScriptedEngine([("send_to_hitl", "")])):
        assert isinstance(engine, Engine), engine
        assert isinstance(engine.capabilities, Capabilities) and engine.model is None
    assert not isinstance(object(), Engine)
