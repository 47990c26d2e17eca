"""A knowledge base over a big folder: a second `kb ingest` of a folder that did not change reads
none of its files; an ingest stopped half-way (Ctrl-C) goes on where it stopped and ends with the same
knowledge base as one that was never stopped."""

from __future__ import annotations

import os
import sys
import time

import pytest

from sleuth.utils.kb.store import KnowledgeBase

_opened: list[str] | None = None  # files opened while a test records (None: not recording)


def _audit(event: str, args: tuple) -> None:
    if _opened is not None and event == "open" and isinstance(args[0], str | bytes | os.PathLike):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # Python's own audit events: every file the process opens, by any means


def opened_under(folder, action) -> list[str]:
    """The files under `folder` that `action()` opens."""
    global _opened
    _opened = []
    try:
        action()
        return sorted({p for p in _opened if p.startswith(str(folder))})
    finally:
        _opened = None


TOPICS = ["kites", "zeppelins", "gliders", "balloons", "parachutes", "airships", "biplanes", "drones"]


def make_folder(folder, n: int = 24):
    """n notes of a few paragraphs, last changed a day ago."""
    old = time.time() - 86400
    for i in range(n):
        sub = folder / f"part{i % 3}"
        sub.mkdir(parents=True, exist_ok=True)
        topic = TOPICS[i % len(TOPICS)]
        f = sub / f"note{i:02d}.md"
        f.write_text(
            f"# Note {i} on {topic}\n\nThe {topic} of workshop {i} were painted orange in spring {1990 + i}.\n\n"
            f"Each of the {topic} carries serial mark Q{i * 7:03d} under its left side.\n"
        )
        os.utime(f, (old, old))


def results(kb) -> list[list[tuple[str, int]]]:
    return [[(h.source, h.chunk) for h in kb.search(q, k=5)] for q in (*TOPICS, "serial mark Q021", "orange spring")]


def test_a_second_ingest_of_an_unchanged_folder_reads_none_of_its_files(tmp_path):
    folder = tmp_path / "notes"
    make_folder(folder)
    kb = KnowledgeBase(tmp_path / "kb")
    first = kb.ingest_paths([folder])
    assert first.files_added == 24
    before = results(kb)
    report = None

    def again():
        nonlocal report
        report = kb.ingest_paths([folder])

    assert opened_under(folder, again) == []
    assert report is not None and report.files_unchanged == 24 and report.chunks_added == 0
    assert results(kb) == before
    kb.close()


def test_a_changed_file_is_read_again_even_when_its_size_is_the_same(tmp_path):
    folder = tmp_path / "notes"
    make_folder(folder, 6)
    kb = KnowledgeBase(tmp_path / "kb")
    kb.ingest_paths([folder])
    f = folder / "part0" / "note00.md"
    f.write_text(f.read_text().replace("orange", "purple"))  # same size, a new modification time
    old = time.time() - 3600
    os.utime(f, (old, old))
    report = kb.ingest_paths([folder])
    assert report.files_replaced == 1 and report.files_unchanged == 5
    assert [h.source for h in kb.search("purple", k=3)] == [str(f.resolve())]
    kb.close()


def test_an_interrupted_ingest_goes_on_where_it_stopped_and_ends_the_same(tmp_path):
    folder = tmp_path / "notes"
    make_folder(folder)
    whole = KnowledgeBase(tmp_path / "whole")
    whole.ingest_paths([folder])
    expected = results(whole)
    whole.close()

    kb = KnowledgeBase(tmp_path / "kb")

    def stop_after_ten(done: int, total: int, path: str) -> None:
        if done == 10:
            raise KeyboardInterrupt  # what Ctrl-C raises in the middle of the folder

    with pytest.raises(KeyboardInterrupt):
        kb.ingest_paths([folder], progress=stop_after_ten)
    kb.close()

    kb = KnowledgeBase(tmp_path / "kb")  # a new `kb ingest` of the same folder
    report = None

    def resume():
        nonlocal report
        report = kb.ingest_paths([folder])

    read = opened_under(folder, resume)
    assert len(read) == 14  # the ten files read before the stop are not read again
    assert report is not None and report.files_unchanged == 10 and report.files_added == 14
    assert results(kb) == expected
    kb.close()


