"""Garbage written over a knowledge base file: each KB command says which file is damaged and how to
rebuild (`kb reset --yes`, then ingest again) on one line, status 2; research goes on without the KB
(with its lexical index alone when only the vectors are damaged) and says so; the reset sets the
damaged file aside and the KB works again."""

from __future__ import annotations

import json

import pytest

EXIT_USAGE = 2
DAMAGED = {"lexical": "kb/lexical.sqlite", "chroma": "kb/chroma/chroma.sqlite3"}


@pytest.fixture
def notes(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "okapi.md").write_text("# Okapis\n\nThe okapi is a giraffid that lives in the Ituri rainforest.\n")
    return folder


def damage(data, which: str) -> str:
    target = data / DAMAGED[which]
    assert target.is_file()
    target.write_bytes(b"this is not a database, just garbage from a bad disk\n" * 200)
    return str(target)


def assert_one_line(proc, file: str) -> None:
    assert proc.returncode == EXIT_USAGE, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert file in lines[0] and "damaged" in lines[0] and "kb reset --yes" in lines[0]


@pytest.mark.parametrize("which", ["lexical", "chroma"])
def test_a_damaged_kb_file_is_named_with_the_way_to_rebuild(cli, tmp_path, notes, which):
    data = tmp_path / "data"
    assert cli("kb", "ingest", str(notes), "--embedding", "hash", data_dir=data).returncode == 0  # with vectors
    file = damage(data, which)

    assert_one_line(cli("kb", "stats", data_dir=data), file)
    assert_one_line(cli("kb", "ingest", str(notes), data_dir=data), file)
    if which == "lexical":  # a BM25 search reads the lexical file alone
        assert_one_line(cli("kb", "search", "okapi", data_dir=data), file)

    research = cli("--json", "--tools", "kb,duckduckgo", "Where do okapis live?", data_dir=data)
    # lexical damaged: researched without the KB, and with no network every tool failed (status 1);
    # vectors damaged: the lexical index still answers, so the run succeeded (status 0)
    assert research.returncode == (1 if which == "lexical" else 0), research.stderr
    assert json.loads(research.stdout)["answer"] and "Traceback" not in research.stderr
    said = [line for line in research.stderr.splitlines() if "damaged" in line]
    if which == "lexical":
        assert len(said) == 1 and file in said[0] and "without the knowledge base" in said[0]
        only_kb = cli("--tools", "kb", "Where do okapis live?", data_dir=data)  # no tool left: said why, status 2
        assert only_kb.returncode == EXIT_USAGE and file in only_kb.stderr and "damaged" in only_kb.stderr
    else:  # the vectors alone: research answers from the lexical index, as kb search does, and says so
        assert len(said) == 1 and file in said[0] and "vectors are unavailable" in said[0]
        assert cli("kb", "search", "okapi", data_dir=data).returncode == 0
        only_kb = cli("--json", "--tools", "kb", "Where do okapis live?", data_dir=data)
        assert only_kb.returncode == 0, only_kb.stderr
        answer = json.loads(only_kb.stdout)
        assert "Ituri" in answer["answer"] and answer["sources"][0]["url"].endswith("okapi.md")
        assert "vectors are unavailable" in only_kb.stderr

    reset = cli("kb", "reset", "--yes", data_dir=data)
    assert reset.returncode == 0, reset.stderr
    assert "set aside" in reset.stdout
    assert list((data / "kb").glob("*.damaged-*"))  # kept, out of the way
    assert cli("kb", "ingest", str(notes), data_dir=data).returncode == 0
    found = cli("kb", "search", "okapi", "--json", data_dir=data)
    assert found.returncode == 0, found.stderr
    assert "Ituri" in json.loads(found.stdout)["hits"][0]["text"]
