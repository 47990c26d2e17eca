"""The BM25 score index: each term's BM25 contribution to each chunk, computed once per KB generation.

`MemoryBM25` (bm25.py) reads a query term's postings from the per-batch blobs of the postings table
and computes the BM25 arithmetic for every matching chunk, at every query: for a common word in a
large KB that is most of the query's time. Here both are done once, when an ingest ends
(`build`): for every term, its chunks' rowids (int32) and its contribution to each chunk's score
(idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avgdl)), float64), term after term, each
term's rows ascending (a CSC matrix, the layout bm25s uses). A query is then a lookup of its terms'
slices of two memory-mapped files and an add into a dense score array: a memory read per term, no
decoding, no arithmetic; memory is the file pages the query touches.

The contributions are MemoryBM25's own (same expression, same float64 operations, added in the same
order), so the ranking and the scores are exactly its -- and FTS5's (tests/test_kb.py). float64
rather than float32: rounding each contribution would change the last digits of a score and could
swap two rows that score almost alike.

Layout: a folder beside the lexical file (`lexical.sqlite` -> `lexical.sqlite.scores/`), one folder per
generation stamp (kb_meta 'generation', changed by every write) holding `rows.i32`, `scores.f64` and
`terms.sqlite` (term -> first entry and document frequency, and the generation's chunk count). A write
makes it stale: searches then use MemoryBM25 until the next `kb ingest` builds it again. Only ASCII
terms are in it (each is exactly one FTS5 token); a query with another term uses MemoryBM25.
"""

from __future__ import annotations

import mmap
import os
import shutil
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from .bm25 import LENGTHS, REMOVED_ROWS, MemoryBM25, term_idf
from .sync import give_back_memory

if TYPE_CHECKING:
    import numpy as np

BUILD_POSTINGS = 500_000  # (term, chunk) entries computed at a time while building: ~80 MB, as fast as 2M


def folder_for(lexical_file: Path) -> Path:
    return lexical_file.with_name(lexical_file.name + ".scores")