def test_the_raw_bm25_beside_each_hit_is_sqlites_own_from_the_second_search_on(tmp_path):
    from sleuth.utils.kb.bm25 import fts5_scores
    from sleuth.utils.text import analyze

    folder = tmp_path / "notes"
    make_folder(folder)
    kb = KnowledgeBase(tmp_path / "kb")
    kb.ingest_paths([folder])
    for q in ("kites painted orange", "serial mark under the left side", "zeppelins 1995 spring"):
        kb.search(q, k=5)  # the first search of an instance goes to FTS5; the next ones to memory
        hits = kb.search(q, k=5)
        shown = kb.bm25_scores(q, hits)
        own = fts5_scores(kb._conn(), list(dict.fromkeys(analyze(q))), [h.id for h in hits])
        assert shown.keys() == own.keys() and len(shown) == len(hits)
        assert all(abs(shown[i] - own[i]) < 1e-9 * max(1.0, abs(own[i])) for i in own)
    kb.close()


def test_a_kb_without_vectors_searches_by_words_and_says_what_vector_search_needs(cli, tmp_path):
    folder = tmp_path / "notes"
    make_folder(folder, 8)
    data = tmp_path / "data"
    done = cli("kb", "ingest", str(folder), "--embedding", "none", data_dir=data)
    assert done.returncode == 0, done.stderr
    assert not (data / "kb" / "chroma").exists()  # no vector store at all
    found = cli("kb", "search", "zeppelins painted orange", "--embedding", "none", data_dir=data)
    assert found.returncode == 0 and "zeppelins" in found.stdout.splitlines()[0].lower()
    vector = cli("kb", "search", "zeppelins", "--mode", "vector", "--embedding", "none", data_dir=data)
    assert vector.returncode == 2 and "Traceback" not in vector.stderr
    assert len(vector.stderr.strip().splitlines()) == 1 and "--mode bm25" in vector.stderr
    stats = cli("kb", "stats", "--embedding", "none", data_dir=data)
    assert stats.returncode == 0 and "vectors:     0\n" in stats.stdout and "differs" not in stats.stdout
    again = cli("kb", "search", "zeppelins", data_dir=data)  # no embedding asked for: the KB's own
    assert again.returncode == 0 and "zeppelins" in again.stdout.splitlines()[0].lower()
    other = cli("kb", "search", "zeppelins", "--embedding", "hash", data_dir=data)  # another: told how it was built
    assert other.returncode == 2 and "--embedding none" in other.stderr


def test_a_kb_made_with_vectors_keeps_them_when_no_embedding_is_asked_for(cli, tmp_path):
    folder = tmp_path / "notes"
    make_folder(folder, 8)
    data = tmp_path / "data"
    made = cli("kb", "ingest", str(folder), "--embedding", "hash", data_dir=data)
    assert made.returncode == 0, made.stderr
    found = cli("kb", "search", "zeppelins painted orange", "--mode", "vector", data_dir=data)
    assert found.returncode == 0, found.stderr
    assert "zeppelins" in found.stdout.splitlines()[0].lower()
    more = tmp_path / "more"
    more.mkdir()
    (more / "kites.md").write_text("# Kites\n\nA kite of red silk flew over the harbour wall.\n")
    added = cli("kb", "ingest", str(more), data_dir=data)  # written with the KB's vectors too
    assert added.returncode == 0, added.stderr
    stats = cli("kb", "stats", data_dir=data)
    assert "embedding:   hash" in stats.stdout and "vectors:     9\n" in stats.stdout, stats.stdout


def test_a_file_copied_over_with_its_old_modification_time_is_read_again(tmp_path):
    folder = tmp_path / "notes"
    make_folder(folder, 6)
    kb = KnowledgeBase(tmp_path / "kb")
    kb.ingest_paths([folder])
    f = folder / "part0" / "note00.md"
    st = f.stat()
    f.write_text(f.read_text().replace("orange", "purple"))  # same size...
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))  # ...and the old modification time, as `cp -p` leaves it
    report = kb.ingest_paths([folder])
    assert report.files_replaced == 1
    assert [h.source for h in kb.search("purple", k=3)] == [str(f.resolve())]
    kb.close()


