"""The knowledge base inside research runs: a cited answer from your own files offline, and
research memory across runs (crawled pages and accepted feedback are remembered)."""

from __future__ import annotations

import json
import re

import pytest
from conftest import web_env
from test_kb import write_corpus


def cited_sources(data: dict) -> list[dict]:
    by_n = {s["n"]: s for s in data["sources"]}
    return [by_n[int(n)] for n in re.findall(r"\[(\d+)\]", data["answer"]) if int(n) in by_n]


def test_ingest_notes_and_pdfs_then_get_a_cited_answer_offline(cli, tmp_path):
    docs = write_corpus(tmp_path / "docs")
    ingest = cli("kb", "ingest", str(docs))
    assert ingest.returncode == 1  # the unreadable files are reported...
    assert "blob.txt" in ingest.stderr + ingest.stdout
    proc = cli("--json", "--tools", "kb", "Where does photosynthesis take place in plant cells?")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)  # ...and the rest were ingested and answer the question
    assert "chloroplasts" in data["answer"]
    cited = cited_sources(data)
    assert cited and cited[0]["kind"] == "internal" and cited[0]["url"].endswith("photosynthesis.pdf")


@pytest.mark.parametrize("history", [0, 40], ids=["short-note", "long-note"])
def test_a_markdown_table_is_no_answer_sentence(cli, tmp_path, history):
    """A note's table shares the question's words, but a run of table cells is no sentence to quote:
    the answer is the note's prose (in a note of one chunk, and in a longer one)."""
    note = tmp_path / "stopping.md"
    note.write_text(
        "# History\n\n"
        + " ".join(f"Version {i} of the tool was released in spring with a new logo." for i in range(history))
        + "\n\n# Stopping\n\n"
        "| setting | default | when the research stops |\n| --- | --- | --- |\n"
        "| `--confidence` | 0.7 | research stops when confidence reaches it. Then |\n"
        "| `--max-iterations` | 8 | research stops after this many steps |\n\n"
        "The research stops when its confidence reaches the threshold or its step budget is spent.\n",
        encoding="utf-8",
    )
    assert cli("kb", "ingest", str(note)).returncode == 0
    data = json.loads(cli("--json", "--tools", "kb", "When does the research stop?").stdout)
    assert "confidence reaches the threshold or its step budget is spent" in data["answer"]
    assert "|" not in data["answer"]


def test_a_list_item_is_quoted_without_its_marker(cli, tmp_path):
    note = tmp_path / "kiln.md"
    note.write_text(
        "# Kiln notes\n\n- Stoneware is fired in the kiln at about 1,250 degrees Celsius.\n"
        "- Glaze goes on after the bisque firing.\n",
        encoding="utf-8",
    )
    assert cli("kb", "ingest", str(note)).returncode == 0
    q = "At what temperature is stoneware fired in the kiln?"
    data = json.loads(cli("--json", "--tools", "kb", q).stdout)
    assert data["answer"].startswith("Stoneware is fired in the kiln at about 1,250 degrees Celsius. [1]")
    report = cli("--tools", "kb", "--resume", data["session_id"]).stdout  # the report with its sources
    assert "> \u201cStoneware is fired in the kiln" in report  # the quoted passage, without its bullet


def test_research_memory_across_runs(cli, web):
    env = web_env(web)
    q = "Were Rolf Amsel and Ned Marlow from the same country?"
    first = json.loads(cli("--json", "--tools", "duckduckgo,crawl,kb", q, env=env).stdout)
    crawled = {s["url"] for s in first["sources"] if s["tool"] == "crawl"}
    assert crawled, "the first run read pages"
    stats = json.loads(cli("kb", "stats", "--json").stdout)
    assert stats["by_source_type"]["web"]["sources"] == len(crawled)  # every page read was remembered

    # Offline and web-less, the second run answers from what the first one read.
    second = json.loads(cli("--json", "--tools", "kb", q).stdout)
    internal = [s for s in cited_sources(second) if s["kind"] == "internal"]
    assert internal and {s["url"] for s in internal} <= crawled
    assert "Amsel" in second["answer"]

    # Reading the same pages again stores nothing twice.
    cli("--json", "--tools", "duckduckgo,crawl,kb", "--no-cache", q, env=env)
    again = json.loads(cli("kb", "stats", "--json").stdout)
    assert again["chunks"] == stats["chunks"]

    # Feedback steers the research; it is not knowledge, so it is not stored.
    cli("--json", "--tools", "kb", "--resume", second["session_id"], "--feedback", "focus on Ned Marlow's films")
    assert "feedback" not in json.loads(cli("kb", "stats", "--json").stdout)["by_source_type"]


def test_no_remember_keeps_the_kb_untouched(cli, web):
    env = web_env(web)
    proc = cli("--json", "--no-remember", "Were Rolf Amsel and Ned Marlow from the same country?", env=env)
    assert any(s["tool"] == "crawl" for s in json.loads(proc.stdout)["sources"])
    assert json.loads(cli("kb", "stats", "--json").stdout)["chunks"] == 0
