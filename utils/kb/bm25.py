"""BM25 over the KB's SQLite FTS5 index: FTS5's own bm25(), or the same formula computed in memory.

FTS5 calls its bm25() once per matching row, so a question with a few common words (half of the
chunks matching) is slow there. `MemoryBM25` computes the same scores with numpy over postings read
once per term: from the KB's postings table (utils/kb/write.py: per write batch, one row per term
holding its rowids and counts as blobs, and the batch's row lengths) in a few rows, or, in a KB made
before that table, from the FTS5 index itself (the fts5vocab 'instance' table, one row per instance)
with row lengths decoded from FTS5's docsize table -- a private format (SQLite varints, one per
column), so the decoder checks the layout and gives up (the caller then uses FTS5) if it differs.
A query is then a few array operations (timings: bench/kb.py). Same rows, same order (equal scores
by rowid), same scores as FTS5 -- tests/test_kb.py compares rankings and scores.

`BM25.rank` chooses: the score index (utils/kb/score_index.py: the same scores, precomputed by an
ingest) when it is current; else an instance's first search in a small KB goes to FTS5 (no numpy
import for a one-off `kb search`), later ones, and every one in a KB of MEMORY_FIRST_ROWS chunks or
more, to memory.
Scores are normalised to [0, 1] (`share`): raw BM25 as a share
of the BM25 an ideal chunk would get (every query term once in the text of an average-length chunk:
the sum of the query terms' IDF), kept as it is up to 0.5 and bent towards 1 above, never reaching
it. So a score means the same however many chunks match: an ideal chunk is 0.82, one with every term
twice over 0.97; a cap at 1 made every good hit of a short query 1.000 alike.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter, defaultdict
from itertools import chain
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

TITLE_WEIGHT = 2.0  # BM25 column weight of the title relative to the text


SHARE_KNEE = 0.5  # below this share of an ideal chunk's BM25 the score is the share itself


def share(raw: float, ideal: float) -> float:
    """A raw BM25 as a 0-1 score: its share r of an ideal chunk's, as it is up to SHARE_KNEE, then
    1 - (1 - knee) * exp(-(r - knee) / (1 - knee)) (smooth, rising, below 1): never capped."""
    if ideal <= 0 or raw <= 0:
        return 0.0
    r = raw / ideal
    if r <= SHARE_KNEE:
        return r
    return 1.0 - (1.0 - SHARE_KNEE) * math.exp(-(r - SHARE_KNEE) / (1.0 - SHARE_KNEE))


def term_idf(n_docs: int, df: int) -> float:
    """FTS5's IDF: log((N - df + 0.5) / (df + 0.5)), floored at 1e-6."""
    return max(1e-6, math.log((n_docs - df + 0.5) / (df + 0.5)))


def fts5_top(db: sqlite3.Connection, terms: list[str], n: int) -> list[tuple[int, float]]:
    """[(rowid, raw BM25)] best first, by SQLite's own bm25() (equal scores by rowid)."""
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    return db.execute(
        f"SELECT rowid, -bm25(chunks_fts, {TITLE_WEIGHT}, 1.0) FROM chunks_fts WHERE chunks_fts MATCH ? "
        f"ORDER BY bm25(chunks_fts, {TITLE_WEIGHT}, 1.0), rowid LIMIT ?",
        (match, n),
    ).fetchall()


def fts5_scores(db: sqlite3.Connection, terms: list[str], ids: list[str]) -> dict[str, float]:
    """{chunk id: raw BM25} for the given chunks, by SQLite's own bm25() (what `kb search` shows)."""
    if not terms or not ids:
        return {}
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    marks = ",".join("?" * len(ids))
    return dict(
        db.execute(
            f"SELECT c.id, -bm25(chunks_fts, {TITLE_WEIGHT}, 1.0) FROM chunks_fts JOIN chunks c ON c.rid = "
            f"chunks_fts.rowid WHERE chunks_fts MATCH ? AND c.id IN ({marks})",
            (match, *ids),
        ).fetchall()
    )


