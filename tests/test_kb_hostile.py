"""`kb ingest` of hostile folders, through the CLI: symlink loops, the same file twice, symlinks out of
the folder, FIFOs and devices. Every readable file is ingested once, the rest is reported (one line
per kind), nothing blocks and nothing leaves the folder unless --follow-links."""

from __future__ import annotations

import json
import os

import pytest


@pytest.fixture
def notes(tmp_path):
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "okapi.md").write_text("# Okapis\n\nThe okapi lives in the Ituri rainforest.\n")
    (folder / "sub" / "giraffe.md").write_text("# Giraffes\n\nThe giraffe lives on the savanna.\n")
    return folder


def search(cli, data, query: str) -> list[str]:
    proc = cli("kb", "search", query, "--json", "-k", "10", data_dir=data)
    assert proc.returncode == 0, proc.stderr
    return [h["source"] for h in json.loads(proc.stdout)["hits"]]


def stats(cli, data) -> dict:
    proc = cli("kb", "stats", "--json", data_dir=data)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def said(proc, words: str) -> list[str]:
    return [line for line in proc.stderr.splitlines() if words in line]


def test_symlink_loops_are_passed_over_and_every_readable_file_is_ingested(cli, tmp_path, notes):
    os.symlink("loop-b.md", notes / "loop-a.md")
    os.symlink("loop-a.md", notes / "loop-b.md")
    os.symlink("nowhere.md", notes / "dangling.md")
    os.symlink("..", notes / "sub" / "up")  # a folder that loops back
    data = tmp_path / "data"
    for extra in ([], ["--follow-links"]):
        proc = cli("kb", "ingest", str(notes), *extra, data_dir=data, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        assert len(said(proc, "loops or leads nowhere")) == 1  # reported once for the three links
    assert stats(cli, data)["sources"] == 2
    assert sorted(os.path.basename(s) for s in search(cli, data, "lives")) == ["giraffe.md", "okapi.md"]


def test_the_same_file_by_two_names_is_ingested_once(cli, tmp_path, notes):
    os.symlink("okapi.md", notes / "alias.md")
    data = tmp_path / "data"
    proc = cli("kb", "ingest", str(notes), str(notes / "okapi.md"), "--embedding", "hash", data_dir=data)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "DuplicateIDError" not in proc.stderr
    assert len(said(proc, "the same file")) == 1
    assert "2 added" in proc.stdout
    s = stats(cli, data)
    assert s["sources"] == 2 and s["chunks"] == s["vectors"] > 0
    assert search(cli, data, "okapi") == [str((notes / "okapi.md").resolve())]


def test_a_link_whose_name_gives_the_type_of_a_file_named_without_one_is_read(cli, tmp_path, notes):
    # Debian's doc folders do this: NEWS.rst.gz -> changelog.gz
    (notes / "changes").write_text("Changes\n=======\n\nThe okapi feeder was added in release 2.1.\n")
    os.symlink("changes", notes / "NEWS.rst")
    data = tmp_path / "data"
    proc = cli("kb", "ingest", str(notes), data_dir=data)
    assert proc.returncode == 0, proc.stderr
    assert "error" not in proc.stderr and "skipped" not in proc.stderr  # read, under the link's name
    assert search(cli, data, "okapi feeder release")[0] == str((notes / "changes").resolve())  # the file itself


def test_a_folder_named_through_a_link_stores_each_file_under_its_real_path(cli, tmp_path, notes):
    (notes / "changes").write_text("Changes\n=======\n\nThe okapi feeder was added in release 2.1.\n")
    os.symlink("changes", notes / "NEWS.rst")  # read under the link's name, stored under the file's
    os.symlink(notes, tmp_path / "shortcut")
    data = tmp_path / "data"
    proc = cli("kb", "ingest", str(tmp_path / "shortcut"), data_dir=data)
    assert proc.returncode == 0, proc.stderr
    assert search(cli, data, "rainforest") == [str((notes / "okapi.md").resolve())]
    assert search(cli, data, "okapi feeder release")[0] == str((notes / "changes").resolve())


def test_symlinks_out_of_the_folder_are_followed_only_when_asked(cli, tmp_path, notes):
    secret = tmp_path / "private"
    secret.mkdir()
    (secret / "diary.md").write_text("# Diary\n\nThe vault code is hidden under the pelican.\n")
    os.symlink(secret / "diary.md", notes / "diary.md")
    os.symlink(secret, notes / "elsewhere")
    os.symlink(os.devnull, notes / "null.md")  # a device, outside the folder too
    data = tmp_path / "data"
    proc = cli("kb", "ingest", str(notes), data_dir=data)
    assert proc.returncode == 0, proc.stderr
    assert len(said(proc, "--follow-links")) == 1
    assert search(cli, data, "pelican vault") == []
    assert stats(cli, data)["sources"] == 2

    followed = cli("kb", "ingest", "--follow-links", str(notes), data_dir=data, timeout=60)
    assert followed.returncode == 0, followed.stderr
    assert search(cli, data, "pelican vault") == [str((secret / "diary.md").resolve())]  # once, not twice
    assert len(said(followed, "not a regular file")) == 1  # /dev/null is never opened


def test_a_fifo_is_never_opened(cli, tmp_path, notes):
    os.mkfifo(notes / "pipe.md")
    data = tmp_path / "data"
    proc = cli("kb", "ingest", str(notes), data_dir=data, timeout=60)  # opening it would block for ever
    assert proc.returncode == 0, proc.stderr
    assert len(said(proc, "not a regular file")) == 1 and "2 added" in proc.stdout

    named = cli("kb", "ingest", str(notes / "pipe.md"), data_dir=data, timeout=60)
    assert named.returncode == 1  # named on the command line: a file that failed
    assert said(named, "pipe.md") and "Traceback" not in named.stderr
