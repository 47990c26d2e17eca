"""Messages and reports that say what happened and what to do (issue 25, points 3-5), as a user
sees them: subprocesses of `python main.py` under the network guard."""

from __future__ import annotations

import json
import re

QUESTION = "How often is a sourdough starter fed?"


def kb_of_three_notes(cli, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Starter feeding\n\nA sourdough starter is fed flour and water every day.\n")
    (notes / "b.md").write_text("# Starter care\n\nA sourdough starter kept in the fridge is fed once a week.\n")
    (notes / "c.md").write_text(
        "# Starter history\n\nSourdough starter was carried by gold miners, who fed it daily.\n"
    )
    assert cli("kb", "ingest", str(notes)).returncode == 0


def key_sources(report: str) -> list[int]:
    return [int(n) for n in re.findall(r"^- \[(\d+)\]", report.split("## Key sources", 1)[1], re.M)]


def test_a_rejected_source_leaves_key_sources_numbered_1_to_k_as_the_json_says(cli, tmp_path):
    kb_of_three_notes(cli, tmp_path)
    first = cli("--tools", "kb", "--json", QUESTION)
    sid = json.loads(first.stdout)["session_id"]
    report = cli("sessions", "export", sid).stdout
    assert key_sources(report) == [1, 2, 3]
    answer = report.split("## Research journey")[0]
    rejected = next(n for n in key_sources(report) if f"[{n}]" not in answer and n < 3)  # listed, not cited
    gone = re.search(rf"^- \[{rejected}\] .* \u2014 (\S+) ", report, re.M).group(1)
    again = cli("--tools", "kb", "--resume", sid, "--feedback", f"ignore [{rejected}]", "--json", "-o", "again.md")
    assert again.returncode == 0, again.stderr
    text = (tmp_path / "again.md").read_text()
    assert key_sources(text) == [1, 2] and gone not in text.split("## Key sources")[1]  # no gap where it stood
    assert "numbers not listed" not in text
    data = json.loads(again.stdout)  # the JSON numbers the sources as the report does; the rejected one last
    shown = {int(n): url for n, url in re.findall(r"^- \[(\d+)\] .* \u2014 (\S+) ", text, re.M)}
    assert {s["n"]: s["url"] for s in data["sources"][:2]} == shown and data["sources"][2]["url"] == gone


def test_kb_ingest_of_only_a_missing_path_is_a_usage_error(cli, tmp_path):
    proc = cli("kb", "ingest", str(tmp_path / "nope"))
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "data" / "kb").exists()  # nothing was opened or created
    (tmp_path / "real.md").write_text("# Real\n\nSome text worth keeping.\n")
    partly = cli("kb", "ingest", str(tmp_path / "nope"), str(tmp_path / "real.md"))
    assert partly.returncode == 1 and "1 added" in partly.stdout  # a partial failure, as before


def test_kb_ingest_names_the_documents_it_skipped_and_the_folders_that_held_nothing(cli, tmp_path):
    from sleuth.utils.cli.ingest_notes import DOCUMENT_FORMATS
    from sleuth.utils.kb.readers import FILE_TYPES

    suffix = next(s for s in DOCUMENT_FORMATS if s not in FILE_TYPES)  # a document format not read (yet)
    docs = tmp_path / "docs"
    (docs / "api").mkdir(parents=True)
    for i in range(3):
        (docs / "api" / f"page{i}{suffix}").write_text(f"Page {i}\n======\n\nSome text.\n")
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n")
    (docs / "index.md").write_text("# Index\n\nThe index page.\n")
    (tmp_path / "empty").mkdir()
    proc = cli("kb", "ingest", str(docs), str(tmp_path / "empty"))
    assert proc.returncode == 0, proc.stderr
    assert f"skipped 3 {suffix} files: {DOCUMENT_FORMATS[suffix]} is not read" in proc.stderr
    assert "skipped 1 file of other types" in proc.stderr and "logo.png" in proc.stderr
    assert f"{tmp_path / 'empty'} holds no file to ingest" in proc.stderr
    assert f"{docs} holds no file" not in proc.stderr


