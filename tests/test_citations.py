"""Verified citations: every [n] checked against the stored text of source n, flagged [n?] when the
source does not say it; an LLM report with bad citations is written once more, then flagged."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from fakes import FakeTools, ScriptedEngine, make_rt

from sleuth.flow import run_flow
from sleuth.utils.cli.research import result_json
from sleuth.utils.engine.protocol import Answer, EngineResult
from sleuth.utils.research.citations import EXCERPT_MAX, cited_claims, flag, merge_excerpt, verify
from sleuth.utils.research.loopdata import Analysis, Fact, Form, Source, ToolItem
from sleuth.utils.research.report import build_report
from sleuth.utils.research.state import add_source, new_shared

CURIE = (
    "Marie Curie was a Polish and naturalised-French physicist and chemist. "
    "In 1903 she shared the Nobel Prize in Physics with Pierre Curie and Henri Becquerel. "
    "She was born in Warsaw on 7 November 1867."
)
DANUBE = "The Danube is the second-longest river in Europe. It flows through Vienna and Budapest into the Black Sea."
SOURCES = [Source(1, "Marie Curie", "u1", excerpt=CURIE), Source(2, "Danube", "u2", excerpt=DANUBE)]


def verdicts(answer: str, sources=SOURCES, facts=()) -> list[tuple[int, bool]]:
    return [(c.n, c.supported) for c in verify(answer, sources, list(facts)).checks]


def test_a_claim_its_source_states_is_supported_with_the_sentence_that_says_so():
    v = verify("Marie Curie shared the 1903 Nobel Prize in Physics [1].", SOURCES)
    assert [(c.n, c.supported) for c in v.checks] == [(1, True)]
    assert v.checks[0].quote.startswith("In 1903 she shared the Nobel Prize")


def test_the_wrong_source_a_wrong_number_or_a_wrong_name_is_caught():
    assert verdicts("Marie Curie shared the 1903 Nobel Prize in Physics [2].") == [(2, False)]
    assert verdicts("Marie Curie shared the 1911 Nobel Prize in Physics [1].") == [(1, False)]
    assert verdicts("Marie Curie was born in Krakow in 1867 [1].") == [(1, False)]
    v = verify("Marie Curie was born in Krakow in 1867 [1].", SOURCES)
    assert "krakow" in v.checks[0].reason


def test_a_citation_to_no_source_is_impossible_and_flagged():
    answer = "The Danube flows into the Black Sea [2]. It has 42 bridges [9]."
    v = verify(answer, SOURCES)
    assert [(c.n, c.supported, c.impossible) for c in v.checks] == [(2, True, False), (9, False, True)]
    assert flag(answer, v) == "The Danube flows into the Black Sea [2]. It has 42 bridges [9?]."
    assert v.counts() == {"total": 2, "supported": 1, "unsupported": 1}


def test_each_claim_is_the_text_its_markers_close():
    answer = "Curie was born in Warsaw. [1] The Danube flows through Vienna [2], and through Budapest [2][1]."
    claims = [(c.text, [m[0] for m in c.markers]) for c in cited_claims(answer)]
    assert claims == [
        ("Curie was born in Warsaw", [1]),
        ("The Danube flows through Vienna", [2]),
        ("and through Budapest", [2, 1]),
    ]
    # Two sources cited together: the one that says it is supported, the other is not.
    assert verdicts(answer) == [(1, True), (2, True), (2, True), (1, False)]


def test_a_comparison_cited_to_both_sources_is_supported_by_the_two_together():
    answer = "Curie was born in Warsaw and the Danube flows through Vienna [1][2]."
    assert verdicts(answer) == [(1, True), (2, True)]


def test_sessions_saved_before_excerpts_existed_are_checked_against_their_facts():
    old = [Source.from_json({"n": 1, "title": "Marie Curie", "url": "u1", "snippet": ""})]  # no "excerpt"
    facts = [Fact("She was born in Warsaw on 7 November 1867.", 1)]
    assert verdicts("Curie was born in Warsaw in 1867 [1].", old, facts) == [(1, True)]
    assert verdicts("Curie was born in Paris in 1867 [1].", old, facts) == [(1, False)]


def test_the_kept_text_of_a_source_is_bounded():
    shared = new_shared("q")
    for i in range(5):
        add_source(shared, ToolItem("https://e.org/a", "A", f"{i} " + "x" * 5000, Form.PAGE), "crawl")
    assert len(shared["sources"]) == 1 and len(shared["sources"][0].excerpt) <= EXCERPT_MAX
    assert merge_excerpt("abc def", "def") == "abc def"  # nothing twice


def test_the_sources_list_shows_the_supporting_quote_or_the_failure():
    sources = [replace(s, tool="kb", kind="internal") for s in SOURCES]
    shared = {**new_shared("Who was Marie Curie?"), "sources": sources}
    answer = "Marie Curie was born in Warsaw [1]. The Danube flows through Vienna [1]."
    v = verify(answer, shared["sources"])
    from sleuth.utils.research.citations import summary

    shared["citations"] = summary(v)
    report = build_report(shared, flag(answer, v))
    assert "Warsaw [1]. The Danube flows through Vienna [1?]." in report
    assert "- [1] Marie Curie" in report
    assert "  > \u201cShe was born in Warsaw on 7 November 1867.\u201d" in report


# ---------------------------------------------------------------- in the research loop


class CitingEngine(ScriptedEngine):
    """An LLM stand-in: keeps the KB passages as facts, and writes the scripted report answers in turn."""

    name = "fake-llm"

    def __init__(self, answers):
        super().__init__([("search_kb", "Marie Curie"), ("send_to_hitl", "")], confidences=[0.8])
        self.answers = list(answers)

    def analyze(self, ctx):
        self.analyze_calls.append(ctx)
        facts = [Fact(it.text, it.source, 0.9) for it in ctx.items]
        return EngineResult(Analysis(facts, "ok", 0.8), self.name)

    def report(self, ctx, on_chunk=None):
        self.report_calls.append(ctx)
        return EngineResult(Answer(self.answers[min(len(self.report_calls), len(self.answers)) - 1]), self.name)


def run_llm(answers):
    tools = FakeTools()
    tools.kb().extra_hits = [
        SimpleNamespace(
            source=f"notes/{t}.md", title=t, text=text, id=f"{t}#0", chunk=0, score=0.8, metadata={}, section=""
        )
        for t, text in (("curie", CURIE), ("danube", DANUBE))
    ]
    engine = CitingEngine(answers)
    rt = make_rt(engine, fake_tools=tools)
    shared = new_shared("When did Marie Curie win the Nobel Prize?", engine=engine.name)
    run_flow(rt, shared, "query")
    by_title = {s.title: s.n for s in shared["sources"]}
    return engine, shared, by_title


def test_an_llm_report_citing_the_wrong_source_is_written_again_then_flagged():
    # Source 3 is the Danube page; source 2 is Curie's (1 is the fake KB's own note).
    wrong = "Marie Curie shared the Nobel Prize in Physics in 1903 [3]."
    engine, shared, by_title = run_llm([wrong, wrong])
    assert by_title == {"Notes A": 1, "curie": 2, "danube": 3}
    assert len(engine.report_calls) == 2  # written once more, not again and again
    problems = engine.report_calls[1].citation_problems
    assert '"Marie Curie shared the Nobel Prize in Physics in 1903" [3]' in problems and "1903" in problems
    assert not engine.report_calls[0].citation_problems
    assert shared["answer"] == "Marie Curie shared the Nobel Prize in Physics in 1903 [3?]."
    assert result_json(shared)["citations"] == {"total": 1, "supported": 0, "unsupported": 1}
    assert "no passage of this source supports the claim" in shared["final_answer"]
    assert shared["citations"]["regenerated"] is True


def test_an_llm_report_fixed_on_the_second_try_is_shown_unflagged_with_its_quote():
    engine, shared, _ = run_llm(["Curie won the Nobel Prize in 1903 [3].", "Curie won the Nobel Prize in 1903 [2]."])
    assert len(engine.report_calls) == 2
    assert shared["answer"] == "Curie won the Nobel Prize in 1903 [2]."
    assert result_json(shared)["citations"] == {"total": 1, "supported": 1, "unsupported": 0}
    assert "> \u201cIn 1903 she shared the Nobel Prize in Physics" in shared["final_answer"]


def test_a_report_whose_citations_hold_is_written_once():
    engine, shared, _ = run_llm(["Marie Curie was born in Warsaw in 1867 [2]."])
    assert len(engine.report_calls) == 1
    assert result_json(shared)["citations"] == {"total": 1, "supported": 1, "unsupported": 0}


# ---------------------------------------------------------------- the offline engine: 100 %

QUESTIONS = 6


def _offline_runs(web, tools_csv: str, data_dir: Path) -> list[dict]:
    from sleuth.utils.cli.ui import PlainUI
    from sleuth.utils.config import Settings, parse_tools
    from sleuth.utils.engine.offline import OfflineEngine
    from sleuth.utils.runtime import Runtime, Tools

    s = Settings(
        engine="offline",
        data_dir=data_dir,
        tools=parse_tools(tools_csv),
        ddg_url=web.search_url,
        allow_private_hosts=True,
        ignore_robots=True,
        remember=False,
        crawl_interval=0.0,
    )
    tools = Tools(s)
    if "kb" in tools_csv:
        tools.kb().ingest_paths([web.root.resolve() / "wiki"])
    questions = [json.loads(x) for x in (web.root / "questions.jsonl").read_text().splitlines() if x]
    out = []
    for q in questions[:QUESTIONS]:
        rt = Runtime(settings=s, engine=OfflineEngine(), ui=PlainUI(err=io.StringIO(), out=io.StringIO()), tools=tools)
        shared = new_shared(q["question"], engine="offline")
        run_flow(rt, shared, "query")
        out.append(shared)
    tools.close()
    return out


@pytest.mark.parametrize("tools_csv", ["duckduckgo,crawl", "kb"])
def test_the_offline_engines_citations_all_verify(web, tmp_path, tools_csv):
    runs = _offline_runs(web, tools_csv, tmp_path)
    counts = [result_json(sh)["citations"] for sh in runs]
    assert sum(c["total"] for c in counts) >= QUESTIONS  # every report cites something
    assert all(c["unsupported"] == 0 and c["supported"] == c["total"] for c in counts), counts
    assert all("?]" not in sh["answer"] for sh in runs)
    assert all("  > \u201c" in sh["final_answer"] for sh in runs if sh["citations"]["total"])


def test_a_sentence_quoted_verbatim_verifies_whatever_its_accents_and_underscores():
    text = "Gorbachev (Russian: Михаи́л Горбачёв; born 2 March 1931) led the O Cheiro do Ralo_ crew of 1,200."
    src = [Source(1, "G", "u", excerpt=text)]
    assert verdicts(text.rstrip(".") + " [1].", src) == [(1, True)]
    assert verdicts("Gorbachev led a crew of 1200 [1].", src) == [(1, True)]