def _generation(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT value FROM kb_meta WHERE key='generation'").fetchone()
    return row[0] if row else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _tidy(folder: Path, keep: str) -> None:
    """Remove the other generations' folders and unfinished builds of processes that are gone. (A process
    still reading a removed generation keeps its mapped files: they go when it closes them.)"""
    for p in folder.iterdir():
        if p.name == keep:
            continue
        if p.name.startswith("."):
            pid = p.name.rsplit(".", 1)[-1]
            if not pid.isdigit() or _pid_alive(int(pid)):
                continue
        shutil.rmtree(p, ignore_errors=True)


def build(db: sqlite3.Connection, folder: Path) -> bool:
    """Write the score index of the KB's current generation unless it is there; False when it is not made
    (no generation, a KB without a postings table, an unexpected layout, no room on the disk: searches
    then read the postings as before). Reads one snapshot (its own read transaction); the caller holds
    the KB's lock."""
    memory = MemoryBM25()
    tmp = None
    db.execute("BEGIN")
    try:
        generation = _generation(db)
        if generation and (folder / generation / "terms.sqlite").is_file():
            return True  # an ingest that changed nothing: no numpy import, nothing read
        import numpy as np

        if not generation or not memory.ensure(db, generation) or not memory.from_postings:
            return False
        assert memory.lengths is not None
        if len(memory.lengths) >= 2**31:
            return False
        tmp = folder / f".{generation}.{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        _write(db, memory, tmp, np)
        terms = sqlite3.connect(tmp / "terms.sqlite")
        try:
            with terms:
                terms.execute("INSERT INTO meta(key, value) VALUES('generation', ?)", (generation,))
        finally:
            terms.close()
    except (OSError, sqlite3.OperationalError):  # a full disk or a folder that cannot be written
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        return False
    finally:
        db.execute("COMMIT")
    try:
        os.rename(tmp, folder / generation)
    except OSError:  # another process built the same generation first
        shutil.rmtree(tmp, ignore_errors=True)
    _tidy(folder, generation)
    return True


def _write(db: sqlite3.Connection, memory: MemoryBM25, tmp: Path, np) -> None:
    """Stream the postings table term by term into tmp/rows.i32, tmp/scores.f64 and tmp/terms.sqlite."""
    lengths = memory.lengths
    assert lengths is not None  # build() loaded them
    n = memory.n
    avgdl = memory.total / n if n else 1.0
    k1, b = MemoryBM25.K1, MemoryBM25.B
    norm_of = k1 * (1.0 - b + b * lengths / avgdl)  # elementwise, so each row's value is MemoryBM25.top's
    terms = sqlite3.connect(tmp / "terms.sqlite")
    terms.execute("CREATE TABLE terms(term TEXT PRIMARY KEY, start INTEGER, df INTEGER) WITHOUT ROWID")
    terms.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value)")
    done = 0
    names: list[str] = []
    counts: list[int] = []
    rid_parts: list[bytes] = []
    tf_parts: list[bytes] = []
    idf_of: dict[int, float] = {}

    def flush(f_rows, f_scores) -> None:
        nonlocal done
        if not names:
            return
        rows = np.frombuffer(b"".join(rid_parts), dtype=np.uint32)
        tf = np.frombuffer(b"".join(tf_parts), dtype=np.float32)
        rid_parts.clear()
        tf_parts.clear()
        term_of = np.repeat(np.arange(len(names)), counts)
        live = rows < len(lengths)
        live[live] = lengths[rows[live]] > 0  # rows removed since are left out (MemoryBM25._from_postings)
        if not live.all():
            rows, tf, term_of = rows[live], tf[live], term_of[live]
        del live
        df = np.bincount(term_of, minlength=len(names))
        for d in set(df.tolist()) - idf_of.keys():
            idf_of[d] = term_idf(n, d)
        idf = np.array([idf_of[d] for d in df.tolist()], dtype=np.float64)
        # MemoryBM25.top's expression, idf * tf * (k1 + 1) / (tf + norm), operation by operation, each
        # one in place: the same float64 values as the expression, with two arrays alive instead of six
        contrib = idf[term_of]
        del term_of
        contrib *= tf
        contrib *= k1 + 1.0
        norm = norm_of[rows]
        norm += tf  # tf + norm: an addition is the same either way round
        contrib /= norm
        del norm
        f_rows.write(rows.astype(np.int32))
        f_scores.write(contrib)
        starts = done + np.concatenate(([0], np.cumsum(df)[:-1]))
        terms.executemany(
            "INSERT INTO terms(term, start, df) VALUES(?,?,?)",
            [(t, s, d) for t, s, d in zip(names, starts.tolist(), df.tolist(), strict=True) if d],
        )
        done += int(df.sum())
        names.clear()
        counts.clear()

    pending = 0
    with open(tmp / "rows.i32", "wb") as f_rows, open(tmp / "scores.f64", "wb") as f_scores, terms:
        for term, rids, tfs in db.execute(
            "SELECT term, rids, tfs FROM postings WHERE term NOT IN (?, ?) ORDER BY term, seg", (LENGTHS, REMOVED_ROWS)
        ):
            if not term.isascii():
                continue  # FTS5 may split it: MemoryBM25 reads such a term from FTS5
            if not names or names[-1] != term:
                if pending >= BUILD_POSTINGS:
                    flush(f_rows, f_scores)
                    pending = 0
                    # What the flush's arrays used, given back before the next: after an ingest's batches
                    # the C heap's free memory lies in holes the arrays would fill page by page, and keep.
                    give_back_memory()
                names.append(term)
                counts.append(0)
            rid_parts.append(rids)
            tf_parts.append(tfs)
            counts[-1] += len(rids) // 4
            pending += len(rids) // 4
        flush(f_rows, f_scores)
        terms.executemany(
            "INSERT INTO meta(key, value) VALUES(?, ?)", [("n", n), ("size", len(lengths)), ("entries", done)]
        )
    terms.close()


def _floor(dense, lists: list[tuple], n: int) -> float:
    """A score no higher than the n-th best row's (MemoryBM25._floor): the n-th best among the rows of the
    rarest term holding n rows or more (a term's rows are distinct: no np.unique), else MemoryBM25's."""
    import numpy as np

    enough = [r for r, _ in lists if len(r) >= n]
    if not enough:
        return MemoryBM25._floor(dense, lists, n)
    sub = dense[min(enough, key=len)]
    return float(np.partition(sub, len(sub) - n)[len(sub) - n])


