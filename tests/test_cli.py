"""The CLI as a user runs it: subprocesses under the network guard, offline engine, a local web."""

from __future__ import annotations

import json

import pytest
from conftest import web_env

QUESTION = "Were Rolf Amsel and Ned Marlow from the same country?"


def test_help_is_fast_and_light(cli):
    proc = cli("--help")
    assert proc.returncode == 0 and "research" in proc.stdout.lower()
    import subprocess
    import sys

    from conftest import ROOT

    code = (
        "import sys, runpy; sys.argv=['main.py','--help']\n"
        "try:\n    runpy.run_path('main.py', run_name='__main__')\nexcept SystemExit: pass\n"
        "heavy=[m for m in ('chromadb','google.genai','openai','ddgs','googleapiclient','trafilatura','pypdf','rich',"
        "'pydantic','pocketflow','lxml','readability','mcp','anyio') "
        "if m in sys.modules]\nprint('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT).stdout
    assert "HEAVY []" in out


def section_of(report: str, heading: str = "Research journey") -> str:
    return report.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_research_prints_a_cited_report(cli, web):
    proc = cli(QUESTION, env=web_env(web))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "## Answer" in out and "## Research journey" in out and "## Key sources" in out
    assert "Rolf Amsel" in out
    assert "web search" in section_of(out) and "search_duckduckgo" not in out  # the journey says what was asked
    assert "engine: offline" in proc.stderr  # auto picked offline and said so
    assert "[1/8]" in proc.stderr  # progress on stderr only
    assert "[1/8]" not in out


def test_json_output_shape(cli, web):
    proc = cli("--json", QUESTION, env=web_env(web))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == {
        "query",
        "answer",
        "confidence",
        "stop_reason",
        "iterations",
        "sources",
        "session_id",
        "elapsed_ms",
        "engine",
        "model",
        "tokens",
        "citations",
        "cost_usd",
        "llm_fallbacks",
    }
    assert data["engine"] == "offline" and data["iterations"] >= 1
    assert data["model"] is None and data["cost_usd"] == 0.0 and data["llm_fallbacks"] == 0
    assert data["sources"] and set(data["sources"][0]) == {"n", "title", "url", "tool", "kind", "cited", "session_n"}
    assert [s["n"] for s in data["sources"]] == list(range(1, len(data["sources"]) + 1))  # the report's numbers
    cited = {int(n) for n in __import__("re").findall(r"\[(\d+)\]", data["answer"])}
    assert cited and cited <= {s["n"] for s in data["sources"]}
    assert {s["n"] for s in data["sources"] if s["cited"]} == cited  # the flag says which back the answer


def test_no_network_still_ends_with_an_honest_report(cli):
    # Nothing listens on the DuckDuckGo port and there is no knowledge base: every tool fails fast.
    proc = cli(
        "--json", "What is the airspeed of an unladen swallow?", env={"SLEUTH_DDG_URL": "http://127.0.0.1:9/html/"}
    )
    assert proc.returncode == 1, proc.stderr  # every tool failed: the report is printed, the status says so
    data = json.loads(proc.stdout)
    assert data["stop_reason"] in {"exhausted", "tool_failures"}
    assert "could not find" in data["answer"]
    assert data["elapsed_ms"] < 60_000


def test_sessions_list_show_export_and_feedback_resume(cli, web, tmp_path):
    env = web_env(web)
    first = json.loads(cli("--json", QUESTION, env=env).stdout)
    sid = first["session_id"]
    listing = cli("sessions", "list").stdout
    assert sid in listing and "Rolf Amsel" in listing
    shown = cli("sessions", "show", sid)
    assert "## Answer" in shown.stdout
    full = json.loads(cli("sessions", "show", sid, "--json").stdout)
    assert full["original_query"] == QUESTION and full["research_history"]
    out = tmp_path / "report.md"
    assert cli("sessions", "export", sid, "-o", str(out)).returncode == 0
    assert out.read_text().startswith("# " + QUESTION)

    again = cli("--json", "--resume", sid, "--feedback", "look into Ned Marlow's birthplace", env=env)
    assert again.returncode == 0, again.stderr
    data = json.loads(again.stdout)
    assert data["session_id"] == sid and data["iterations"] > first["iterations"]
    saved = json.loads(cli("sessions", "show", sid, "--json").stdout)
    assert [f["text"] for f in saved["feedback_history"]] == ["look into Ned Marlow's birthplace"]
    assert len(saved["reports"]) == 2


def test_unknown_session_is_a_clear_error(cli):
    proc = cli("sessions", "show", "nope")
    assert proc.returncode == 2 and "no session" in proc.stderr


@pytest.mark.parametrize("where", ["a folder", "missing/report.md"])
def test_a_report_path_that_cannot_be_written_is_refused_before_any_research(cli, tmp_path, where):
    (tmp_path / "a folder").mkdir()
    proc = cli("--tools", "kb", "-o", str(tmp_path / where), "Who wrote Dune?", data_dir=tmp_path / "data")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(f"sleuth: -o {tmp_path / where}")
    assert not (tmp_path / "data" / "sessions").exists()  # nothing was researched


def test_exporting_a_session_to_a_folder_is_a_clear_error(cli, tmp_path):
    sessions = tmp_path / "data" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "s1.json").write_text(
        json.dumps({"session_id": "s1", "original_query": "Q?", "final_answer": "# Report\n"}), encoding="utf-8"
    )
    proc = cli("sessions", "export", "s1", "-o", str(tmp_path), data_dir=tmp_path / "data")
    assert proc.returncode == 2 and "is a folder" in proc.stderr and "Traceback" not in proc.stderr
    done = cli("sessions", "export", "s1", "-o", str(tmp_path / "r.md"), data_dir=tmp_path / "data")
    assert done.returncode == 0 and (tmp_path / "r.md").read_text(encoding="utf-8") == "# Report\n"


