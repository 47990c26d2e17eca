"""A report numbers its sources 1..k with no gaps, cited ones first, and every place a user sees a
number (the answer, Key sources, feedback, the JSON outputs) uses the report's numbers."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace
from types import SimpleNamespace

from fakes import FakeTools, ScriptedEngine, make_rt

from sleuth.flow import run_flow
from sleuth.utils.api import result_json
from sleuth.utils.research.numbering import renumber, report_order
from sleuth.utils.research.state import new_shared

QUERIES = ["alpha", "beta", "gamma", "delta"]  # 2 sources each: session source 2 is alpha's, 7 is delta's
CITES_2_AND_7 = "It is about alpha [2]. It is about delta [7]."


def engine(*answers: str) -> ScriptedEngine:
    e = ScriptedEngine([*(("search_duckduckgo", q) for q in QUERIES), ("send_to_hitl", "")])
    e.answers = []
    for a in answers:
        e.enqueue_report(a)
    return e


def key_sources(report: str) -> dict[int, str]:
    """Key sources as listed: report number -> URL."""
    section = report.split("## Key sources", 1)[1]
    return {int(n): url for n, url in re.findall(r"^- \[(\d+)\] .* \u2014 (\S+) \(", section, re.M)}


def answer_of(report: str) -> str:
    return report.split("## Answer", 1)[1].split("\n*Confidence", 1)[0].strip()


def test_session_numbers_become_report_numbers_in_order_of_first_citation():
    assert report_order([7, 2, 5], 8) == [7, 2, 5, 1, 3, 4, 6, 8]
    assert renumber("A [7]. B [2?]. C [7] [9?].", report_order([7, 2], 8)) == "A [1]. B [2?]. C [1] [?]."


def test_a_report_citing_sources_2_and_7_shows_1_and_2_and_feedback_on_2_drops_source_7(tmp_path):
    answers = iter(["ignore [2], it is outdated", None])
    e = engine(CITES_2_AND_7, "It is about alpha [2].")  # both supported: one report call a round
    e.enqueue_decision("search_duckduckgo", "epsilon").enqueue_decision("send_to_hitl", "")
    rt = make_rt(e, tmp_path=tmp_path, feedback=lambda prep: next(answers))
    shared = new_shared("What is it about?", engine=e.name)
    firsts: list[dict] = []
    rt.ui.report = lambda md: firsts.append({"report": md, "json": result_json(shared)})  # as each was shown
    run_flow(rt, shared, "query")
    url = {s.n: s.url for s in shared["sources"]}

    first = firsts[0]["report"]
    listed = key_sources(first)
    assert list(listed) == list(range(1, len(listed) + 1)) and len(listed) == 8  # 1..k, no gap
    assert (listed[1], listed[2]) == (url[2], url[7])  # the cited ones first, in order of first citation
    assert answer_of(first).startswith("It is about alpha [1]. It is about delta [2].")
    assert "numbers not listed" not in first
    # --json / batch / API say the same numbers as the report text
    record = firsts[0]["json"]
    assert record["answer"].startswith("It is about alpha [1]. It is about delta [2].")
    assert {s["n"]: s["url"] for s in record["sources"]} == listed
    assert [(s["n"], s["session_n"]) for s in record["sources"] if s["cited"]] == [(1, 2), (2, 7)]

    # "ignore [2]" rejects the source shown as [2]: the session's source 7
    assert shared["excluded_sources"] == [7]
    assert e.decide_calls[-1].feedback == ["ignore [2], it is outdated (that is, source [7])"]  # as the LLM numbers
    second = firsts[1]["report"]
    assert url[7] not in key_sources(second).values() and url[2] == key_sources(second)[1]
    assert "feedback: \u201cignore [2], it is outdated\u201d (dropped: delta 0)" in second
    saved = rt.store.load(shared["session_id"])  # each report keeps its own numbers, saved with it
    rt.store.close()
    assert saved["reports"][0]["order"][:2] == [2, 7] and saved["reports"][1]["order"][0] == 2
    assert saved["reports"][1]["order"][saved["reports"][1]["listed"] :] == [7]  # rejected: not listed


def test_batch_json_lines_use_the_numbers_of_the_report_text(tmp_path):
    from sleuth.utils.cli import batch
    from sleuth.utils.config import Settings

    def scripted(rt, shared, start):  # the real graph, with a scripted LLM and in-process tools
        return run_flow(replace(rt, engine=engine(CITES_2_AND_7), tools=FakeTools()), shared, start)

    settings = Settings(engine="offline", data_dir=tmp_path, tools=("duckduckgo",), ddg_url="http://127.0.0.1:9/")
    report = tmp_path / "answers.md"
    out = io.StringIO()
    args = SimpleNamespace(jobs=2, unordered=False, quiet=True, output=str(report))
    assert batch.run_batch(args, settings, scripted, stdin=io.StringIO("What is it?\nWhat else?\n"), stdout=out) == 0
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    texts = report.read_text().split("\n---\n")
    assert len(records) == len(texts) == 2
    for rec, text in zip(records, texts, strict=True):
        listed = key_sources(text)
        assert list(listed) == list(range(1, 9))
        assert rec["answer"] == answer_of(text) and "[1]" in rec["answer"] and "[2]" in rec["answer"]
        assert {s["n"]: s["url"] for s in rec["sources"]} == listed


class StreamingEngine(ScriptedEngine):
    """An LLM stand-in that streams its answer in chunks, one cutting a marker in two."""

    def report(self, ctx, on_chunk=None):
        result = super().report(ctx, on_chunk)
        if on_chunk:
            text = result.data.text
            for i in range(0, len(text), 7):
                on_chunk(text[i : i + 7])
        return result


def test_a_streamed_answer_shows_the_numbers_the_report_will_show(tmp_path):
    e = StreamingEngine([*(("search_duckduckgo", q) for q in QUERIES), ("send_to_hitl", "")], answer=CITES_2_AND_7)
    rt = make_rt(e, tmp_path=tmp_path)
    rt.stream_report = True
    streamed: list[str] = []
    rt.ui.report_chunk = streamed.append
    shared = new_shared("What is it about?", engine=e.name)
    run_flow(rt, shared, "query")
    assert "".join(streamed) == "It is about alpha [1]. It is about delta [2]." == answer_of(shared["final_answer"])
    assert all(len(chunk) <= 9 for chunk in streamed)  # shown as it came, not at the end
