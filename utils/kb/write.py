"""The KB's write path, in three steps: build the chunk rows of a batch of documents, upsert their
vectors into Chroma, then replace the sources' rows in the lexical index (one SQLite transaction,
run by the caller). Vectors go first, so after a crash the worst case is a vector without a chunk
row, which searches skip and the next open repairs (utils/kb/sync.py)."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain
from typing import NamedTuple

from ..text import analyze
from .bm25 import LENGTHS, REMOVED_ROWS, TITLE_WEIGHT, docsize_since
from .chunking import DEFAULT_SIZE, ChunkSize, chunk_sections, chunk_spans, join_pieces
from .structure import sections

CHROMA_BATCH = 5000  # below Chroma's max batch size (5461 here); large batches are fastest
SQL_BATCH = 500  # sources per "IN (...)" query


@dataclass
class Doc:
    """One document to store under `source` (a file path or URL); `doc_hash` identifies its content."""

    source: str
    title: str
    text: str
    source_type: str
    doc_hash: str
    session_id: str | None = None
    structured: bool = False  # text in the structured readers' form: chunks carry heading paths
    stamp: str = ""  # a file's size and modification time when read ("" if none): utils/kb/ingest.py

    @classmethod
    def removal(cls, source: str) -> Doc:
        """Writing this removes the source: no chunks, and no row in the sources table."""
        return cls(source, "", "", "", REMOVED)


REMOVED = ""  # the doc_hash of a removal (utils/kb/manage.py): a document's content never hashes to it


class ChunkRow(NamedTuple):
    """One chunk as stored: a row of the `chunks` table (in column order) and a Chroma record's id and
    metadata. The field names are the metadata keys a Chroma server holds (`META_KEYS`)."""

    id: str
    source: str
    chunk: int
    title: str
    text: str
    content_hash: str
    doc_hash: str
    source_type: str
    ingested_at: str
    session_id: str | None
    section: str = ""  # heading path ("Title › Section › Subsection"); "" for a document without structure

    @property
    def index_title(self) -> str:
        """What retrieval reads as the chunk's title: its heading path, else the document's title."""
        return self.section or self.title

    def metadata(self) -> dict:
        """Metadata for a Chroma server (None values left out: Chroma refuses them)."""
        return {k: v for k in META_KEYS if (v := getattr(self, k)) is not None and (v or k != "section")}

    @classmethod
    def from_server(cls, cid: str, document: str | None, md: dict | None) -> ChunkRow:
        md = md or {}
        return cls(
            cid,
            md.get("source", ""),
            int(md.get("chunk", 0)),
            md.get("title", ""),
            document or "",
            md.get("content_hash", ""),
            md.get("doc_hash", ""),
            md.get("source_type", "file"),
            md.get("ingested_at", ""),
            md.get("session_id"),
            md.get("section") or "",
        )


META_KEYS = tuple(f for f in ChunkRow._fields if f not in ("id", "text"))
CHUNK_COLUMNS = ", ".join(ChunkRow._fields)


@dataclass
class Batch:
    """The rows of a batch of documents, with what the later steps need from the analysis."""

    docs: list[Doc]
    rows: list[ChunkRow] = field(default_factory=list)
    terms: list[tuple[list[str], list[str]]] = field(default_factory=list)  # (title terms, text terms) per row
    fts: list[tuple[str, str]] = field(default_factory=list)  # FTS5 (title, body) columns per row


def sha256_hex(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def chunk_id(source: str, doc_hash: str, index: int) -> str:
    """Deterministic, so writing the same chunk again (a retry after a crash) is harmless."""
    return hashlib.sha1(f"{source}\x00{doc_hash}\x00{index}".encode()).hexdigest()[:32]


# --------------------------------------------------------------------------------------------
# 1. build rows
# --------------------------------------------------------------------------------------------


def build_rows(docs: list[Doc], now: str, size: ChunkSize = DEFAULT_SIZE) -> Batch:
    """Chunk and analyse each document: its rows, index terms and FTS5 columns."""
    batch = Batch(docs)
    for d in docs:
        # Analyse each sentence once, although the overlap puts some in two chunks.
        if d.structured:
            pieces, spans, labels = chunk_sections(sections(d.title, d.text), *size)
        else:
            pieces, spans = chunk_spans(d.text, *size)
            labels = [""] * len(spans)
        doc_terms = analyze(d.title)
        piece_terms = [analyze(p) for p in pieces]
        piece_cols = [" ".join(t) for t in piece_terms]
        label_terms: dict[str, list[str]] = {"": doc_terms}
        for i, (start, end) in enumerate(spans):
            label = labels[i]
            if label not in label_terms:
                label_terms[label] = analyze(label)  # the heading path is indexed as the chunk's title
            title_terms = label_terms[label]
            piece = join_pieces(pieces[start:end])
            batch.rows.append(
                ChunkRow(
                    chunk_id(d.source, d.doc_hash, i),
                    d.source,
                    i,
                    d.title,
                    piece,
                    sha256_hex(piece)[:16],
                    d.doc_hash,
                    d.source_type,
                    now,
                    d.session_id,
                    label,
                )
            )
            batch.terms.append((title_terms, list(chain.from_iterable(piece_terms[start:end]))))
            batch.fts.append((" ".join(title_terms), " ".join(filter(None, piece_cols[start:end]))))
    return batch


def _by_source(db: sqlite3.Connection, sql: str, sources: list[str]):
    """Run `sql` (with one "{marks}" for the placeholders) over `sources`, SQL_BATCH at a time."""
    for i in range(0, len(sources), SQL_BATCH):
        part = sources[i : i + SQL_BATCH]
        yield from db.execute(sql.format(marks=",".join("?" * len(part))), part)


def stale_ids(db: sqlite3.Connection, batch: Batch) -> list[str]:
    """Ids of the chunks now stored for the batch's sources that the batch does not write again."""
    new_ids = {r.id for r in batch.rows}
    sources = [d.source for d in batch.docs]
    return [
        r[0] for r in _by_source(db, "SELECT id FROM chunks WHERE source IN ({marks})", sources) if r[0] not in new_ids
    ]