def test_a_question_and_feedback_with_bytes_that_are_not_utf8_are_researched_and_saved(cli, tmp_path):
    data = tmp_path / "data"
    first = cli("--tools", "duckduckgo", "--json", b"Who wrote \xff Dune?", data_dir=data)
    assert first.returncode == 1 and "Traceback" not in first.stderr  # 1: no network, every tool failed
    sid = json.loads(first.stdout)["session_id"]
    again = cli("--tools", "duckduckgo", "--json", "--resume", sid, "--feedback", b"look again \xfe", data_dir=data)
    assert again.returncode == 1 and "Traceback" not in again.stderr
    saved = json.loads((data / "sessions" / f"{sid}.json").read_text(encoding="utf-8"))
    assert saved["original_query"] == "Who wrote \ufffd Dune?"  # the undecodable byte, marked
    assert [f["text"] for f in saved["feedback_history"]] == ["look again \ufffd"]


@pytest.mark.parametrize(
    "content, why",
    [
        ("[]", "it holds a JSON array, not an object"),
        ('{"status": "running"}', 'it has no "session_id" and "original_query"'),
        ('{"session_id": "bad1", "original_query": "Q?", "sources": "none"}', '"sources" should be a JSON array'),
        (
            '{"session_id": "bad1", "original_query": "Q?", "sources": [{"title": "T", "url": "u"}]}',
            '"sources" include an entry that is not a numbered source',
        ),
        (
            '{"session_id": "bad1", "original_query": "Q?", "extracted_information": [{"text": "T"}]}',
            '"extracted_information" include an entry that is not a fact with a source',
        ),
    ],
)
def test_a_file_that_is_not_a_session_is_a_clear_error_and_left_out_of_the_list(cli, tmp_path, content, why):
    sessions = tmp_path / "data" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "bad1.json").write_text(content, encoding="utf-8")
    (sessions / "good1.json").write_text(json.dumps({"session_id": "good1", "original_query": "Q?"}), encoding="utf-8")
    for args in (("sessions", "show", "bad1"), ("--tools", "kb", "--resume", "bad1")):
        proc = cli(*args, data_dir=tmp_path / "data")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert "bad1.json is not a Sleuth session" in proc.stderr and why in proc.stderr
    listed = cli("sessions", "list", data_dir=tmp_path / "data")
    assert listed.returncode == 0 and "good1" in listed.stdout and "bad1" not in listed.stdout


def test_a_session_file_nested_too_deeply_to_read_is_a_clear_error(cli, tmp_path):
    sessions = tmp_path / "data" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "deep1.json").write_text('{"a": ' + "[" * 5000 + "]" * 5000 + "}", encoding="utf-8")
    proc = cli("sessions", "show", "deep1", data_dir=tmp_path / "data")
    assert proc.returncode == 2 and "deep1.json is unreadable" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_flag_value_is_a_clear_error(cli):
    proc = cli("--tools", "altavista", "question")
    assert proc.returncode == 2 and "unknown tool" in proc.stderr


def test_output_file_is_written(cli, web, tmp_path):
    out = tmp_path / "r.md"
    proc = cli("-o", str(out), QUESTION, env=web_env(web))
    assert proc.returncode == 0
    assert out.read_text() == proc.stdout


def test_gemini_engine_end_to_end_through_the_sdk(cli, web):
    from gemini_fake import FakeGemini, prompt_of

    def responder(body, path):
        prompt = prompt_of(body)
        if prompt.startswith("You are the central Decision Node"):
            if "(nothing yet)" in prompt:
                return 200, json.dumps(
                    {"next_action": "search_duckduckgo", "query_or_url": "Rolf Amsel", "reasoning": "find him"}
                )
            return 200, json.dumps({"next_action": "send_to_hitl", "query_or_url": "", "reasoning": "enough"})
        if prompt.startswith("You are the Analyzer Node"):
            return 200, json.dumps(
                {
                    "extracted_info": [{"fact": "Rolf Amsel is a Vestian director.", "source": 1}],
                    "assessment": "good",
                    "confidence_score": 0.6,
                    "suggestions_for_next_step": [],
                    "new_potential_urls": [],
                    "inconsistencies_found": "",
                }
            )
        return 200, "Rolf Amsel is Vestian [1]. Also see [42]."

    with FakeGemini(responder) as fake:
        env = {**web_env(web), "GEMINI_API_KEY": "k", "GEMINI_BASE_URL": fake.url}
        proc = cli("--json", "Who is Rolf Amsel?", env=env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["engine"] == "gemini" and data["stop_reason"] == "decided"
    assert data["answer"].startswith("Rolf Amsel is Vestian [1].")
    assert "see [?]." in data["answer"]  # a citation to no source is flagged, after one rewrite with the problem
    assert data["citations"] == {"total": 2, "supported": 1, "unsupported": 1}
    assert data["tokens"]["calls"] == 5 and data["tokens"]["total"] == 5 * 18, (data, fake.requests[-1]["path"])
    assert "there is no source [42]" in prompt_of(fake.requests[-1]["body"])
