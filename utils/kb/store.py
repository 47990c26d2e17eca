"""Sleuth's knowledge base: Chroma vectors plus a lexical BM25 index, kept in step.

Storage (``path`` is the KB folder, normally ``DATA_DIR/kb``)::

    kb/chroma/          embedded Chroma store (chromadb.PersistentClient), collection "sleuth"
    kb/lexical.sqlite   the lexical side: chunk text + metadata, SQLite FTS5 index, sources table

The lexical SQLite file is the KB's record of what is stored: every chunk's text and metadata
(source, title, chunk index, content hash, source_type, ingested_at, session_id), the FTS5
index that ranks with BM25, and one row per source with the hash of its content (what makes
re-ingesting idempotent). Chroma holds one vector per chunk under the same id. Writes go
through one method (`_write`): vectors first, then one SQLite transaction, so after a crash the
worst case is a vector without a chunk row, which searches skip and the next open repairs
(`_repair`: re-embeds chunks that lack a vector, deletes vectors without a chunk).

Embedded mode stores only the vector in Chroma (under the chunk's id): Chroma's per-record cost
grows with every metadata key (~0.8 s per 10k chunks for a lone `source` key here) and with
documents (+~7 s per 10k, for its trigram full-text index), while SQLite already has both.

Server mode (``chroma_url``): vectors, documents and full metadata go to the Chroma server, so
the collection there is complete on its own; the lexical index is a local cache of it in
``kb/lexical-<host>-<port>-<collection>.sqlite``. A generation stamp in the collection's
metadata changes on every write; when the local cache's stamp differs (another machine wrote,
or the cache is new) the cache is rebuilt from the server's documents. So several machines can
share one server and still get BM25 over everything on it.

Search modes (`search(mode=...)`): ``bm25`` (BM25 over analysed title + text, the title weighted
2x), ``vector`` (Chroma nearest neighbours) and ``fused`` (reciprocal-rank fusion, k=60, vector
list weighted 0.5). The default is ``bm25``. Measured on HotpotQA dev-100 (bench/kb.py; 991
pages, both supporting pages among the top 10 distinct pages): bm25 0.84, vector (1024-d hash)
0.69, fused 0.83, while fused costs ~4x the query time and loads Chromadb. Plain BM25 in
embedded mode needs only SQLite (chromadb is never imported). Equal-weight RRF scored 0.82;
256-d hash vectors 0.41 (fused 0.71).

BM25 is SQLite FTS5's bm25() formula, but computed in memory (`_MemoryBM25`): FTS5 calls its
ranking function once per matching row, ~10 ms for a question with common words on 10k chunks;
numpy over postings read once per term from the FTS5 index takes ~1 ms (p50 ~3 ms counting the
first reading of each term's postings). The same rows in the same order as FTS5 (equal scores by
rowid). An instance's first search still goes to FTS5 (no numpy import for a one-off `kb search`).

Scores are in [0, 1], higher is better:
  * bm25: raw BM25 divided by the BM25 an ideal chunk would get (every query term once in the
    text of an average-length chunk: the sum of the query terms' IDF), capped at 1. So 1.0 means
    "all of the query's distinctive words are there", 0.5 about half of their weight.
  * vector: cosine similarity, clipped at 0.
  * fused: the RRF sum divided by its maximum (rank 1 in both lists).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import sqlite3
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import chain
from pathlib import Path
from urllib.parse import urlsplit

from utils.errors import EmbeddingMismatch, KBError
from utils.kb.chunking import PIECE_SEP, chunk_spans
from utils.kb.embeddings import EMBEDDINGS, HASH_DIM, analyze

log = logging.getLogger(__name__)

SEARCH_MODES = ("bm25", "vector", "fused")
DEFAULT_SEARCH_MODE = "bm25"
SOURCE_TYPES = ("file", "web", "feedback")
FILE_TYPES = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}
TITLE_WEIGHT = 2.0  # BM25 column weight of the title relative to the text
RRF_K = 60
RRF_VECTOR_WEIGHT = 0.5  # vectors are the weaker signal (bench/kb.py)
# HNSW: building the graph is most of Chroma's insert time, and its cost follows ef_construction.
# 16 (the floor: max_neighbors, 16 by default) builds in ~3.5 s per 10k 1024-d chunks against ~6.5 s
# at 50; the looser graph is made up at query time by ef_search 1500: neighbour recall@10 against
# exact search 0.96 on 10k chunks, as with (50, 300), for ~2.5 ms more per vector query (bench/kb.py;
# ef_search 1000 gave 0.93-0.96 from one build to the next).
HNSW = {"space": "cosine", "ef_construction": 16, "ef_search": 1500}
CHROMA_BATCH = 5000  # below Chroma's max batch size (5461 here); large batches are fastest
WRITE_BATCH_CHUNKS = 5000
SERVER_SYNC_SECONDS = 5.0
# Chunk metadata stored in a Chroma server (embedded mode keeps only source + chunk there).
_META_KEYS = ("source", "chunk", "title", "content_hash", "doc_hash", "source_type", "ingested_at", "session_id")


@dataclass
class Hit:
    """One retrieved chunk."""

    rank: int
    score: float
    source: str
    title: str
    chunk: int
    text: str
    id: str = ""
    source_type: str = ""
    metadata: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "rank": self.rank,
            "score": round(self.score, 4),
            "source": self.source,
            "title": self.title,
            "chunk": self.chunk,
            "text": self.text,
            "id": self.id,
            "source_type": self.source_type,
        }


@dataclass
class IngestReport:
    files_added: int = 0
    files_unchanged: int = 0
    files_replaced: int = 0
    chunks_added: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files in folders with an unsupported type

    @property
    def files_ok(self) -> int:
        return self.files_added + self.files_unchanged + self.files_replaced


@dataclass
class _Doc:
    source: str
    title: str
    text: str
    source_type: str
    doc_hash: str
    session_id: str | None = None


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _sha(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def _chunk_id(source: str, doc_hash: str, index: int) -> str:
    return hashlib.sha1(f"{source}\x00{doc_hash}\x00{index}".encode()).hexdigest()[:32]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80] or "x"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS kb_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(
    source TEXT PRIMARY KEY, title TEXT, source_type TEXT, doc_hash TEXT, chunks INTEGER,
    ingested_at TEXT, session_id TEXT);
CREATE TABLE IF NOT EXISTS chunks(
    rid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, source TEXT NOT NULL, chunk INTEGER NOT NULL,
    title TEXT, text TEXT, content_hash TEXT, doc_hash TEXT, source_type TEXT, ingested_at TEXT,
    session_id TEXT);
CREATE INDEX IF NOT EXISTS chunks_by_source ON chunks(source);
CREATE INDEX IF NOT EXISTS sources_by_hash ON sources(doc_hash);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(title, body, tokenize='unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_instances USING fts5vocab(chunks_fts, 'instance');
"""