# --------------------------------------------------------------------------------------------
# 2. upsert vectors
# --------------------------------------------------------------------------------------------

Embed = Callable[[list[tuple[str, str]], list[list[str]]], object]  # ((title, text) pairs, terms) -> vectors


def upsert_vectors(col, batch: Batch, stale: list[str], embed: Embed, *, server: bool) -> float:
    """Delete the stale vectors and upsert the batch's; returns the seconds spent embedding.

    A Chroma server gets documents and full metadata too (so the collection there is complete on its
    own); the embedded store gets the vector alone: Chroma's per-record cost grows with every metadata
    key and with documents (its trigram full-text index; docs/measurements.md), while SQLite
    already has both.
    """
    t_embed = 0.0
    for i in range(0, len(stale), CHROMA_BATCH):
        col.delete(ids=stale[i : i + CHROMA_BATCH])
    for i in range(0, len(batch.rows), CHROMA_BATCH):
        part = batch.rows[i : i + CHROMA_BATCH]
        t0 = time.perf_counter()
        vecs = embed([(r.index_title, r.text) for r in part], [t + x for t, x in batch.terms[i : i + CHROMA_BATCH]])
        t_embed += time.perf_counter() - t0
        ids = [r.id for r in part]
        if server:
            col.upsert(
                ids=ids, embeddings=vecs, metadatas=[r.metadata() for r in part], documents=[r.text for r in part]
            )
        else:
            col.upsert(ids=ids, embeddings=vecs)
    return t_embed


# --------------------------------------------------------------------------------------------
# 3. replace lexical
# --------------------------------------------------------------------------------------------


class _Ids(dict):
    """term -> its number in this batch, numbered on first sight."""

    def __missing__(self, term: str) -> int:
        self[term] = n = len(self)
        return n


def write_postings(db: sqlite3.Connection, base: int, fts: list[tuple[str, str]], terms: list | None = None) -> None:
    """The rows' postings, one segment (`seg` = its first rowid) per term: the rowids (uint32) and the
    term's count in each, the title's weighted (float32) -- what FTS5 holds, read back in one blob per
    segment instead of one row per instance (utils/kb/bm25.py). Rows removed later leave their postings
    behind (rowids are never used again: `insert_chunks`); a search skips rows that are gone.
    `terms`: each row's (title terms, text terms) when already at hand, else the FTS5 columns are split.
    The segments go to SQLite one at a time, in term order, and the arrays that computed them are gone
    by then (`_segments`): a write batch's memory is its rows, not its rows and their postings twice."""
    if terms is None:
        terms = [(a.split(), b.split()) for a, b in fts]
    got = _segments(terms, base)
    if got is None:
        return
    names, firsts, ends, row_bytes, tf_bytes = got  # both 4 bytes an entry: one slice of each per term
    order = sorted(range(len(names)), key=names.__getitem__)
    db.executemany(
        "INSERT OR REPLACE INTO postings(term, seg, rids, tfs) VALUES(?,?,?,?)",
        (
            (names[i], base, row_bytes[4 * firsts[i] : 4 * ends[i]], tf_bytes[4 * firsts[i] : 4 * ends[i]])
            for i in order
        ),
    )