def doc_freqs(db: sqlite3.Connection, terms: list[str]) -> dict[str, int]:
    """How many chunks hold each term (FTS5's vocabulary table); a term no chunk holds is left out."""
    marks = ",".join("?" * len(terms))
    return dict(db.execute(f"SELECT term, doc FROM chunks_vocab WHERE term IN ({marks})", terms).fetchall())


IDF_MIN_CHUNKS = 100  # fewer chunks than this say nothing about how common a word is


def smooth_idf(db: sqlite3.Connection, terms: list[str], n_docs: int) -> dict[str, float]:
    """{term: log(1 + (N - df + 0.5) / (df + 0.5))}, never 0 (FTS5's own IDF is floored at 0 for a word in
    half the chunks); {} below IDF_MIN_CHUNKS chunks."""
    if n_docs < IDF_MIN_CHUNKS or not terms:
        return {}
    df = doc_freqs(db, terms)
    return {t: round(math.log(1 + (n_docs - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)), 3) for t in terms}


def fts5_ideal(db: sqlite3.Connection, terms: list[str], n_docs: int) -> float:
    """The BM25 of an ideal chunk for `terms` (the sum of their IDF), document frequencies from FTS5."""
    df = doc_freqs(db, terms)
    return sum(term_idf(n_docs, df.get(t, 0)) for t in terms)


_UNLOADED = object()


def _varint_sums(data: bytes, ncols: int):
    """Per-row sums of SQLite varints packed ncols to a row (FTS5's docsize blobs); None if the layout differs."""
    import numpy as np

    b = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(b < 0x80)  # the last byte of each varint has its high bit clear
    if not len(ends) or len(ends) % ncols or ends[-1] != len(b) - 1:
        return None
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    nbytes = ends - starts + 1
    if int(nbytes.max()) > 8:
        return None
    vals = np.zeros(len(ends), dtype=np.int64)
    for k in range(int(nbytes.max())):  # big-endian groups of 7 bits
        m = nbytes > k
        vals[m] = (vals[m] << 7) | (b[starts[m] + k] & 0x7F).astype(np.int64)
    return vals.reshape(-1, ncols).sum(axis=1)


def _int_list(text: str | None):
    """int64 array from SQLite's group_concat of integers ("3,5,8")."""
    import numpy as np

    if not text:
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(text, dtype=np.int64, sep=",")  # text mode (sep=",") is not the deprecated binary one


LENGTHS = "\x00len"  # postings-table rows that are not a term's: a batch's row lengths (write.py)...
REMOVED_ROWS = "\x00del"  # ...and rows removed by a write


def docsize_since(db: sqlite3.Connection, first: int):
    """(rowids, tokens per row) of the FTS5 rows from rowid `first` on, from FTS5's docsize table; None if
    its layout is not the expected one."""
    ids, blob = db.execute(
        "SELECT group_concat(id), group_concat(hex(sz), '') FROM chunks_fts_docsize WHERE id >= ?", (first,)
    ).fetchone()
    rowids = _int_list(ids)
    sizes = _varint_sums(bytes.fromhex(blob or ""), 2) if len(rowids) else rowids
    if sizes is None or len(sizes) != len(rowids):
        return None
    return rowids, sizes


