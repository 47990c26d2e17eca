"""`kb` sub-commands: ingest, stats, search (incl. a question set over stdin), reset."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sleuth.utils.cli.kb import main
from tests.test_kb import write_corpus

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for var in ("SLEUTH_EMBEDDING", "SLEUTH_CHROMA_URL", "SLEUTH_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env from the project folder


@pytest.fixture
def corpus(tmp_path) -> Path:
    return write_corpus(tmp_path / "docs")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_ingest_then_stats(capsys, corpus, data_dir):
    rc, out, err = run(capsys, "ingest", str(corpus), "--data-dir", str(data_dir))
    assert rc == 1  # two files could not be read; the rest is in
    assert "4 added" in out and "2 failed" in out and "4 chunks in the KB" in out
    assert "blob.txt" in err and "binary" in err and "broken.pdf" in err
    rc, out, _ = run(capsys, "ingest", str(corpus / "sourdough.md"), "--data-dir", str(data_dir))
    assert rc == 0 and "1 unchanged" in out and "0 chunks added" in out
    rc, out, _ = run(capsys, "stats", "--data-dir", str(data_dir), "--json")
    stats = json.loads(out)
    assert rc == 0 and stats["chunks"] == 4 and stats["sources"] == 4
    assert stats["embedding"] == "none" and stats["vectors"] == 0  # a new KB: BM25 alone, no vector store
    assert stats["search_mode"] == "bm25" and not (data_dir / "kb" / "chroma").exists()
    rc, out, _ = run(capsys, "stats", "--data-dir", str(data_dir))
    assert rc == 0 and "4 from 4 source(s)" in out and "file" in out


def test_search_prints_hits_with_scores_and_sources(capsys, corpus, data_dir):
    main(["ingest", str(corpus), "--data-dir", str(data_dir)])
    capsys.readouterr()
    rc, out, _ = run(
        capsys, "search", "Which volcano closed European airspace?", "-k", "2", "--data-dir", str(data_dir)
    )
    assert rc == 0
    first = out.splitlines()[0]
    assert first.startswith("1. [") and "volcano.txt" in first
    rc, out, _ = run(capsys, "search", "sourdough starter", "--json", "-k", "1", "--data-dir", str(data_dir))
    line = json.loads(out)
    assert line["query"] == "sourdough starter"
    assert Path(line["hits"][0]["source"]).name == "sourdough.md"


def test_search_a_question_set_from_stdin_as_json_lines(capsys, corpus, data_dir, monkeypatch):
    main(["ingest", str(corpus), "--data-dir", str(data_dir)])
    capsys.readouterr()
    questions = [
        "Which volcano closed European airspace?",
        "",
        "ancient Greek computer with gears",
        "where does photosynthesis happen",
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(questions) + "\n"))
    rc, out, _ = run(capsys, "search", "-", "--json", "-k", "3", "--data-dir", str(data_dir))
    assert rc == 0
    lines = [json.loads(x) for x in out.splitlines()]
    assert [x["query"] for x in lines] == [q for q in questions if q]
    assert [Path(x["hits"][0]["source"]).name for x in lines] == [
        "volcano.txt",
        "antikythera.html",
        "photosynthesis.pdf",
    ]
    for x in lines:
        for h in x["hits"]:
            assert {"rank", "score", "source", "title", "chunk", "text"} <= set(h)
        assert [h["rank"] for h in x["hits"]] == list(range(1, len(x["hits"]) + 1))


def test_reset_refuses_without_yes(capsys, corpus, data_dir):
    main(["ingest", str(corpus), "--data-dir", str(data_dir)])
    capsys.readouterr()
    rc, out, err = run(capsys, "reset", "--data-dir", str(data_dir))
    assert rc == 2 and "--yes" in err
    assert json.loads(run(capsys, "stats", "--json", "--data-dir", str(data_dir))[1])["chunks"] == 4
    rc, out, _ = run(capsys, "reset", "--yes", "--data-dir", str(data_dir))
    assert rc == 0 and "emptied" in out
    assert json.loads(run(capsys, "stats", "--json", "--data-dir", str(data_dir))[1])["chunks"] == 0


def test_wrong_embedding_and_bad_usage_are_clear(capsys, corpus, data_dir):
    main(["ingest", str(corpus), "--data-dir", str(data_dir)])
    capsys.readouterr()
    rc, _, err = run(capsys, "search", "volcano", "--embedding", "minilm", "--data-dir", str(data_dir))
    assert rc == 2 and "built with embedding 'none'" in err
    rc, _, err = run(capsys, "search", "volcano", "-k", "0", "--data-dir", str(data_dir))
    assert rc == 2 and "-k" in err
    assert run(capsys, "frobnicate")[0] == 2
    assert run(capsys)[0] == 2


def test_search_on_an_empty_kb_says_so(capsys, data_dir):
    rc, out, _ = run(capsys, "search", "anything at all", "--data-dir", str(data_dir))
    assert rc == 0 and "no hits" in out


def test_cli_in_a_real_process_with_a_pipe(corpus, data_dir):
    """Non-TTY stderr: no progress bar, plain lines; stdin question set in one process."""
    code = "import sys; from utils.cli.kb import main; sys.exit(main(sys.argv[1:]))"
    ing = subprocess.run(
        [sys.executable, "-c", code, "ingest", str(corpus), "--data-dir", str(data_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ing.returncode == 1 and "\x1b[" not in ing.stderr and "error:" in ing.stderr
    se = subprocess.run(
        [sys.executable, "-c", code, "search", "-", "--json", "--data-dir", str(data_dir)],
        input="volcano airspace\nsourdough flour water\n",
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert se.returncode == 0, se.stderr
    names = [Path(json.loads(x)["hits"][0]["source"]).name for x in se.stdout.splitlines()]
    assert names == ["volcano.txt", "sourdough.md"]


def test_relative_paths_ingest_html_pdf_and_markdown(tmp_path):
    """`kb ingest ../notes` from another folder: every file type is read, and search finds each."""
    from webfixtures import make_pdf

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "okapi.html").write_text(
        "<html><head><title>Okapi</title></head><body><article><p>The okapi lives in the Ituri "
        "rainforest of the Congo.</p></article></body></html>"
    )
    (notes / "starter.md").write_text("# Sourdough\n\nFeed the sourdough starter flour and water daily.\n")
    (notes / "rag.pdf").write_bytes(make_pdf(["Retrieval augmented generation", "reduces hallucination."]))
    work = tmp_path / "work"
    work.mkdir()
    code = "import sys; from utils.cli.kb import main; sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SLEUTH_DATA_DIR": "../data"}  # a relative data dir too
    run = lambda *a: subprocess.run(  # noqa: E731
        [sys.executable, "-c", code, *a], cwd=work, env=env, capture_output=True, text=True, timeout=120
    )
    ing = run("ingest", "../notes")
    assert ing.returncode == 0, ing.stderr
    assert "3 added" in ing.stdout and "0 failed" in ing.stdout
    for query, name in (("okapi Ituri", "okapi.html"), ("sourdough flour", "starter.md"), ("hallucination", "rag.pdf")):
        hit = json.loads(run("search", query, "--json", "-k", "1").stdout)["hits"][0]
        assert Path(hit["source"]) == notes / name
    assert (tmp_path / "data" / "kb").is_dir()