def test_bm25_in_memory_ranks_like_sqlite_when_many_rows_match_every_word(tmp_path):
    import random

    from sleuth.utils.kb.bm25 import fts5_top
    from sleuth.utils.text import analyze

    rng = random.Random(4)
    words = ["amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "jasper"]
    kb = KnowledgeBase(tmp_path / "kb")
    for i in range(200):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(5, 60)))
        kb.add_document(source=f"https://stones.example/{i}", title=rng.choice(words), text=text + ".")
    kb.search("amber", k=1)  # the first search of an instance goes to FTS5; the next ones to memory
    for q in ("amber cedar", "basalt fjord garnet", "delta ember harbor indigo jasper"):
        terms = list(dict.fromkeys(analyze(q)))
        with kb._lock:
            kb._bm25.rank(kb._conn(), terms, 25)
            got = kb._bm25.memory.top(kb._conn(), terms, 25)
            ref = fts5_top(kb._conn(), terms, 25)
        assert got is not None
        assert [r for r, _ in got[0]] == [r for r, _ in ref], q
        assert [s for _, s in got[0]] == pytest.approx([s for _, s in ref], rel=1e-9), q
    kb.close()


def test_the_score_index_built_by_an_ingest_ranks_and_scores_exactly_as_before(tmp_path, monkeypatch):
    import random

    from sleuth.utils.kb import bm25
    from sleuth.utils.kb.bm25 import fts5_top
    from sleuth.utils.text import analyze

    monkeypatch.setattr(bm25, "MEMORY_FIRST_ROWS", 50)  # a big KB's path, in a small one
    rng = random.Random(11)
    words = ["amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "jasper", "kelp"]
    folder = tmp_path / "rocks"
    folder.mkdir()
    for i in range(240):
        body = " ".join(rng.choice(words) for _ in range(rng.randint(4, 50)))
        (folder / f"r{i:03d}.md").write_text(f"# {rng.choice(words).title()} {i}\n\n{body}.\n")
    kb = KnowledgeBase(tmp_path / "kb", embedding="none")
    kb.ingest_paths([folder])
    for i in range(0, 240, 7):  # replaced files leave removed rows behind in the postings
        (folder / f"r{i:03d}.md").write_text(f"# Kelp {i}\n\nkelp and cedar, delta.\n")
    kb.ingest_paths([folder])
    queries = ["amber cedar", "basalt fjord garnet", "delta ember harbor indigo jasper", "kelp", "cedar zircon"]

    def check() -> None:
        for q in queries:
            terms = list(dict.fromkeys(analyze(q)))
            with kb._lock:
                ref = fts5_top(kb._conn(), terms, 25)
            hits = kb.search(q, k=25)
            assert [h.id for h in hits] == _ids(kb, [r for r, _ in ref]), q  # the same chunks, in the same order
            shown = kb.bm25_scores(q, hits)
            assert [shown[h.id] for h in hits] == pytest.approx([s for _, s in ref], rel=1e-9), q

    check()
    assert kb._bm25.index.terms is not None and kb._bm25.memory.lengths is None  # ranked by the score index alone
    with kb._lock:
        for q in queries:
            terms = list(dict.fromkeys(analyze(q)))
            from_index = kb._bm25.index.top(terms, 25)
            assert kb._bm25.memory.ensure(kb._conn(), bm25._generation(kb._conn()))
            assert from_index == kb._bm25.memory.top(kb._conn(), terms, 25), q  # bit for bit
    kb.add_document(source="https://rocks.example/new", title="Amber", text="Amber and cedar, cedar, cedar.")
    check()  # a write makes the index stale: the searches are right all the same
    kb.reset()
    assert not (tmp_path / "kb" / "lexical.sqlite.scores").exists()
    kb.close()


def _ids(kb, rowids: list[int]) -> list[str]:
    with kb._lock:
        return [kb._conn().execute("SELECT id FROM chunks WHERE rid = ?", (r,)).fetchone()[0] for r in rowids]


def test_an_ingest_whose_score_index_cannot_be_written_ends_and_searches_all_the_same(tmp_path, monkeypatch):
    from sleuth.utils.kb import bm25

    monkeypatch.setattr(bm25, "MEMORY_FIRST_ROWS", 5)
    folder = tmp_path / "notes"
    make_folder(folder)
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    (kb_dir / "lexical.sqlite.scores").write_text("a file where the index's folder would go")
    kb = KnowledgeBase(kb_dir, embedding="none")
    report = kb.ingest_paths([folder])
    assert report.files_added == 24 and not report.errors
    assert [h.source for h in kb.search("serial mark Q021", k=1)] == [str((folder / "part0" / "note03.md").resolve())]
    kb.close()