class MemoryBM25:
    """FTS5's bm25() computed with numpy over postings read once per term; the caller holds the KB's lock.

    FTS5 calls its bm25() once per matching row, so a question with a few common words was slow
    there. Here a term's postings -- rowids and
    title*TITLE_WEIGHT + body counts, read from the FTS5 index through the fts5vocab 'instance'
    table -- are loaded on first use and kept; a query is then a few array operations.
    Row lengths come from FTS5's docsize table. The scores are FTS5's: k1 1.2, b 0.75, idf
    log((N - df + 0.5) / (df + 0.5)) floored at 1e-6, length = all tokens of the row.

    Everything is keyed by the KB's generation stamp (kb_meta, changed in the transaction of
    every write): when another process wrote, it is dropped and read again lazily; this
    instance's own small writes patch it in place (`apply`).
    """

    K1 = 1.2
    B = 0.75
    MAX_POSTINGS = 4_000_000  # cached (rowid, tf) pairs, ~64 MB; past it the cache starts again
    PATCH_MAX_ROWS = 500  # bigger writes drop the cached postings instead of patching them

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.key: object = _UNLOADED
        self.lengths: np.ndarray | None = None  # float64 tokens per rowid, 0 where there is no row
        self.n = 0
        self.total = 0.0
        self.postings: dict[str, tuple | None] = {}  # term -> (rowids, tf); None: FTS5 reads it as a phrase
        self.size = 0
        self.from_postings = False  # the KB keeps a postings table (write.write_postings) to read terms from

    def ensure(self, db: sqlite3.Connection, key: str | None) -> bool:
        """Loaded for generation `key`; False if the FTS5 tables are not laid out as expected."""
        if self.key == key and self.lengths is not None:
            return True
        import numpy as np

        self.clear()
        if db.execute("SELECT 1 FROM kb_meta WHERE key='postings'").fetchone():
            self._lengths_from_postings(db)
            self.key, self.from_postings = key, True
            return True
        ids, blob = db.execute("SELECT group_concat(id), group_concat(hex(sz), '') FROM chunks_fts_docsize").fetchone()
        rowids = _int_list(ids)
        lengths = np.zeros(int(rowids.max()) + 1 if len(rowids) else 1, dtype=np.float64)
        if len(rowids):
            sizes = _varint_sums(bytes.fromhex(blob or ""), 2)
            if sizes is None or len(sizes) != len(rowids):
                return False
            lengths[rowids] = sizes
        self.lengths, self.n, self.total, self.key = lengths, len(rowids), float(lengths.sum()), key
        return True

    def _lengths_from_postings(self, db: sqlite3.Connection) -> None:
        """Row lengths from the postings table's per-batch length blobs, less the rows removed since: a
        few hundred rows read, where FTS5's docsize table is one row per chunk."""
        import numpy as np

        parts: dict[str, list] = {LENGTHS: [], REMOVED_ROWS: []}
        for term, rids, tfs in db.execute(
            "SELECT term, rids, tfs FROM postings WHERE term IN (?, ?) ORDER BY seg", (LENGTHS, REMOVED_ROWS)
        ):
            parts[term].append((np.frombuffer(rids, dtype=np.uint32), np.frombuffer(tfs, dtype=np.float32)))
        rows = np.concatenate([r for r, _ in parts[LENGTHS]] or [np.zeros(0, dtype=np.uint32)]).astype(np.int64)
        sizes = np.concatenate([f for _, f in parts[LENGTHS]] or [np.zeros(0, dtype=np.float32)])
        gone = np.concatenate([r for r, _ in parts[REMOVED_ROWS]] or [np.zeros(0, dtype=np.uint32)]).astype(np.int64)
        top = int(rows.max()) + 1 if len(rows) else 1
        alive = np.zeros(top, dtype=bool)
        alive[rows] = True
        alive[gone[gone < top]] = False
        lengths = np.zeros(top, dtype=np.float64)
        lengths[rows] = sizes
        lengths[~alive] = 0.0
        self.lengths, self.n, self.total = lengths, int(alive.sum()), float(lengths.sum())

    def row_sizes(self, db: sqlite3.Connection, first: int) -> dict[int, int] | None:
        """{rowid: tokens} of the rows from rowid `first` on (just written); None if not loaded."""
        if self.lengths is None:
            return None
        got = docsize_since(db, first)
        return None if got is None else dict(zip(got[0].tolist(), got[1].tolist(), strict=True))

    def _from_postings(self, db: sqlite3.Connection, term: str) -> tuple:
        """A term's (rowids, tf) from the postings table (write.write_postings), rows removed since left out."""
        import numpy as np

        parts = db.execute("SELECT rids, tfs FROM postings WHERE term = ? ORDER BY seg", (term,)).fetchall()
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        # uint32 rowids and float32 counts as stored (numpy widens them exactly where they are used)
        rows = np.concatenate([np.frombuffer(r, dtype=np.uint32) for r, _ in parts])
        tf = np.concatenate([np.frombuffer(f, dtype=np.float32) for _, f in parts])
        assert self.lengths is not None  # loaded by ensure()
        live = rows < len(self.lengths)
        live[live] = self.lengths[rows[live]] > 0
        return (rows, tf) if live.all() else (rows[live], tf[live])

    def _load(self, db: sqlite3.Connection, term: str) -> tuple | None:
        import numpy as np

        if self.from_postings and term.isascii():  # an ASCII term is exactly one FTS5 token
            return self._from_postings(db, term)
        docs, cols = db.execute(
            "SELECT group_concat(doc), group_concat(col = 'title', '') FROM chunks_instances WHERE term = ?", (term,)
        ).fetchone()
        if not docs:
            if (
                not term.isascii()
                and db.execute(
                    "SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1", ('"' + term.replace('"', '""') + '"',)
                ).fetchone()
            ):
                return None  # FTS5 splits this term into several tokens: leave the query to FTS5
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        weights = np.where(np.frombuffer(cols.encode("ascii"), dtype=np.uint8) == ord("1"), TITLE_WEIGHT, 1.0)
        docs_all = _int_list(docs)
        steps = np.diff(docs_all)
        if (steps >= 0).all():  # FTS5 reads a term's instances in rowid order: group them without a sort
            starts = np.concatenate(([0], np.flatnonzero(steps) + 1))
            return docs_all[starts], np.add.reduceat(weights, starts)
        rowids, where = np.unique(docs_all, return_inverse=True)
        return rowids, np.bincount(where, weights=weights, minlength=len(rowids))

    def _lists(self, db: sqlite3.Connection, terms: list[str]) -> list[tuple] | None:
        """Each term's (rowids, tf), loaded once; None if FTS5 must read one of them as a phrase."""
        lists = []
        for t in terms:
            if t not in self.postings:
                if self.size > self.MAX_POSTINGS:
                    self.postings, self.size = {}, 0
                got = self._load(db, t)
                self.postings[t] = got
                self.size += len(got[0]) if got is not None else 0
            got_t = self.postings[t]
            if got_t is None:
                return None
            lists.append(got_t)
        return lists

    def raw(self, db: sqlite3.Connection, terms: list[str], rowids: list[int]) -> dict[int, float] | None:
        """{rowid: raw BM25} of the given rows for `terms` (FTS5's bm25(), as `top` ranks); None: ask FTS5."""
        import numpy as np

        lists = self._lists(db, terms)
        if lists is None or not self.n or self.lengths is None:
            return None
        want = np.asarray(rowids, dtype=np.int64)
        inside = want < len(self.lengths)
        norm = np.ones(len(want))
        norm[inside] = self.K1 * (1.0 - self.B + self.B * self.lengths[want[inside]] / (self.total / self.n))
        total = np.zeros(len(want))
        for rows, tf in lists:
            if not len(rows):
                continue
            at = np.minimum(np.searchsorted(rows, want), len(rows) - 1)
            f = np.where(rows[at] == want, tf[at].astype(np.float64), 0.0)
            total += term_idf(self.n, len(rows)) * f * (self.K1 + 1.0) / (f + norm)
        return {int(r): float(s) for r, s in zip(want.tolist(), total.tolist(), strict=True) if s > 0}

    @staticmethod
    def _floor(dense, lists: list[tuple], n: int) -> float:
        """A score no higher than the n-th best row's: the n-th best among the
        rows of the rarest terms (any n rows' n-th best is at most the overall n-th best), so only rows
        scoring at least this are looked at further. The smallest positive score if there are too few."""
        import numpy as np

        picked, count = [], 0
        for r in sorted((r for r, _ in lists if len(r)), key=len):
            picked.append(r)
            count += len(r)
            if count >= n:
                break
        sub = dense[np.unique(np.concatenate(picked))] if count >= n else dense[:0]
        if len(sub) < n:
            return float(np.nextafter(0.0, 1.0))
        return float(np.partition(sub, len(sub) - n)[len(sub) - n])

    def top(self, db: sqlite3.Connection, terms: list[str], n: int) -> tuple[list[tuple[int, float]], float] | None:
        """([(rowid, raw BM25)] best first, the query's ideal score); None: use FTS5 for this query."""
        import numpy as np

        lists = self._lists(db, terms)
        if lists is None:
            return None
        N = self.n
        idf = [term_idf(N, len(r)) for r, _ in lists]
        ideal = sum(idf)
        if not N or not any(len(r) for r, _ in lists):
            return [], ideal
        avgdl = self.total / N
        rows = np.concatenate([r for r, _ in lists])
        tf = np.concatenate([f for _, f in lists])
        w = np.repeat(np.asarray(idf), [len(r) for r, _ in lists])
        assert self.lengths is not None  # loaded by ensure()
        norm = self.K1 * (1.0 - self.B + self.B * self.lengths[rows] / avgdl)
        contrib = w * tf * (self.K1 + 1.0) / (tf + norm)
        if len(lists) > 1:  # summed per row: a dense array over the rowids is cheaper than sorting the postings
            dense = np.bincount(rows, weights=contrib, minlength=len(self.lengths))
            rows = np.flatnonzero(dense >= self._floor(dense, lists, n))
            scores = dense[rows]
        else:
            scores = contrib
        if len(scores) > n:  # keep the n best and every row tied with the n-th, so ties go by rowid below
            keep = scores >= np.partition(scores, len(scores) - n)[len(scores) - n]
            rows, scores = rows[keep], scores[keep]
        order = np.lexsort((rows, -scores))[:n]  # best first; equal scores by rowid
        return [(int(rows[i]), float(scores[i])) for i in order], ideal

    def apply(
        self, key: str, removed: list[int], lengths: dict[int, int], added: list[tuple[int, list[str], list[str]]]
    ) -> None:
        """Patch for this instance's own write: rows `removed`, rows `added` (rowid, title terms, body terms)."""
        import numpy as np

        if self.lengths is None:
            return
        for r in removed:
            if r < len(self.lengths) and self.lengths[r]:
                self.total -= self.lengths[r]
                self.n -= 1
                self.lengths[r] = 0.0
        top = max(lengths, default=-1)
        if top >= len(self.lengths):
            self.lengths = np.concatenate([self.lengths, np.zeros(top + 1 - len(self.lengths))])
        for r, size in lengths.items():
            self.lengths[r] = size
            self.total += size
            self.n += 1
        patchable = len(added) <= self.PATCH_MAX_ROWS and all(
            t.isascii() for _, tt, tx in added for t in chain(tt, tx)
        )  # ASCII terms are exactly FTS5's tokens
        if self.postings and not patchable:
            self.postings, self.size = {}, 0
        elif self.postings:
            if removed:
                gone = np.asarray(sorted(removed), dtype=np.int64)
                for t, p in self.postings.items():
                    if p is not None and len(p[0]):
                        keep = ~np.isin(p[0], gone, assume_unique=True)
                        if not keep.all():
                            self.postings[t] = (p[0][keep], p[1][keep])
                            self.size -= int((~keep).sum())
            new: dict[str, list[tuple[int, float]]] = {}
            for r, tt, tx in added:
                counts: defaultdict[str, float] = defaultdict(float, Counter(tx))
                for t in tt:
                    counts[t] += TITLE_WEIGHT
                for t in counts.keys() & self.postings.keys():
                    new.setdefault(t, []).append((r, float(counts[t])))
            for t, pairs in new.items():
                p = self.postings[t]
                if p is None:
                    continue
                rows = np.concatenate([p[0], np.array([r for r, _ in pairs], dtype=np.int64)])
                tf = np.concatenate([p[1], np.array([f for _, f in pairs], dtype=np.float64)])
                order = np.argsort(rows, kind="stable")
                self.postings[t] = (rows[order], tf[order])
                self.size += len(pairs)
        self.key = key