def test_a_step_stopped_by_the_time_limit_is_said_in_english(cli, tmp_path):
    import threading

    from tests.webfixtures import LocalServer, send

    release = threading.Event()

    def hang(req):
        release.wait(60)  # answers only after the run has given up on it
        send(req, 200, "<html></html>")

    with LocalServer({"/html/": hang}) as search:
        try:
            proc = cli(
                "--tools",
                "duckduckgo",
                "--time-limit",
                "1",
                "Who wrote Dune?",
                env={"SLEUTH_DDG_URL": search.url("/html/")},
            )
        finally:
            release.set()
    assert proc.returncode == 0, proc.stderr
    said = proc.stderr + proc.stdout  # the progress line and the report's journey
    assert "TimeLimitExceeded" not in said and "abandoned after" not in said
    assert "the time limit for this round (--time-limit) ran out" in said


def test_a_url_in_the_question_is_read_first(cli, tmp_path):
    from tests.webfixtures import LocalServer, page, send

    guide = page("Research guide", "<p>Every claim in a report must cite the page it came from.</p>" * 3)
    with LocalServer({"/guide": lambda req: send(req, 200, guide)}) as site:
        url = site.url("/guide")
        proc = cli(
            "--json",
            "--tools",
            "duckduckgo,crawl",
            "--allow-private-hosts",
            "--crawl-interval",
            "0",
            f"What does {url} say about claims?",
        )
        hits = site.count("/guide")
    assert proc.returncode == 0, proc.stderr
    sid = json.loads(proc.stdout)["session_id"]
    history = json.loads((tmp_path / "data" / "sessions" / f"{sid}.json").read_text())["research_history"]
    assert (history[0]["action"], history[0]["query_or_url"], history[0]["ok"]) == ("crawl_url", url, True)
    assert hits == 1  # read once, not again
    data = json.loads(proc.stdout)
    assert url in [s["url"] for s in data["sources"] if s["cited"]]


def test_no_network_is_said_once_with_what_works_without_it(cli):
    # SearXNG and DuckDuckGo both point at closed local ports: every web search fails to connect.
    proc = cli("--tools", "duckduckgo", "--searxng-url", "http://127.0.0.1:1", "Who wrote Dune?")
    assert proc.returncode == 1, proc.stderr  # every tool failed
    assert proc.stderr.count("the web could not be reached") == 1
    assert "--tools kb" in proc.stderr
    shown = proc.stderr + proc.stdout
    assert "Error(" not in shown  # no exception reprs cut off mid-word
    assert "could not reach searxng, duckduckgo (network error)" in proc.stdout  # the journey says it plainly


def test_progress_names_the_backend_being_asked(cli):
    proc = cli("--tools", "duckduckgo", "--searxng-url", "http://127.0.0.1:1", "Who wrote Dune?")
    assert "[1/8] web search (SearXNG): Who wrote Dune?" in proc.stderr
    plain = cli("--tools", "duckduckgo", "Who wrote Dune?")
    assert "[1/8] web search (DuckDuckGo): Who wrote Dune?" in plain.stderr


def test_kb_search_shows_the_scores_that_rank_its_hits(cli, tmp_path):
    kb_of_three_notes(cli, tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    for i, topic in enumerate(["volcanoes erupt", "rivers flood", "glaciers melt", "comets orbit", "bees swarm"]):
        (other / f"n{i}.md").write_text(f"# Note {i}\n\nIn spring {topic} in the north.\n")
    assert cli("kb", "ingest", str(other)).returncode == 0
    proc = cli("kb", "search", "sourdough starter fed every day", "-k", "3")
    assert proc.returncode == 0, proc.stderr
    scores = [float(s) for s in re.findall(r"^\d+\. \[[\d.]+, bm25 ([\d.]+)\]", proc.stdout, re.M)]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True) and len(set(scores)) == 3
    hits = json.loads(cli("kb", "search", "sourdough starter fed every day", "-k", "3", "--json").stdout)["hits"]
    assert [round(h["bm25"], 2) for h in hits] == scores and all(0 <= h["score"] < 1 for h in hits)
