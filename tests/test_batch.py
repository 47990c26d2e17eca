"""Piped batch mode: questions in, one JSON line out per question, in order, errors recorded."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

from conftest import web_env

from sleuth.utils.cli.batch import EXIT_SOME_FAILED, parse_questions


def test_parse_questions_skips_blanks_and_comments():
    qs = parse_questions(
        [
            "# a comment\n",
            "\n",
            "plain question?\n",
            '{"id": "x7", "query": "json question"}\n',
            '{"id": 3}\n',
            "{not json\n",
        ]
    )
    assert [(q["id"], q["query"], bool(q["error"])) for q in qs] == [
        (1, "plain question?", False),
        ("x7", "json question", False),
        (3, "", True),
        (4, "", True),
    ]


def test_batch_of_20_with_4_jobs_keeps_order_and_records_errors(cli, web):
    rows = [json.loads(x) for x in (web.root / "questions.jsonl").read_text().splitlines()]
    lines = ["# twenty questions and two bad lines"]
    for r in rows[:10]:
        lines.append(json.dumps({"id": r["id"], "query": r["question"]}))
    lines.append("{broken json")
    lines += [r["question"] for r in rows[10:20]]
    lines.append('{"id": "empty"}')
    env = {
        "SLEUTH_DDG_URL": web.search_url,
        "SLEUTH_ALLOW_PRIVATE_HOSTS": "1",
        "SLEUTH_TOOLS": "duckduckgo,crawl",
        "SLEUTH_CRAWL_INTERVAL": "0",
    }
    proc = cli("--jobs", "4", input="\n".join(lines) + "\n", env=env, timeout=300)
    assert proc.returncode == EXIT_SOME_FAILED, proc.stderr
    out = [json.loads(x) for x in proc.stdout.splitlines()]
    assert len(out) == 22
    ids = [o["id"] for o in out]
    assert ids[:10] == [r["id"] for r in rows[:10]]
    assert ids[10] == 11 and ids[11:21] == list(range(12, 22)) and ids[21] == "empty"
    assert [o["query"] for o in out[11:21]] == [r["question"] for r in rows[10:20]]
    errors = [o for o in out if o["error"]]
    assert [o["id"] for o in errors] == [11, "empty"]
    good = [o for o in out if not o["error"]]
    assert all(o["answer"] and o["session_id"] and o["stop_reason"] for o in good)
    assert len({o["session_id"] for o in good}) == 20
    assert "Feedback" not in proc.stdout + proc.stderr  # never a prompt


def test_all_good_batch_exits_zero_and_unordered_prints_everything(cli, web):
    env = web_env(web, SLEUTH_TOOLS="duckduckgo")
    proc = cli("batch", "--jobs", "2", "--unordered", input="Who was Ned Marlow?\nWho is Rolf Amsel?\n", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = [json.loads(x) for x in proc.stdout.splitlines()]
    assert sorted(o["id"] for o in out) == [1, 2] and not any(o["error"] for o in out)


def test_a_failing_question_gives_an_error_record_and_the_batch_goes_on(monkeypatch, tmp_path):
    from sleuth.flow import run_flow as real
    from sleuth.utils.cli import batch
    from sleuth.utils.config import Settings

    def flaky(rt, shared, start):
        if "explode" in shared["original_query"]:
            raise RuntimeError("tool crashed")
        return real(rt, shared, start)

    settings = Settings(engine="offline", data_dir=tmp_path, tools=("duckduckgo",), ddg_url="http://127.0.0.1:9/")
    out = io.StringIO()
    args = SimpleNamespace(jobs=2, unordered=False, quiet=True, output=None)
    code = batch.run_batch(args, settings, flaky, stdin=io.StringIO("first\nplease explode\nthird\n"), stdout=out)
    recs = [json.loads(x) for x in out.getvalue().splitlines()]
    assert code == EXIT_SOME_FAILED
    assert [r["id"] for r in recs] == [1, 2, 3]
    assert recs[1]["error"] == "RuntimeError: tool crashed" and not recs[0]["error"] and not recs[2]["error"]


def test_a_json_line_nested_too_deeply_is_an_error_record_and_the_next_line_is_read():
    deep = '{"query": "x", "a": ' + "[" * 5000 + "]" * 5000 + "}\n"
    qs = parse_questions([deep, '{"id": "q2", "query": "Who wrote Dune?"}\n'])
    assert qs[0]["error"] == "line 1: invalid JSON (nested too deeply)"
    assert (qs[1]["id"], qs[1]["query"], qs[1]["error"]) == ("q2", "Who wrote Dune?", None)


def test_batch_output_file_keeps_every_report_in_input_order(tmp_path):
    from sleuth.flow import run_flow
    from sleuth.utils.cli import batch
    from sleuth.utils.config import Settings

    def flaky(rt, shared, start):
        if "explode" in shared["original_query"]:
            raise RuntimeError("tool crashed")
        return run_flow(rt, shared, start)

    settings = Settings(engine="offline", data_dir=tmp_path, tools=("duckduckgo",), ddg_url="http://127.0.0.1:9/")
    report = tmp_path / "answers.md"
    args = SimpleNamespace(jobs=3, unordered=True, quiet=True, output=str(report))
    questions = "Who wrote Dune?\nplease explode\n{bad json\nWhen was ChromaDB released?\n"
    code = batch.run_batch(args, settings, flaky, stdin=io.StringIO(questions), stdout=io.StringIO())
    assert code == EXIT_SOME_FAILED
    text = report.read_text()
    heads = [line for line in text.splitlines() if line.startswith("# ")]
    assert heads == ["# Who wrote Dune?", "# please explode", "# (no question)", "# When was ChromaDB released?"]
    assert "_Failed: RuntimeError: tool crashed_" in text and text.count("\n---\n") == 3
    assert "## Answer" in text.split("\n---\n")[0]  # a real report, not a stub


def test_a_line_with_bytes_that_are_not_utf8_is_researched_not_an_error(tmp_path):
    from sleuth.flow import run_flow
    from sleuth.utils.cli import batch
    from sleuth.utils.config import Settings

    settings = Settings(engine="offline", data_dir=tmp_path, tools=("duckduckgo",), ddg_url="http://127.0.0.1:9/")
    args = SimpleNamespace(jobs=1, unordered=False, quiet=True, output=None)
    out = io.StringIO()
    # how Python reads an undecodable byte on stdin, and a lone surrogate escaped in a JSON line
    lines = 'Who wrote \udcff Dune?\n{"query": "When was \\ud800 Dune published?"}\n'
    assert batch.run_batch(args, settings, run_flow, stdin=io.StringIO(lines), stdout=out) == 0
    recs = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [(r["query"], r["error"]) for r in recs] == [
        ("Who wrote \ufffd Dune?", None),
        ("When was \ufffd Dune published?", None),
    ]


def test_a_report_file_that_cannot_be_written_is_said_once_and_every_answer_still_printed(tmp_path, capsys):
    from sleuth.flow import run_flow
    from sleuth.utils.cli import batch
    from sleuth.utils.config import Settings

    settings = Settings(engine="offline", data_dir=tmp_path, tools=("duckduckgo",), ddg_url="http://127.0.0.1:9/")
    gone = tmp_path / "removed" / "answers.md"  # its folder vanished after the start-up check
    args = SimpleNamespace(jobs=1, unordered=False, quiet=True, output=str(gone))
    out = io.StringIO()
    code = batch.run_batch(
        args, settings, run_flow, stdin=io.StringIO("Who wrote Dune?\nWhen was Dune published?\n"), stdout=out
    )
    assert code == 2  # as for one question: a report file that cannot be written is an environment problem
    assert [json.loads(x)["id"] for x in out.getvalue().splitlines()] == [1, 2]
    said = [line for line in capsys.readouterr().err.splitlines() if "could not write" in line]
    assert said == [f"sleuth: could not write {gone}: No such file or directory; the reports are still printed"]