MEMORY_FIRST_ROWS = 20_000


def _generation(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT value FROM kb_meta WHERE key='generation'").fetchone()
    return row[0] if row else None


class BM25:
    """The KB's BM25 ranking: FTS5 for an instance's first search, `MemoryBM25` after. The caller holds
    the KB's lock around every call and tells it about its own writes (`written`)."""

    def __init__(self, index=None) -> None:
        self.memory = MemoryBM25()
        self.index = index  # the KB's score index (utils/kb/score_index.py), used when it is current
        self._searched = False
        self._n_cache: tuple[str | None, int] | None = None

    def clear(self) -> None:
        """Forget everything read (the KB was reset or rebuilt)."""
        self.memory.clear()
        if self.index is not None:
            self.index.discard()
        self._n_cache = None

    def close(self) -> None:
        """Let go of the score index's files (the KB is closed; the next search opens them again)."""
        if self.index is not None:
            self.index.close()

    def loaded(self) -> bool:
        """A search ranked in memory (the score index or MemoryBM25): `raw_scores` can give its scores."""
        return self.memory.lengths is not None or (self.index is not None and self.index.terms is not None)

    def build_index(self, db: sqlite3.Connection) -> None:
        """After a bulk write: the score index of the current generation, in a KB of MEMORY_FIRST_ROWS
        chunks or more (a smaller one ranks fast enough without)."""
        if self.index is not None and self._large(db):
            self.index.build(db)

    def rank(self, db: sqlite3.Connection, terms: list[str], n: int) -> list[tuple[int, float]]:
        """[(rowid, score in [0, 1])] best first for analysed, distinct query `terms`."""
        first, self._searched = not self._searched, True
        got = None
        db.execute("BEGIN")  # one snapshot for the generation stamp and what is read under it
        try:
            generation = _generation(db)
            if self.index is not None and self.index.current(generation):
                got = self.index.top(terms, n)
            # One search alone (a `kb search` process) in a small KB is faster in SQLite than importing
            # numpy (~0.1 s) and reading the postings; the in-memory index pays off from the second on.
            if got is None and (not first or self.memory.lengths is not None or self._large(db)):
                if self.memory.ensure(db, generation):
                    got = self.memory.top(db, terms, n)
        finally:
            db.execute("COMMIT")
        if got is None:
            rows = fts5_top(db, terms, n)
            if not rows:
                return []
            ideal = fts5_ideal(db, terms, self._n_docs(db))
        else:
            rows, ideal = got
        return [(rid, share(s, ideal)) for rid, s in rows]

    def raw_scores(self, db: sqlite3.Connection, terms: list[str], rowids: list[int]) -> dict[int, float] | None:
        """{rowid: raw BM25} for rows a search of `terms` just ranked, from the memory index when it is
        loaded and current (what `kb search` shows beside each hit); None: ask FTS5."""
        if not self.loaded() or not terms or not rowids:
            return None
        db.execute("BEGIN")
        try:
            generation = _generation(db)
            if self.index is not None and self.index.current(generation):
                got = self.index.raw(terms, rowids)
                if got is not None:
                    return got
            if self.memory.lengths is None or self.memory.key != generation:
                return None
            return self.memory.raw(db, terms, rowids)
        finally:
            db.execute("COMMIT")

    @staticmethod
    def _large(db: sqlite3.Connection) -> bool:
        """A KB with postings and MEMORY_FIRST_ROWS chunks or more: there FTS5's bm25(), called once per
        matching row, costs more than importing numpy and reading the query's postings."""
        if not db.execute("SELECT 1 FROM kb_meta WHERE key='postings'").fetchone():
            return False
        return (db.execute("SELECT max(rid) FROM chunks").fetchone()[0] or 0) >= MEMORY_FIRST_ROWS

    def _n_docs(self, db: sqlite3.Connection) -> int:
        generation = _generation(db)
        if self._n_cache is None or self._n_cache[0] != generation:
            self._n_cache = (generation, int(db.execute("SELECT count(*) FROM chunks").fetchone()[0]))
        return self._n_cache[1]

    def patch_sizes(self, db: sqlite3.Connection, before: str | None, first_rowid: int) -> dict[int, int] | None:
        """Inside a write's transaction, after its rows went in: the new rows' lengths when the memory
        index was loaded at generation `before` (so the write can be patched in), else None."""
        return self.memory.row_sizes(db, first_rowid) if self.memory.key == before else None

    def written(
        self,
        generation: str,
        removed: list[int],
        sizes: dict[int, int] | None,
        added: list[tuple[int, list[str], list[str]]],
    ) -> None:
        """After this KB's own committed write: patch the memory index (sizes from `patch_sizes`) or drop it."""
        self._n_cache = None
        if sizes is not None:
            self.memory.apply(generation, removed, sizes, added)
        else:
            self.memory.clear()