# --------------------------------------------------------------------------------------------
# Reading files
# --------------------------------------------------------------------------------------------


def _read_text_file(data: bytes, path: Path) -> tuple[str, str]:
    if b"\x00" in data[:8192]:
        raise KBError("looks like a binary file, not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    title = path.stem
    if path.suffix.lower() in (".md", ".markdown"):
        m = re.search(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", text, re.M)
        if m:
            title = m.group(1).strip()
    return title, text


def _read_html(data: bytes, path: Path) -> tuple[str, str]:
    from utils.web.extract import extract

    ex = extract(data, url=path.as_uri())
    return (ex.title or path.stem), ex.text


def _read_pdf(data: bytes, path: Path) -> tuple[str, str]:
    import io

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                reader.decrypt("")
            except Exception as exc:  # noqa: BLE001
                raise KBError("the PDF is encrypted") from exc
        pages = [(page.extract_text() or "") for page in reader.pages]
        title = ""
        try:
            title = str((reader.metadata or {}).get("/Title") or "").strip()
        except Exception:  # noqa: BLE001 - broken metadata is not worth failing the file
            title = ""
    except KBError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise KBError(f"not a readable PDF ({exc})") from exc
    return (title or path.stem), "\n\n".join(p.strip() for p in pages if p.strip())


def read_file(path: Path) -> tuple[str, str, bytes]:
    """(title, text, raw bytes) of a supported file; KBError with a clear reason otherwise."""
    kind = FILE_TYPES.get(path.suffix.lower())
    if kind is None:
        raise KBError(f"unsupported file type {path.suffix or '(none)'!r} (supported: {', '.join(sorted(FILE_TYPES))})")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KBError(f"cannot read: {exc.strerror or exc}") from exc
    if kind in ("text", "markdown"):
        title, text = _read_text_file(data, path)
    elif kind == "html":
        title, text = _read_html(data, path)
    else:
        title, text = _read_pdf(data, path)
    if not text.strip():
        raise KBError("no text found" + (" (a scanned PDF without a text layer?)" if kind == "pdf" else ""))
    return title, text, data


def _walk(paths: Iterable[str | Path]) -> tuple[list[Path], list[tuple[str, str]], list[str]]:
    """Files to ingest, errors for missing paths, unsupported files met inside folders."""
    files: list[Path] = []
    errors: list[tuple[str, str]] = []
    skipped: list[str] = []
    for p in paths:
        p = Path(p).expanduser()
        if p.is_dir():
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(names):
                    f = Path(root) / name
                    if name.startswith("."):
                        continue
                    if f.suffix.lower() in FILE_TYPES:
                        files.append(f)
                    else:
                        skipped.append(str(f))
        elif p.exists():
            files.append(p)
        else:
            errors.append((str(p), "no such file or directory"))
    return files, errors, skipped


# --------------------------------------------------------------------------------------------
# BM25 in memory, over the FTS5 index
# --------------------------------------------------------------------------------------------

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


class _MemoryBM25:
    """FTS5's bm25() computed with numpy over postings read once per term; the caller holds the KB's lock.

    FTS5 calls its bm25() once per matching row (~2 us each), so a question with a few common
    words (half of 10k chunks matching) took 10+ ms. Here a term's postings -- rowids and
    title*TITLE_WEIGHT + body counts, read from the FTS5 index through the fts5vocab 'instance'
    table -- are loaded on first use and kept; a query is then a few array operations (~1 ms).
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
        self.lengths = None  # float64 tokens per rowid, 0 where there is no row
        self.n = 0
        self.total = 0.0
        self.postings: dict[str, tuple | None] = {}  # term -> (rowids, tf); None: FTS5 reads it as a phrase
        self.size = 0

    def ensure(self, db: sqlite3.Connection, key: str | None) -> bool:
        """Loaded for generation `key`; False if the FTS5 tables are not laid out as expected."""
        if self.key == key and self.lengths is not None:
            return True
        import numpy as np

        self.clear()
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

    def row_sizes(self, db: sqlite3.Connection, first: int) -> dict[int, int] | None:
        """{rowid: tokens} of the rows from rowid `first` on (just written); None if not loaded."""
        if self.lengths is None:
            return None
        ids, blob = db.execute(
            "SELECT group_concat(id), group_concat(hex(sz), '') FROM chunks_fts_docsize WHERE id >= ?", (first,)
        ).fetchone()
        rowids = _int_list(ids)
        sizes = _varint_sums(bytes.fromhex(blob or ""), 2) if len(rowids) else rowids
        if sizes is None or len(sizes) != len(rowids):
            return None
        return dict(zip(rowids.tolist(), sizes.tolist(), strict=True))

    def _load(self, db: sqlite3.Connection, term: str) -> tuple | None:
        import numpy as np

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
        rowids, where = np.unique(_int_list(docs), return_inverse=True)
        return rowids, np.bincount(where, weights=weights, minlength=len(rowids))

    def top(self, db: sqlite3.Connection, terms: list[str], n: int) -> tuple[list[tuple[int, float]], float] | None:
        """([(rowid, raw BM25)] best first, the query's ideal score); None: use FTS5 for this query."""
        import numpy as np

        lists = []
        for t in terms:
            if t not in self.postings:
                if self.size > self.MAX_POSTINGS:
                    self.postings, self.size = {}, 0
                got = self._load(db, t)
                self.postings[t] = got
                self.size += len(got[0]) if got is not None else 0
            if self.postings[t] is None:
                return None
            lists.append(self.postings[t])
        N = self.n
        idf = [max(1e-6, math.log((N - len(r) + 0.5) / (len(r) + 0.5))) for r, _ in lists]
        ideal = sum(idf)
        if not N or not any(len(r) for r, _ in lists):
            return [], ideal
        avgdl = self.total / N
        rows = np.concatenate([r for r, _ in lists])
        tf = np.concatenate([f for _, f in lists])
        w = np.repeat(np.asarray(idf), [len(r) for r, _ in lists])
        norm = self.K1 * (1.0 - self.B + self.B * self.lengths[rows] / avgdl)
        contrib = w * tf * (self.K1 + 1.0) / (tf + norm)
        if len(lists) > 1:
            rows, where = np.unique(rows, return_inverse=True)
            scores = np.bincount(where, weights=contrib, minlength=len(rows))
        else:
            scores = contrib
        if len(scores) > n:
            keep = np.argpartition(-scores, n - 1)[:n]
            rows, scores = rows[keep], scores[keep]
        order = np.lexsort((rows, -scores))  # best first; equal scores by rowid
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
                counts: Counter = Counter(tx)
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


# --------------------------------------------------------------------------------------------
# The knowledge base
# --------------------------------------------------------------------------------------------


class KnowledgeBase:
    """Chroma vectors + SQLite FTS5 BM25 over the same chunks. Safe to share between threads."""

    def __init__(
        self,
        path: Path,
        *,
        chroma_url: str = "",
        embedding: str = "hash",
        collection: str = "sleuth",
        gemini_api_key: str = "",
        gemini_base_url: str = "",
        search_mode: str = DEFAULT_SEARCH_MODE,
    ) -> None:
        if embedding not in EMBEDDINGS:
            raise KBError(f"unknown embedding {embedding!r}; choose from {', '.join(EMBEDDINGS)}")
        if search_mode not in SEARCH_MODES:
            raise KBError(f"unknown search mode {search_mode!r}; choose from {', '.join(SEARCH_MODES)}")
        self.path = Path(path).expanduser()
        self.chroma_url = (chroma_url or "").strip()
        self.embedding = embedding
        self.collection_name = collection
        self.search_mode = search_mode
        self._gemini_api_key = gemini_api_key
        self._gemini_base_url = gemini_base_url
        self.lexical_file = self.lexical_path(self.path, chroma_url=self.chroma_url, collection=collection)
        self.store = self.chroma_url or str(self.path / "chroma")
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._client = None
        self._col = None
        self._ef = None
        self._checked_at = 0.0
        self._lex_checked = False
        self.timings: dict[str, float] = {}  # seconds spent per write phase, summed (bench/kb.py)
        self._n_cache: tuple[str, int] | None = None
        self._mem = _MemoryBM25()
        self._bm25_searched = False

    # ---- construction helpers ---------------------------------------------------------------

    @classmethod
    def for_settings(cls, settings, **kwargs) -> KnowledgeBase:
        """The KB described by a utils.config.Settings (KB folder = data_dir/kb)."""
        return cls(
            Path(settings.data_dir) / "kb",
            chroma_url=settings.chroma_url,
            embedding=settings.embedding,
            gemini_api_key=settings.gemini_api_key,
            gemini_base_url=settings.gemini_base_url,
            **kwargs,
        )

    @staticmethod
    def lexical_path(path: Path, *, chroma_url: str = "", collection: str = "sleuth") -> Path:
        path = Path(path).expanduser()
        if not chroma_url and collection == "sleuth":
            return path / "lexical.sqlite"
        parts = urlsplit(chroma_url) if chroma_url else None
        where = f"{parts.hostname}-{parts.port or 8000}-" if parts else ""
        return path / f"lexical-{_slug(where + collection)}.sqlite"

    @staticmethod
    def quick_count(path: Path, *, chroma_url: str = "", collection: str = "sleuth") -> int:
        """Chunks in the KB at `path`, read from the lexical SQLite file (no chromadb import); 0 if none."""
        f = KnowledgeBase.lexical_path(path, chroma_url=chroma_url, collection=collection)
        if not f.is_file():
            return 0
        try:
            con = sqlite3.connect(f"{f.as_uri()}?mode=ro", uri=True, timeout=5)
            try:
                return int(con.execute("SELECT count(*) FROM chunks").fetchone()[0])
            finally:
                con.close()
        except sqlite3.Error:
            return 0

    # ---- opening ----------------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self.lexical_file.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(self.lexical_file), check_same_thread=False, isolation_level=None, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA cache_size=-32768")  # 32 MB page cache, 256 MB mmap: faster FTS5 queries
            db.execute("PRAGMA mmap_size=268435456")
            db.executescript(_SCHEMA)
            self._db = db
        return self._db

    def _meta(self, key: str) -> str | None:
        row = self._conn().execute("SELECT value FROM kb_meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self._conn().execute("INSERT OR REPLACE INTO kb_meta(key, value) VALUES(?, ?)", (key, value))

    def _make_client(self):
        import chromadb
        from chromadb.config import Settings

        settings = Settings(anonymized_telemetry=False)
        if self.chroma_url:
            parts = urlsplit(self.chroma_url if "//" in self.chroma_url else f"http://{self.chroma_url}")
            if not parts.hostname:
                raise KBError(f"bad Chroma URL {self.chroma_url!r}; expected http://HOST:PORT")
            try:
                return chromadb.HttpClient(
                    host=parts.hostname, port=parts.port or 8000, ssl=parts.scheme == "https", settings=settings
                )
            except Exception as exc:  # noqa: BLE001 - connection problems become one clear error
                raise KBError(f"cannot reach the Chroma server at {self.chroma_url}: {exc}") from exc
        (self.path / "chroma").mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(self.path / "chroma"), settings=settings)

    def _mismatch(self, built: str) -> EmbeddingMismatch:
        return EmbeddingMismatch(
            f"KB at {self.store} was built with embedding {built!r}; you asked for {self.embedding!r}. "
            f"Use --embedding {built}, or `kb reset --yes` and ingest again to switch."
        )

    def _open(self):
        """The Chroma collection, opened (and checked) once."""
        if self._col is not None:
            if self.chroma_url and time.monotonic() - self._checked_at > SERVER_SYNC_SECONDS:
                self._sync_from_server()
            return self._col
        with self._lock:
            if self._col is not None:
                return self._col
            from utils.kb.embeddings import embedding_classes

            classes = embedding_classes()  # registers Sleuth's functions with Chroma before any get
            db = self._conn()
            self._check_lexical()
            n_lex = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            client = self._make_client()
            col = self._get_collection(client)
            if col is not None:
                cbuilt = (col.metadata or {}).get("sleuth_embedding")
                if cbuilt and cbuilt != self.embedding:
                    if col.count() or n_lex:
                        raise self._mismatch(cbuilt)
                    client.delete_collection(self.collection_name)
                    col = None
            if col is None:
                ef = self._embedding_function()
                col = client.create_collection(
                    self.collection_name,
                    embedding_function=ef,
                    configuration={"hnsw": dict(HNSW)},
                    metadata={
                        "sleuth_embedding": self.embedding,
                        "sleuth_generation": uuid.uuid4().hex,
                        "created_by": "sleuth",
                    },
                )
            else:
                ef_conf = (col.configuration_json or {}).get("embedding_function") or {}
                if self.embedding == "hash" and ef_conf.get("name") == classes["hash"].name():
                    ef = classes["hash"].build_from_config(ef_conf.get("config") or {})  # keeps the stored dim
                else:
                    ef = self._embedding_function()
            self._client, self._ef = client, ef
            with db:
                self._set_meta("embedding", self.embedding)
                self._set_meta("store", self.store)
            self._col = col
            if self.chroma_url:
                self._sync_from_server(force=False)
            else:
                self._repair()
            return col

    def _embedding_function(self):
        from utils.kb.embeddings import get_embedding_function

        return get_embedding_function(
            self.embedding, gemini_api_key=self._gemini_api_key, gemini_base_url=self._gemini_base_url
        )

    def _check_lexical(self) -> None:
        """Refuse a KB built with another embedding (reads only the SQLite side: no chromadb needed)."""
        if self._lex_checked:
            return
        with self._lock:
            db = self._conn()
            built = self._meta("embedding")
            if built and built != self.embedding and db.execute("SELECT count(*) FROM chunks").fetchone()[0]:
                raise self._mismatch(built)
            self._lex_checked = True

    def _get_collection(self, client):
        try:
            return client.get_collection(self.collection_name)
        except Exception as exc:  # noqa: BLE001 - Chroma raises different types for "not found"
            if "does not exist" in str(exc) or "not found" in str(exc).lower():
                return None
            if self.chroma_url:
                raise KBError(f"cannot use the Chroma server at {self.chroma_url}: {exc}") from exc
            raise

    # ---- keeping the two sides in step --------------------------------------------------------

    def _repair(self) -> None:
        """Embedded mode: make Chroma hold exactly one vector per chunk row (after a crash, a lost folder)."""
        col, db = self._col, self._conn()
        n_lex = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        if col.count() == n_lex:
            return
        log.warning("KB vectors and chunks differ (%d vs %d); repairing", col.count(), n_lex)
        have: set[str] = set()
        offset = 0
        while True:
            page = col.get(include=[], limit=10000, offset=offset)
            if not page["ids"]:
                break
            have.update(page["ids"])
            offset += len(page["ids"])
        ids = {r[0] for r in db.execute("SELECT id FROM chunks")}
        orphans = list(have - ids)
        for i in range(0, len(orphans), CHROMA_BATCH):
            col.delete(ids=orphans[i : i + CHROMA_BATCH])
        missing = list(ids - have)
        for i in range(0, len(missing), CHROMA_BATCH):
            part = missing[i : i + CHROMA_BATCH]
            marks = ",".join("?" * len(part))
            rows = db.execute(
                f"SELECT id, source, chunk, title, text FROM chunks WHERE id IN ({marks})", part
            ).fetchall()
            vecs = self._embed([(r[3] or "", r[4] or "") for r in rows])
            col.upsert(ids=[r[0] for r in rows], embeddings=vecs)

    def _sync_from_server(self, force: bool = False) -> None:
        """Server mode: rebuild the local lexical cache when the server's generation stamp moved."""
        with self._lock:
            self._checked_at = time.monotonic()
            col = self._get_collection(self._client)
            if col is None:  # reset from another machine: start again from an empty collection
                db = self._conn()
                db.execute("BEGIN IMMEDIATE")
                self._clear_lexical(db)
                db.execute("DELETE FROM kb_meta WHERE key='generation'")
                db.execute("COMMIT")
                self._mem.clear()
                self._col = None
                self._open()
                return
            self._col = col
            gen = (col.metadata or {}).get("sleuth_generation", "")
            if not force and gen and gen == self._meta("generation"):
                return
            log.info("rebuilding the local lexical index from %s", self.chroma_url)
            db = self._conn()
            db.execute("BEGIN IMMEDIATE")
            try:
                self._clear_lexical(db)
                offset = 0
                while True:
                    page = col.get(include=["documents", "metadatas"], limit=2000, offset=offset)
                    if not page["ids"]:
                        break
                    offset += len(page["ids"])
                    rows = []
                    for cid, doc, md in zip(page["ids"], page["documents"], page["metadatas"], strict=True):
                        md = md or {}
                        rows.append(
                            (
                                cid,
                                md.get("source", ""),
                                int(md.get("chunk", 0)),
                                md.get("title", ""),
                                doc or "",
                                md.get("content_hash", ""),
                                md.get("doc_hash", ""),
                                md.get("source_type", "file"),
                                md.get("ingested_at", ""),
                                md.get("session_id"),
                            )
                        )
                    self._insert_rows(db, rows)
                db.execute(
                    "INSERT OR REPLACE INTO sources(source, title, source_type, doc_hash, chunks, ingested_at, "
                    "session_id) SELECT source, max(title), max(source_type), max(doc_hash), count(*), "
                    "max(ingested_at), max(session_id) FROM chunks GROUP BY source"
                )
                self._set_meta("generation", gen)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            self._n_cache = None
            self._mem.clear()

    @staticmethod
    def _clear_lexical(db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM chunks")
        db.execute("DELETE FROM sources")
        db.execute("DELETE FROM chunks_fts")

    @staticmethod
    def _insert_rows(db: sqlite3.Connection, rows: list[tuple]) -> None:
        """rows: (id, source, chunk, title, text, content_hash, doc_hash, source_type, ingested_at, session_id)."""
        for r in rows:
            cur = db.execute(
                "INSERT INTO chunks(id, source, chunk, title, text, content_hash, doc_hash, source_type, ingested_at, "
                "session_id) VALUES(?,?,?,?,?,?,?,?,?,?)",
                r,
            )
            db.execute(
                "INSERT INTO chunks_fts(rowid, title, body) VALUES(?,?,?)",
                (cur.lastrowid, " ".join(analyze(r[3] or "")), " ".join(analyze(r[4] or ""))),
            )

    # ---- embedding -------------------------------------------------------------------------

    def _embed(self, pairs: list[tuple[str, str]], terms: list[list[str]] | None = None):
        """Vectors for (title, text) pairs; the hash embedding reuses already analysed terms."""
        if self.embedding == "hash":
            from utils.kb.embeddings import hash_vectors_from_terms

            if terms is None:
                terms = [analyze(t) + analyze(x) for t, x in pairs]
            return hash_vectors_from_terms(terms, getattr(self._ef, "dim", HASH_DIM))
        return self._ef([f"{t}\n\n{x}" if t else x for t, x in pairs])

    def _embed_query(self, query: str):
        if self.embedding == "hash":
            return self._embed([("", query)])
        return self._ef.embed_query([query])

    # ---- writing ---------------------------------------------------------------------------

    def _write(self, docs: list[_Doc]) -> int:
        """Replace the chunks of each doc's source with the doc's chunks. Returns chunks written."""
        if not docs:
            return 0
        with self._lock:
            col = self._open()
            if self.chroma_url and time.monotonic() - self._checked_at > 0.5:
                self._sync_from_server()  # start from what the server holds now
                col = self._col
            db = self._conn()
            now = _now()
            t0 = time.perf_counter()
            rows: list[tuple] = []
            terms: list[list[str]] = []  # title + text terms of each chunk (the hash embedding's input)
            analysed: list[tuple[list[str], list[str]]] = []  # (title terms, text terms)
            pairs: list[tuple[str, str]] = []
            fts: list[tuple[str, str]] = []
            for d in docs:
                # Analyse each sentence once, although the overlap puts some in two chunks.
                pieces, spans = chunk_spans(d.text)
                tt = analyze(d.title)
                title_terms = " ".join(tt)
                piece_terms = [analyze(p) for p in pieces]
                piece_joined = [" ".join(t) for t in piece_terms]
                for i, (start, end) in enumerate(spans):
                    piece = PIECE_SEP.join(pieces[start:end])
                    rows.append(
                        (
                            _chunk_id(d.source, d.doc_hash, i),
                            d.source,
                            i,
                            d.title,
                            piece,
                            _sha(piece)[:16],
                            d.doc_hash,
                            d.source_type,
                            now,
                            d.session_id,
                        )
                    )
                    tx = list(chain.from_iterable(piece_terms[start:end]))
                    terms.append(tt + tx)
                    analysed.append((tt, tx))
                    pairs.append((d.title, piece))
                    fts.append((title_terms, " ".join(filter(None, piece_joined[start:end]))))
            sources = [d.source for d in docs]
            old_ids: list[str] = []
            for i in range(0, len(sources), 500):
                part = sources[i : i + 500]
                marks = ",".join("?" * len(part))
                old_ids += [r[0] for r in db.execute(f"SELECT id FROM chunks WHERE source IN ({marks})", part)]
            new_ids = {r[0] for r in rows}
            # 1. vectors (Chroma) -- ids are deterministic, so a retry after a crash is harmless
            stale = [i for i in old_ids if i not in new_ids]
            t_embed = 0.0
            t1 = time.perf_counter()
            for i in range(0, len(stale), CHROMA_BATCH):
                col.delete(ids=stale[i : i + CHROMA_BATCH])
            for i in range(0, len(rows), CHROMA_BATCH):
                part = rows[i : i + CHROMA_BATCH]
                te = time.perf_counter()
                vecs = self._embed(pairs[i : i + CHROMA_BATCH], terms[i : i + CHROMA_BATCH])
                t_embed += time.perf_counter() - te
                if self.chroma_url:
                    metas = [
                        {
                            k: v
                            for k, v in zip(_META_KEYS, (r[1], r[2], r[3], r[5], r[6], r[7], r[8], r[9]), strict=True)
                            if v is not None
                        }
                        for r in part
                    ]
                    col.upsert(
                        ids=[r[0] for r in part], embeddings=vecs, metadatas=metas, documents=[r[4] for r in part]
                    )
                else:  # embedded: the vector alone; SQLite has the rest (each metadata key costs Chroma time)
                    col.upsert(ids=[r[0] for r in part], embeddings=vecs)
            t2 = time.perf_counter()
            generation = uuid.uuid4().hex
            raced = False
            if self.chroma_url:
                fresh = self._client.get_collection(self.collection_name)
                meta = dict(fresh.metadata or {})
                raced = meta.get("sleuth_generation") != self._meta("generation")  # another writer meanwhile
                meta.update(sleuth_embedding=self.embedding, sleuth_generation=generation)
                fresh.modify(metadata=meta)
            # 2. lexical side, one transaction
            db.execute("BEGIN IMMEDIATE")
            try:
                before = self._meta("generation")
                removed: list[int] = []
                for i in range(0, len(sources), 500):
                    part = sources[i : i + 500]
                    marks = ",".join("?" * len(part))
                    removed += [r[0] for r in db.execute(f"SELECT rid FROM chunks WHERE source IN ({marks})", part)]
                    db.execute(
                        f"DELETE FROM chunks_fts WHERE rowid IN (SELECT rid FROM chunks WHERE source IN ({marks}))",
                        part,
                    )
                    db.execute(f"DELETE FROM chunks WHERE source IN ({marks})", part)
                base = db.execute("SELECT coalesce(max(rid), 0) + 1 FROM chunks").fetchone()[0]
                db.executemany(
                    "INSERT INTO chunks(rid, id, source, chunk, title, text, content_hash, doc_hash, source_type, "
                    "ingested_at, session_id) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                    [(base + i, *r) for i, r in enumerate(rows)],
                )
                db.executemany(
                    "INSERT INTO chunks_fts(rowid, title, body) VALUES(?,?,?)",
                    [(base + i, a, b) for i, (a, b) in enumerate(fts)],
                )
                per_source: dict[str, int] = {}
                for r in rows:
                    per_source[r[1]] = per_source.get(r[1], 0) + 1
                db.executemany(
                    "INSERT OR REPLACE INTO sources(source, title, source_type, doc_hash, chunks, ingested_at, "
                    "session_id) VALUES(?,?,?,?,?,?,?)",
                    [
                        (d.source, d.title, d.source_type, d.doc_hash, per_source.get(d.source, 0), now, d.session_id)
                        for d in docs
                    ],
                )
                self._set_meta("generation", generation)
                # This instance's in-memory BM25 follows its own write (another process's is seen by the stamp).
                sizes = self._mem.row_sizes(db, base) if self._mem.key == before else None
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            self._n_cache = None
            if sizes is not None:
                self._mem.apply(generation, removed, sizes, [(base + i, *a) for i, a in enumerate(analysed)])
            else:
                self._mem.clear()
            t3 = time.perf_counter()
            for key, secs in (
                ("chunk+analyse", t1 - t0),
                ("embed", t_embed),
                ("chroma", t2 - t1 - t_embed),
                ("sqlite", t3 - t2),
            ):
                self.timings[key] = self.timings.get(key, 0.0) + secs
            if raced:
                self._sync_from_server(force=True)
            return len(rows)

    def _known_hash(self, source: str) -> str | None:
        with self._lock:
            row = self._conn().execute("SELECT doc_hash FROM sources WHERE source=?", (source,)).fetchone()
        return row[0] if row else None

    def ingest_paths(
        self,
        paths: Iterable[str | Path],
        progress: Callable[[int, int, str], None] | None = None,
    ) -> IngestReport:
        """Ingest files and folders (recursive). `progress(done, total, path)` is called after each file."""
        files, errors, skipped = _walk(paths)
        report = IngestReport(errors=errors, skipped=skipped)
        pending: list[_Doc] = []
        pending_words = 0
        replaced_pending = 0
        added_pending = 0
        self._open()

        def flush() -> None:
            nonlocal pending, pending_words, replaced_pending, added_pending
            if pending:
                report.chunks_added += self._write(pending)
                report.files_added += added_pending
                report.files_replaced += replaced_pending
            pending, pending_words, replaced_pending, added_pending = [], 0, 0, 0

        for n, f in enumerate(files, 1):
            source = str(f.resolve())
            try:
                title, text, data = read_file(f)
            except KBError as exc:
                report.errors.append((str(f), str(exc)))
            except Exception as exc:  # noqa: BLE001 - one bad file must not stop the rest
                report.errors.append((str(f), f"{type(exc).__name__}: {exc}"))
            else:
                doc_hash = _sha(data)
                known = self._known_hash(source)
                if known == doc_hash:
                    report.files_unchanged += 1
                else:
                    pending.append(_Doc(source, title.strip()[:300], text, "file", doc_hash))
                    pending_words += len(text.split())
                    if known is None:
                        added_pending += 1
                    else:
                        replaced_pending += 1
                    if pending_words >= WRITE_BATCH_CHUNKS * 180:
                        flush()
            if progress:
                progress(n, len(files), str(f))
        flush()
        if report.chunks_added >= 1000:
            with self._lock:  # merge the FTS5 index segments after a bulk load (~0.2 s per 10k chunks)
                self._conn().execute("INSERT INTO chunks_fts(chunks_fts) VALUES('optimize')")
        return report

    def add_document(
        self, *, source: str, title: str, text: str, source_type: str = "web", session_id: str | None = None
    ) -> int:
        """Store a document (web page, feedback, ...). Returns chunks added; 0 if this content is already stored.

        The same source with new content replaces its old chunks. The exact same content already
        stored under another source is not stored again (returns 0).
        """
        if source_type not in SOURCE_TYPES:
            raise KBError(f"unknown source_type {source_type!r}; choose from {', '.join(SOURCE_TYPES)}")
        text = (text or "").strip()
        if not source or not text:
            return 0
        doc_hash = _sha(" ".join(text.split()))
        with self._lock:
            self._open()
            known = self._known_hash(source)
            if known == doc_hash:
                return 0
            if known is None:
                dup = self._conn().execute("SELECT 1 FROM sources WHERE doc_hash=? LIMIT 1", (doc_hash,)).fetchone()
                if dup:
                    return 0
            return self._write([_Doc(source, (title or "").strip()[:300], text, source_type, doc_hash, session_id)])

    def chunks_of(self, sources: list[str], per_source: int = 20) -> list[Hit]:
        """The first chunks of the given documents, in document order (score 0): a document reached
        by a link rather than by a query."""
        if not sources:
            return []
        if self.chroma_url:
            self._open()
        else:
            self._check_lexical()
        with self._lock:
            marks = ",".join("?" * len(sources))
            rows = (
                self._conn()
                .execute(
                    f"SELECT id, source, chunk, title, text, source_type, session_id FROM chunks "
                    f"WHERE source IN ({marks}) AND chunk < ? ORDER BY source, chunk",
                    [*sources, per_source],
                )
                .fetchall()
            )
        hits = []
        for r in rows:
            md = {"id": r[0], "source": r[1], "chunk": r[2], "title": r[3], "source_type": r[5]}
            if r[6]:
                md["session_id"] = r[6]
            hits.append(Hit(len(hits) + 1, 0.0, r[1], r[3] or "", r[2], r[4] or "", r[0], r[5] or "", md))
        return hits

    def has_source(self, source: str) -> bool:
        if self.chroma_url:
            self._open()
        return self._known_hash(source) is not None

    def reset(self) -> None:
        """Delete every chunk and vector (both stores); the KB then adopts the current embedding."""
        with self._lock:
            if self._client is None:
                from utils.kb.embeddings import embedding_classes

                embedding_classes()
                self._client = self._make_client()
            try:
                self._client.delete_collection(self.collection_name)
            except Exception as exc:  # noqa: BLE001 - nothing to delete is fine
                if "does not exist" not in str(exc) and "not found" not in str(exc).lower():
                    raise
            self._col = None
            db = self._conn()
            db.execute("BEGIN IMMEDIATE")
            self._clear_lexical(db)
            db.execute("DELETE FROM kb_meta")
            db.execute("COMMIT")
            self._n_cache = None
            self._mem.clear()

    # ---- reading -----------------------------------------------------------------------------

    def count(self) -> int:
        if self.chroma_url:
            self._open()
        with self._lock:
            return int(self._conn().execute("SELECT count(*) FROM chunks").fetchone()[0])

    def stats(self) -> dict:
        col = self._open()
        with self._lock:
            db = self._conn()
            chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            by_type: dict[str, dict] = {}
            for st, n_src, n_ch in db.execute(
                "SELECT source_type, count(*), sum(chunks) FROM sources GROUP BY source_type ORDER BY 1"
            ):
                by_type[st] = {"sources": n_src, "chunks": int(n_ch or 0)}
            sources = db.execute("SELECT count(*) FROM sources").fetchone()[0]
        vectors = col.count()
        return {
            "chunks": chunks,
            "sources": sources,
            "by_source_type": by_type,
            "vectors": vectors,
            "in_sync": vectors == chunks,
            "embedding": self.embedding,
            "store": self.store,
            "lexical_index": str(self.lexical_file),
            "search_mode": self.search_mode,
        }

    def _n_docs(self, db: sqlite3.Connection) -> int:
        gen = self._meta("generation") or ""
        if self._n_cache is None or self._n_cache[0] != gen:
            self._n_cache = (gen, int(db.execute("SELECT count(*) FROM chunks").fetchone()[0]))
        return self._n_cache[1]

    def _bm25(self, query: str, n: int) -> list[tuple[int, float]]:
        """[(rid, score in [0,1])] best first."""
        terms = list(dict.fromkeys(analyze(query)))[:64]
        if not terms:
            return []
        with self._lock:
            first, self._bm25_searched = not self._bm25_searched, True
            if first and self._mem.lengths is None:
                # One search alone (a `kb search` process) is faster in SQLite than importing numpy (~0.1 s)
                # and reading the postings; the in-memory index pays off from the second search on.
                got = None
            else:
                db = self._conn()
                db.execute("BEGIN")  # one snapshot for the generation stamp and what is read under it
                try:
                    got = self._mem.top(db, terms, n) if self._mem.ensure(db, self._meta("generation")) else None
                finally:
                    db.execute("COMMIT")
        if got is None:
            return self._bm25_fts(terms, n)
        rows, ideal = got
        return [(rid, min(1.0, s / ideal) if ideal > 0 else 0.0) for rid, s in rows]

    def _bm25_fts(self, terms: list[str], n: int) -> list[tuple[int, float]]:
        """The same ranking by SQLite itself (equal scores by rowid, as in memory)."""
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        with self._lock:
            db = self._conn()
            rows = db.execute(
                f"SELECT rowid, -bm25(chunks_fts, {TITLE_WEIGHT}, 1.0) FROM chunks_fts WHERE chunks_fts MATCH ? "
                f"ORDER BY bm25(chunks_fts, {TITLE_WEIGHT}, 1.0), rowid LIMIT ?",
                (match, n),
            ).fetchall()
            if not rows:
                return []
            total = self._n_docs(db)
            marks = ",".join("?" * len(terms))
            df = dict(db.execute(f"SELECT term, doc FROM chunks_vocab WHERE term IN ({marks})", terms).fetchall())
        ideal = sum(max(1e-6, math.log((total - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5))) for t in terms)
        return [(rid, min(1.0, s / ideal) if ideal > 0 else 0.0) for rid, s in rows]

    def _vector(self, query: str, n: int) -> list[tuple[int, float]]:
        col = self._open()
        total = col.count()
        if not total:
            return []
        vec = self._embed_query(query)
        res = col.query(query_embeddings=vec, n_results=min(n, total), include=["distances"])
        ids, dists = res["ids"][0], res["distances"][0]
        if not ids:
            return []
        with self._lock:
            marks = ",".join("?" * len(ids))
            rid_of = dict(self._conn().execute(f"SELECT id, rid FROM chunks WHERE id IN ({marks})", ids).fetchall())
        return [(rid_of[i], max(0.0, min(1.0, 1.0 - d))) for i, d in zip(ids, dists, strict=True) if i in rid_of]

    def _fused(self, query: str, n: int) -> list[tuple[int, float]]:
        depth = max(50, n)
        scores: dict[int, float] = {}
        for weight, ranked in ((1.0, self._bm25(query, depth)), (RRF_VECTOR_WEIGHT, self._vector(query, depth))):
            for rank, (rid, _s) in enumerate(ranked, 1):
                scores[rid] = scores.get(rid, 0.0) + weight / (RRF_K + rank)
        best = (1.0 + RRF_VECTOR_WEIGHT) / (RRF_K + 1)
        return sorted(((rid, s / best) for rid, s in scores.items()), key=lambda x: -x[1])[:n]

    def search(self, query: str, k: int = 5, mode: str | None = None) -> list[Hit]:
        """The k best chunks for `query` (distinct chunks, identical texts shown once), best first."""
        mode = mode or self.search_mode
        if mode not in SEARCH_MODES:
            raise KBError(f"unknown search mode {mode!r}; choose from {', '.join(SEARCH_MODES)}")
        if k < 1 or not query.strip():
            return []
        if self.chroma_url or mode != "bm25":
            self._open()
        else:
            self._check_lexical()  # plain BM25 in embedded mode needs only SQLite (no chromadb import)
        want = k * 2 + 5
        ranked = {"bm25": self._bm25, "vector": self._vector, "fused": self._fused}[mode](query, want)
        if not ranked:
            return []
        with self._lock:
            rids = [r for r, _ in ranked]
            marks = ",".join("?" * len(rids))
            rows = {
                r[0]: r
                for r in self._conn().execute(
                    "SELECT rid, id, source, chunk, title, text, content_hash, doc_hash, source_type, ingested_at, "
                    f"session_id FROM chunks WHERE rid IN ({marks})",
                    rids,
                )
            }
        hits: list[Hit] = []
        seen: set[str] = set()
        for rid, score in ranked:
            r = rows.get(rid)
            if r is None or r[6] in seen:
                continue
            seen.add(r[6])
            md = {
                "id": r[1],
                "source": r[2],
                "chunk": r[3],
                "title": r[4],
                "content_hash": r[6],
                "doc_hash": r[7],
                "source_type": r[8],
                "ingested_at": r[9],
            }
            if r[10]:
                md["session_id"] = r[10]
            hits.append(
                Hit(
                    rank=len(hits) + 1,
                    score=float(score),
                    source=r[2],
                    title=r[4] or "",
                    chunk=r[3],
                    text=r[5] or "",
                    id=r[1],
                    source_type=r[8] or "",
                    metadata=md,
                )
            )
            if len(hits) == k:
                break
        return hits

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def hits_json(query: str, hits: list[Hit]) -> str:
    """One JSON line for `kb search --json`."""
    return json.dumps({"query": query, "hits": [h.to_dict() for h in hits]}, ensure_ascii=False)