def _segments(terms: list, base: int) -> tuple[list[str], list[int], list[int], bytes, bytes] | None:
    """Each term's segment of `write_postings`: (its term, first entry, end) in parallel lists, and the
    entries' rowids and counts as bytes; None when the rows hold no term."""
    import numpy as np

    sizes = [len(t) + len(x) for t, x in terms]
    count = sum(sizes)
    if not count:
        return None
    ids = _Ids()
    n_rows = len(terms)
    keys = np.fromiter(
        map(ids.__getitem__, chain.from_iterable(chain(t, x) for t, x in terms)), dtype=np.int64, count=count
    )
    keys *= n_rows  # (term, row) as one number, term first
    keys += np.repeat(np.arange(n_rows, dtype=np.int64), sizes)
    weights = np.ones(count)
    at = 0
    for (t, _), size in zip(terms, sizes, strict=True):
        weights[at : at + len(t)] = TITLE_WEIGHT
        at += size
    keys, where = np.unique(keys, return_inverse=True)
    tf = np.bincount(where, weights=weights).astype(np.float32)
    del where, weights
    term_id = keys // n_rows
    rows = (keys % n_rows + base).astype(np.uint32)
    del keys
    firsts = np.concatenate(([0], np.flatnonzero(np.diff(term_id)) + 1))
    names = list(ids)
    seg_names = [names[t] for t in term_id[firsts].tolist()]
    starts = firsts.tolist()
    return seg_names, starts, [*starts[1:], len(term_id)], rows.tobytes(), tf.tobytes()


def insert_chunks(
    db: sqlite3.Connection, rows: list[ChunkRow], fts: list[tuple[str, str]] | None = None, terms: list | None = None
) -> int:
    """Insert chunk rows and their FTS5 rows (analysed here unless given) and postings; returns the first
    rowid used. Rowids are never used twice (kb_meta 'last_rid'), so old postings never name a new row."""
    last = db.execute("SELECT value FROM kb_meta WHERE key='last_rid'").fetchone()
    base = max(db.execute("SELECT coalesce(max(rid), 0) FROM chunks").fetchone()[0], int(last[0]) if last else 0) + 1
    marks = ",".join("?" * (len(ChunkRow._fields) + 1))
    db.executemany(
        f"INSERT INTO chunks(rid, {CHUNK_COLUMNS}) VALUES({marks})", [(base + i, *r) for i, r in enumerate(rows)]
    )
    if fts is None:
        fts = [(" ".join(analyze(r.index_title or "")), " ".join(analyze(r.text or ""))) for r in rows]
    db.executemany(
        "INSERT INTO chunks_fts(rowid, title, body) VALUES(?,?,?)", [(base + i, a, b) for i, (a, b) in enumerate(fts)]
    )
    if rows:
        db.execute("INSERT OR REPLACE INTO kb_meta(key, value) VALUES('last_rid', ?)", (str(base + len(rows) - 1),))
        if db.execute("SELECT 1 FROM kb_meta WHERE key='postings'").fetchone():
            write_postings(db, base, fts, terms)
            got = docsize_since(db, base)  # the rows' lengths as FTS5 counts them, read back in one blob
            if got is not None:
                db.execute(
                    "INSERT OR REPLACE INTO postings(term, seg, rids, tfs) VALUES(?,?,?,?)",
                    (LENGTHS, base, got[0].astype("uint32").tobytes(), got[1].astype("float32").tobytes()),
                )
    return base


def replace_lexical(db: sqlite3.Connection, batch: Batch, now: str) -> tuple[list[int], int]:
    """Inside the caller's transaction: replace the rows of the batch's sources with the batch's rows and
    update the sources table. Returns (rowids removed, first rowid inserted)."""
    sources = [d.source for d in batch.docs]
    removed = [r[0] for r in _by_source(db, "SELECT rid FROM chunks WHERE source IN ({marks})", sources)]
    for i in range(0, len(sources), SQL_BATCH):
        part = sources[i : i + SQL_BATCH]
        marks = ",".join("?" * len(part))
        db.execute(f"DELETE FROM chunks_fts WHERE rowid IN (SELECT rid FROM chunks WHERE source IN ({marks}))", part)
        db.execute(f"DELETE FROM chunks WHERE source IN ({marks})", part)
    if removed and db.execute("SELECT 1 FROM kb_meta WHERE key='postings'").fetchone():
        from array import array

        db.execute(
            "INSERT INTO postings(term, seg, rids, tfs) "
            "SELECT ?, coalesce(max(seg), 0) + 1, ?, x'' FROM postings WHERE term = ?",
            (REMOVED_ROWS, array("I", removed).tobytes(), REMOVED_ROWS),
        )
    base = insert_chunks(db, batch.rows, batch.fts, batch.terms)
    per_source: dict[str, int] = {}
    for r in batch.rows:
        per_source[r.source] = per_source.get(r.source, 0) + 1
    db.executemany(
        "INSERT OR REPLACE INTO sources(source, title, source_type, doc_hash, chunks, ingested_at, session_id, stamp) "
        "VALUES(?,?,?,?,?,?,?,?)",
        [
            (d.source, d.title, d.source_type, d.doc_hash, per_source.get(d.source, 0), now, d.session_id, d.stamp)
            for d in batch.docs
            if d.doc_hash != REMOVED
        ],
    )
    db.executemany("DELETE FROM sources WHERE source=?", [(d.source,) for d in batch.docs if d.doc_hash == REMOVED])
    return removed, base
