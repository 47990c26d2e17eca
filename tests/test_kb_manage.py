"""`kb list | remove | forget`, `kb ingest --sync`, the cap on remembered pages and the space `kb stats`
reports, through the CLI (`kb` sub-commands; the Chroma server side is in tests/test_kb_server.py)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pexpect
import pytest
from conftest import ROOT, cli_env

from sleuth.utils.cli.kb import main
from sleuth.utils.kb.store import KnowledgeBase
from tests.test_kb import write_corpus


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for var in ("SLEUTH_EMBEDDING", "SLEUTH_CHROMA_URL", "SLEUTH_DATA_DIR", "SLEUTH_MEMORY_LIMIT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def corpus(tmp_path) -> Path:
    return write_corpus(tmp_path / "docs")


def run(capsys, data_dir, *argv: str) -> tuple[int, str, str]:
    rc = main([*argv, "--data-dir", str(data_dir)])
    out, err = capsys.readouterr()
    return rc, out, err


def listed(capsys, data_dir) -> dict[str, dict]:
    rc, out, _ = run(capsys, data_dir, "list", "--json")
    assert rc == 0
    return {d["source"]: d for d in map(json.loads, out.splitlines())}


def remember(data_dir: Path, *pages: tuple[str, str], kind: str = "web", limit: int = 0) -> None:
    """Store pages as research does (remembered pages, feedback)."""
    kb = KnowledgeBase(data_dir / "kb", memory_limit=limit)
    for url, text in pages:
        kb.add_document(source=url, title=url.rsplit("/", 1)[-1], text=text, source_type=kind, session_id="s1")
    kb.close()


def age(data_dir: Path, source: str, when: str) -> None:
    """Pretend a document was stored at `when` (the KB records the time it stores a document)."""
    con = sqlite3.connect(data_dir / "kb" / "lexical.sqlite")
    with con:
        con.execute("UPDATE sources SET ingested_at=? WHERE source=?", (when, source))
    con.close()


def test_list_shows_each_document_with_its_kind_chunks_and_time(capsys, corpus, data_dir):
    run(capsys, data_dir, "ingest", str(corpus))
    remember(data_dir, ("https://x.example/owls", "Barn owls hunt by sound in total darkness."))
    remember(data_dir, ("feedback:s1:1", "The second source is outdated."), kind="feedback")
    docs = listed(capsys, data_dir)
    assert docs[str((corpus / "notes" / "volcano.txt").resolve())]["kind"] == "file"
    assert docs["https://x.example/owls"]["kind"] == "web" and docs["https://x.example/owls"]["chunks"] == 1
    assert docs["feedback:s1:1"]["kind"] == "feedback" and docs["feedback:s1:1"]["added"].startswith("20")
    rc, out, _ = run(capsys, data_dir, "list")
    assert rc == 0 and "remembered page" in out and "ingested file" in out and "https://x.example/owls" in out
    assert out.splitlines()[-1] == "6 document(s) (ingested file: 4, remembered page: 1, feedback: 1), 6 chunks"


def test_remove_a_file_a_folder_and_a_url_from_vectors_and_bm25_alike(capsys, corpus, data_dir):
    run(capsys, data_dir, "ingest", str(corpus), "--embedding", "hash")
    remember(data_dir, ("https://x.example/owls", "Barn owls hunt by sound in total darkness."))
    rc, out, _ = run(capsys, data_dir, "remove", str(corpus / "notes"))  # a folder: everything under it
    assert rc == 0 and "removed ingested file" in out and "volcano.txt" in out and "1 document(s)" in out
    rc, out, _ = run(capsys, data_dir, "remove", "https://x.example/owls")
    assert rc == 0 and "removed remembered page https://x.example/owls" in out
    for mode in ("bm25", "vector", "fused"):
        rc, out, _ = run(capsys, data_dir, "search", "volcano Iceland ash airspace owls", "--json", "--mode", mode)
        sources = [h["source"] for h in json.loads(out)["hits"]]
        assert not [s for s in sources if "volcano" in s or "owls" in s], (mode, sources)
    rc, out, _ = run(capsys, data_dir, "stats", "--json")
    stats = json.loads(out)
    assert stats["chunks"] == stats["vectors"] == 3 and stats["sources"] == 3
    assert sorted(Path(s).name for s in listed(capsys, data_dir)) == [
        "antikythera.html",
        "photosynthesis.pdf",
        "sourdough.md",
    ]


def test_removing_what_is_not_there_names_it_and_removes_the_rest(capsys, corpus, data_dir):
    run(capsys, data_dir, "ingest", str(corpus))
    rc, out, err = run(capsys, data_dir, "remove", str(corpus / "sourdough.md"), "https://nowhere.example/")
    assert rc == 1 and "nothing in the knowledge base comes from https://nowhere.example/" in err
    assert "removed ingested file" in out and "sourdough.md" in out and len(listed(capsys, data_dir)) == 3


def test_removing_several_from_a_script_needs_yes(capsys, corpus, data_dir):
    run(capsys, data_dir, "ingest", str(corpus))
    rc, _, err = run(capsys, data_dir, "remove", str(corpus))
    assert rc == 2 and "refusing to remove 4 documents without --yes" in err
    assert len(listed(capsys, data_dir)) == 4
    rc, out, _ = run(capsys, data_dir, "remove", str(corpus), "--yes")
    assert rc == 0 and "removed 4 document(s), 4 chunks; 0 chunks left" in out
    assert listed(capsys, data_dir) == {}


def test_removing_several_at_a_terminal_asks_first(tmp_path, corpus, data_dir):
    main(["ingest", str(corpus), "--data-dir", str(data_dir)])
    env = cli_env(tmp_path, NO_COLOR="1", TERM="dumb", SLEUTH_DATA_DIR=str(data_dir))
    child = pexpect.spawn(
        sys.executable, [str(ROOT / "main.py"), "kb", "remove", str(corpus / "notes"), str(corpus / "sourdough.md")],
        env=env, cwd=str(tmp_path), encoding="utf-8", timeout=60,
        use_poll=True,
    )  # fmt: skip
    child.expect(r"Remove these 2 documents\? \[y/N\]")
    assert "volcano.txt" in child.before and "sourdough.md" in child.before
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    kb = KnowledgeBase(data_dir / "kb")
    assert len(kb.documents()) == 4
    kb.close()


def test_forget_remembered_pages_all_or_older_than_an_age(capsys, corpus, data_dir):
    run(capsys, data_dir, "ingest", str(corpus))
    remember(
        data_dir,
        ("https://x.example/old", "An old page about lighthouses and fog horns."),
        ("https://x.example/new", "A new page about barn owls hunting by sound."),
    )
    remember(data_dir, ("feedback:s1:1", "Look into fog horns."), kind="feedback")
    age(data_dir, "https://x.example/old", "2020-01-01T00:00:00Z")
    rc, out, _ = run(capsys, data_dir, "forget", "--remembered", "--older-than", "30d", "--dry-run")
    assert rc == 0 and "would forget remembered page https://x.example/old" in out and "/new" not in out
    rc, out, _ = run(capsys, data_dir, "forget", "--remembered", "--older-than", "30d")
    assert rc == 0 and "forgot remembered page https://x.example/old" in out
    assert "https://x.example/old" not in listed(capsys, data_dir)
    rc, out, _ = run(capsys, data_dir, "forget", "--remembered")
    assert rc == 0 and "forgot remembered page https://x.example/new" in out
    docs = listed(capsys, data_dir)
    assert sorted(d["kind"] for d in docs.values()) == ["feedback", "file", "file", "file", "file"]
    rc, _, err = run(capsys, data_dir, "forget", "--remembered", "--older-than", "a while")
    assert rc == 2 and "30d" in err


def test_ingest_sync_removes_files_gone_from_the_folder(capsys, corpus, data_dir):
    run(capsys, data_dir, "ingest", str(corpus))
    (corpus / "notes" / "volcano.txt").unlink()
    rc, out, _ = run(capsys, data_dir, "ingest", str(corpus))
    assert any(s.endswith("volcano.txt") for s in listed(capsys, data_dir))  # without --sync it stays
    rc, out, err = run(capsys, data_dir, "ingest", "--sync", str(corpus))
    assert rc == 1  # the two unreadable files of the corpus
    assert "removed ingested file" in out and "volcano.txt" in out
    assert sorted(Path(s).name for s in listed(capsys, data_dir)) == [
        "antikythera.html",
        "photosynthesis.pdf",
        "sourdough.md",
    ]
    rc, out, _ = run(capsys, data_dir, "search", "Eyjafjallajokull volcano", "--json")
    assert not [h for h in json.loads(out)["hits"] if "volcano" in h["source"]]


def test_ingest_sync_leaves_a_folder_that_is_missing_altogether_alone(capsys, tmp_path, data_dir):
    drive = write_corpus(tmp_path / "drive")
    run(capsys, data_dir, "ingest", str(drive))
    (drive / "notes" / "volcano.txt").rename(tmp_path / "volcano.txt")
    (drive / "notes").rmdir()
    run(capsys, data_dir, "ingest", "--sync", str(drive / "notes"))  # as if the drive were unmounted
    assert any(s.endswith("volcano.txt") for s in listed(capsys, data_dir))


def test_remembered_pages_are_capped_oldest_first_and_files_never_evicted(capsys, corpus, data_dir):
    run(capsys, data_dir, "ingest", str(corpus), "--embedding", "hash")
    pages = [(f"https://x.example/{i}", f"Page {i} tells of lighthouse number {i} and its keeper.") for i in range(5)]
    remember(data_dir, *pages, limit=3)
    docs = listed(capsys, data_dir)
    assert sorted(s for s, d in docs.items() if d["kind"] == "web") == [f"https://x.example/{i}" for i in (2, 3, 4)]
    assert sum(d["kind"] == "file" for d in docs.values()) == 4
    rc, out, _ = run(capsys, data_dir, "stats", "--json")
    assert json.loads(out)["chunks"] == json.loads(out)["vectors"] == 7


def test_a_research_run_keeps_to_the_memory_limit(cli, web, tmp_path):
    from conftest import web_env

    env = web_env(web, SLEUTH_TOOLS="duckduckgo,crawl,kb")
    proc = cli("--json", "--memory-limit", "2", "Were Rolf Amsel and Ned Marlow from the same country?", env=env)
    assert proc.returncode == 0, proc.stderr
    docs = [json.loads(x) for x in cli("kb", "list", "--json").stdout.splitlines()]
    pages = [d for d in docs if d["kind"] == "web"]
    assert len(pages) == 2
    bad = cli("kb", "stats", "--memory-limit", "-1")
    assert bad.returncode == 2 and "--memory-limit" in bad.stderr


def test_stats_end_with_the_space_the_kb_uses(capsys, corpus, data_dir):
    run(capsys, data_dir, "ingest", str(corpus), "--embedding", "hash")
    rc, out, _ = run(capsys, data_dir, "stats")
    last = out.splitlines()[-1]
    assert rc == 0 and last.startswith("space:") and str(data_dir / "kb") in last
    rc, out, _ = run(capsys, data_dir, "stats", "--json")
    on_disk = sum(f.stat().st_size for f in (data_dir / "kb").rglob("*") if f.is_file())
    assert 0.8 * on_disk < json.loads(out)["bytes"] < 1.25 * on_disk  # SQLite's journal comes and goes