class ScoreIndex:
    """The score index of one KB, opened for the generation a search sees; the caller holds the KB's lock."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.generation: str | None = None
        self.checked = False  # the folder was looked at for `generation`
        self.terms: sqlite3.Connection | None = None
        self.rows: np.ndarray | None = None
        self.scores: np.ndarray | None = None
        self.buf: np.ndarray | None = None
        self.n = 0
        self.maps: tuple = ()  # (mmap, bytes an entry) of the two files
        self.spans: list[tuple[int, int]] = []  # (first entry, entries) of the terms a search read

    def _release(self) -> None:
        """Unmap the pages the last search read (they stay in the page cache, and map again on the next
        read): the process's memory stays that of one search, not of every word ever searched."""
        if hasattr(mmap, "MADV_DONTNEED"):
            for m, width in self.maps:
                for start, count in self.spans:
                    if count:
                        first = start * width // mmap.PAGESIZE * mmap.PAGESIZE
                        m.madvise(mmap.MADV_DONTNEED, first, (start + count) * width - first)
        self.spans = []

    def close(self) -> None:
        if self.terms is not None:
            self.terms.close()
        self.terms, self.rows, self.scores, self.buf, self.checked = None, None, None, None, False
        self.maps, self.spans = (), []

    def discard(self) -> None:
        """Close and delete every generation's files (the KB was reset or its lexical index rebuilt)."""
        self.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def current(self, generation: str | None) -> bool:
        """Open for `generation` (looked for once per generation); False if there is none for it."""
        if generation != self.generation or not self.checked:
            self.close()
            self.generation, self.checked = generation, True
            if generation:
                self._open(self.folder / generation)
        return self.terms is not None

    def build(self, db: sqlite3.Connection) -> None:
        """Build the current generation's index if it is not there (`build`), then look for it again."""
        build(db, self.folder)
        self.close()

    def _open(self, where: Path) -> None:
        if not (where / "terms.sqlite").is_file():
            return
        import numpy as np

        try:
            terms = sqlite3.connect(f"{(where / 'terms.sqlite').as_uri()}?mode=ro", uri=True, check_same_thread=False)
            meta = dict(terms.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("generation") != self.generation:
                terms.close()
                return
            entries, size = int(meta["entries"]), int(meta["size"])
            maps: tuple = ()
            if entries:  # plain arrays over the mapped files (np.memmap's slicing costs more than the read)
                with open(where / "rows.i32", "rb") as f_rows, open(where / "scores.f64", "rb") as f_scores:
                    maps = tuple(
                        (mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), w) for f, w in ((f_rows, 4), (f_scores, 8))
                    )
                rows = np.frombuffer(maps[0][0], dtype=np.int32, count=entries)
                scores = np.frombuffer(maps[1][0], dtype=np.float64, count=entries)
            else:
                rows, scores = np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float64)
        except (sqlite3.Error, OSError, ValueError, KeyError):
            return  # a build cut short or a damaged folder: MemoryBM25 answers
        self.terms, self.rows, self.scores, self.n, self.maps = terms, rows, scores, int(meta["n"]), maps
        self.buf = np.zeros(size, dtype=np.float64)

    def _lists(self, terms: list[str]) -> tuple[list[tuple], list[float]] | None:
        """Each term's (rowids, contributions) slices and IDF; None if a term is not ASCII."""
        if not all(t.isascii() for t in terms):
            return None
        assert self.terms is not None and self.rows is not None and self.scores is not None
        marks = ",".join("?" * len(terms))
        sql = f"SELECT term, start, df FROM terms WHERE term IN ({marks})"
        found = {t: (s, d) for t, s, d in self.terms.execute(sql, terms)}
        lists, idf = [], []
        for t in terms:
            start, df = found.get(t, (0, 0))
            self.spans.append((start, df))
            lists.append((self.rows[start : start + df], self.scores[start : start + df]))
            idf.append(term_idf(self.n, df))
        return lists, idf

    def top(self, terms: list[str], n: int) -> tuple[list[tuple[int, float]], float] | None:
        """MemoryBM25.top from the precomputed contributions: ([(rowid, raw BM25)] best first, ideal)."""
        try:
            return self._top(terms, n)
        finally:
            self._release()

    def raw(self, terms: list[str], rowids: list[int]) -> dict[int, float] | None:
        """{rowid: raw BM25} of the given rows (MemoryBM25.raw); None if a term is not ASCII."""
        try:
            return self._raw(terms, rowids)
        finally:
            self._release()

    def _top(self, terms: list[str], n: int) -> tuple[list[tuple[int, float]], float] | None:
        import numpy as np

        got = self._lists(terms)
        if got is None:
            return None
        lists, idf = got
        ideal = sum(idf)
        if not self.n or not any(len(r) for r, _ in lists):
            return [], ideal
        if len(lists) > 1:  # summed per row in the query's term order, as MemoryBM25.top's bincount does
            dense = self.buf
            assert dense is not None
            for r, c in lists:
                if len(r):
                    dense[r] += c  # a term's rows are distinct: one add per row
            rows = np.flatnonzero(dense >= _floor(dense, lists, n))
            scores = dense[rows]
            if sum(len(r) for r, _ in lists) > len(dense) // 8:
                dense.fill(0.0)  # cheaper than a scattered write of that many rows
            else:
                for r, _ in lists:
                    dense[r] = 0.0
        else:
            rows, scores = lists[0]
        if len(scores) > n:  # keep the n best and every row tied with the n-th, so ties go by rowid below
            keep = scores >= np.partition(scores, len(scores) - n)[len(scores) - n]
            rows, scores = rows[keep], scores[keep]
        order = np.lexsort((rows, -scores))[:n]  # best first; equal scores by rowid
        return [(int(rows[i]), float(scores[i])) for i in order], ideal

    def _raw(self, terms: list[str], rowids: list[int]) -> dict[int, float] | None:
        import numpy as np

        got = self._lists(terms)
        if got is None:
            return None
        want = np.asarray(rowids, dtype=np.int64)
        total = np.zeros(len(want))
        for rows, contrib in got[0]:
            if not len(rows):
                continue
            at = np.minimum(np.searchsorted(rows, want), len(rows) - 1)
            total += np.where(rows[at] == want, contrib[at], 0.0)
        return {int(r): float(s) for r, s in zip(want.tolist(), total.tolist(), strict=True) if s > 0}
