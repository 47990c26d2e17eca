"""Sleuth's knowledge base: Chroma vectors plus a lexical BM25 index, kept in step.

Storage (``path`` is the KB folder, normally ``DATA_DIR/kb``)::

    kb/chroma/          embedded Chroma store (chromadb.PersistentClient), collection "sleuth"
    kb/lexical.sqlite   the lexical side: chunk text + metadata, SQLite FTS5 index, sources table

The lexical SQLite file is the KB's record of what is stored: every chunk's text and metadata
(source, title, chunk index, content hash, source_type, ingested_at, session_id), the FTS5
index that ranks with BM25, and one row per source with the hash of its content (what makes
re-ingesting idempotent). Chroma holds one vector per chunk under the same id. Writes go
through one method (`_write`, steps in utils/kb/write.py): vectors first, then one SQLite
transaction; utils/kb/sync.py keeps the two sides in step (repair on open, server generation stamp).

Server mode (``chroma_url``): vectors, documents and metadata go to the Chroma server (complete on its
own); the lexical index is a local cache in ``kb/lexical-<host>-<port>-<collection>.sqlite``, rebuilt
when the server's generation stamp moves (utils/kb/sync.py): machines sharing a server all get BM25.

Search modes (`search(mode=...)`): ``bm25`` (BM25 over analysed title + text, the title weighted
2x), ``vector`` (Chroma nearest neighbours) and ``fused`` (reciprocal-rank fusion, k=60, vector
list weighted 0.5). The default is ``bm25``: on the retrieval bench (bench/kb.py; the numbers are
in docs/measurements.md) it finds the most, fusion does not beat it and costs several times the
query time and loads chromadb. Plain BM25 in embedded mode needs only SQLite (chromadb is never
imported); it is FTS5's bm25() formula, computed in memory (utils/kb/bm25.py: same rows and scores).

Scores are in [0, 1], higher is better. bm25: raw BM25 over an ideal chunk's (the query terms' IDF
summed: 1.0 = all its distinctive words are there), capped at 1; vector: cosine similarity clipped at
0; fused: the RRF sum over its maximum (rank 1 in both lists).
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from ..config import MEMORY_LIMIT
from ..errors import EmbeddingMismatch, KBError
from ..text import analyze, valid_text
from . import health, sync, walk
from .bm25 import BM25, smooth_idf
from .chunking import chunk_size_for
from .embeddings import EMBEDDINGS, HASH_DIM
from .hits import Hit, IngestReport, hits_json  # noqa: F401 - the KB's result types
from .readers import read_document, site_titles
from .write import Doc, build_rows, replace_lexical, sha256_hex, stale_ids, upsert_vectors

log = logging.getLogger(__name__)

SEARCH_MODES = ("bm25", "vector", "fused")
DEFAULT_SEARCH_MODE = "bm25"
SOURCE_TYPES = ("file", "web", "feedback")
RRF_K = 60
RRF_VECTOR_WEIGHT = 0.5  # vectors are the weaker signal (bench/kb.py)
# HNSW: building the graph is most of Chroma's insert time, and its cost follows ef_construction.
# 16 (the floor: max_neighbors, 16 by default) halves the build time of 50; the looser graph is made
# up at query time by ef_search 1500, for the same neighbour recall as (50, 300) (bench/kb.py;
# numbers in docs/measurements.md).
HNSW = {"space": "cosine", "ef_construction": 16, "ef_search": 1500}
WRITE_BATCH_CHUNKS = 5000
_HIT_COLUMNS = (
    "rid, id, source, chunk, title, text, content_hash, doc_hash, source_type, ingested_at, session_id, section"
)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80] or "x"


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
        memory_limit: int = MEMORY_LIMIT,
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
        self.memory_limit = memory_limit  # remembered pages kept (oldest evicted first); 0: no cap
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
        self.write_problems = None  # a utils.storage.WriteProblems: a write that found no room is told there
        self._bm25 = BM25()

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
            memory_limit=settings.memory_limit,
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
        return sync.quick_count(f) if f.is_file() else 0

    # ---- opening ----------------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = health.connect(self)  # a damaged file or a full disk: one line saying what to do
        return self._db

    def _meta(self, key: str) -> str | None:
        return sync.get_meta(self._conn(), key)

    def _mismatch(self, built: str) -> EmbeddingMismatch:
        return EmbeddingMismatch(
            f"KB at {self.store} was built with embedding {built!r}; you asked for {self.embedding!r}. "
            f"Use --embedding {built}, or `kb reset --yes` and ingest again to switch."
        )

    def _open(self):
        """The Chroma collection, opened (and checked) once."""
        if self._col is not None:
            if self.chroma_url and time.monotonic() - self._checked_at > sync.SERVER_SYNC_SECONDS:
                self._sync_from_server()
            return self._col
        with self._lock:
            if self._col is not None:
                return self._col
            from .embeddings import embedding_classes

            classes = embedding_classes()  # registers Sleuth's functions with Chroma before any get
            db = self._conn()
            self._check_lexical()
            client = health.client(self)
            col = sync.get_collection(client, self.collection_name, self.chroma_url)
            if col is not None:
                cbuilt = (col.metadata or {}).get("sleuth_embedding")
                if cbuilt and cbuilt != self.embedding:
                    if col.count() or sync.count_chunks(db):
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
                sync.set_meta(db, "embedding", self.embedding)
                sync.set_meta(db, "store", self.store)
            self._col = col
            if self.chroma_url:
                self._sync_from_server(force=False)
            else:
                sync.repair(col, db, self._embed)
            return col

    def _embedding_function(self):
        from .embeddings import get_embedding_function

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
            if built and built != self.embedding and sync.count_chunks(db):
                raise self._mismatch(built)
            self._lex_checked = True

    def _sync_from_server(self, force: bool = False) -> None:
        """Server mode: rebuild the local lexical cache when the server's generation stamp moved."""
        with self._lock:
            self._checked_at = time.monotonic()
            col = sync.get_collection(self._client, self.collection_name, self.chroma_url)
            if col is None:  # reset from another machine: start again from an empty collection
                sync.wipe_lexical(self._conn(), keep_meta=True)
                self._bm25.clear()
                self._col = None
                self._open()
                return
            self._col = col
            gen = (col.metadata or {}).get("sleuth_generation", "")
            if not force and gen and gen == self._meta("generation"):
                return
            sync.rebuild_lexical(col, self._conn(), gen)
            self._bm25.clear()

    # ---- embedding -------------------------------------------------------------------------

    def _embed(self, pairs: list[tuple[str, str]], terms: list[list[str]] | None = None):
        """Vectors for (title, text) pairs; the hash embedding reuses already analysed terms."""
        if self.embedding == "hash":
            from .embeddings import hash_vectors_from_terms

            if terms is None:
                terms = [analyze(t) + analyze(x) for t, x in pairs]
            return hash_vectors_from_terms(terms, getattr(self._ef, "dim", HASH_DIM))
        return self._ef([f"{t}\n\n{x}" if t else x for t, x in pairs])

    def _embed_query(self, query: str):
        if self.embedding == "hash":
            return self._embed([("", query)])
        return self._ef.embed_query([query])

    # ---- writing ---------------------------------------------------------------------------

    @health.guarded  # a full disk: KBNoRoom, one line naming the KB folder
    def _write(self, docs: list[Doc]) -> int:
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
            batch = build_rows(docs, now, chunk_size_for(self.embedding))
            stale = stale_ids(db, batch)
            t1 = time.perf_counter()
            t_embed = upsert_vectors(col, batch, stale, self._embed, server=bool(self.chroma_url))
            t2 = time.perf_counter()
            generation = uuid.uuid4().hex
            raced = bool(self.chroma_url) and sync.stamp_server(
                self._client, self.collection_name, self.embedding, generation, self._meta("generation")
            )
            db.execute("BEGIN IMMEDIATE")
            try:
                before = self._meta("generation")
                removed, base = replace_lexical(db, batch, now)
                sync.set_meta(db, "generation", generation)
                # This instance's in-memory BM25 follows its own write (another process's is seen by the stamp).
                sizes = self._bm25.patch_sizes(db, before, base)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            self._bm25.written(generation, removed, sizes, [(base + i, *a) for i, a in enumerate(batch.terms)])
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
            return len(batch.rows)

    def _known_hash(self, source: str) -> str | None:
        with self._lock:
            row = self._conn().execute("SELECT doc_hash FROM sources WHERE source=?", (source,)).fetchone()
        return row[0] if row else None

    def ingest_paths(
        self,
        paths: Iterable[str | Path],
        progress: Callable[[int, int, str], None] | None = None,
        follow_links: bool = False,
    ) -> IngestReport:
        """Ingest files and folders (which ones: utils/kb/walk.py). `progress(done, total, path)` after each file."""
        found = walk.walk(paths, follow_links=follow_links)
        files, sites = found.files, site_titles(found.files)  # sites: a folder's title parts naming the site
        report = IngestReport(errors=found.errors, skipped=found.skipped, passed_over=found.passed_over)
        pending: list[Doc] = []
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
            source = valid_text(str(f.resolve()))  # a file name that is not UTF-8 keeps U+FFFD for its bytes
            try:
                title, text, data, structured = read_document(f, sites.get(f.parent, frozenset()))
            except KBError as exc:
                report.errors.append((str(f), str(exc)))
            except Exception as exc:  # noqa: BLE001 - one bad file must not stop the rest
                report.errors.append((str(f), f"{type(exc).__name__}: {exc}"))
            else:
                doc_hash = sha256_hex(data)
                known = self._known_hash(source)
                if known == doc_hash:
                    report.files_unchanged += 1
                else:
                    title = valid_text(title.strip()[:300])
                    pending.append(Doc(source, title, valid_text(text), "file", doc_hash, structured=structured))
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
            with self._lock:  # merge the FTS5 index segments after a bulk load
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
        # what UTF-8 cannot hold (a lone surrogate) is stored as U+FFFD
        source, title, text = valid_text(source or ""), valid_text(title or ""), valid_text((text or "").strip())
        if not source or not text:
            return 0
        doc_hash = sha256_hex(" ".join(text.split()))
        with self._lock:
            self._open()
            known = self._known_hash(source)
            if known == doc_hash:
                return 0
            if known is None:
                dup = self._conn().execute("SELECT 1 FROM sources WHERE doc_hash=? LIMIT 1", (doc_hash,)).fetchone()
                if dup:
                    return 0
            added = self._write([Doc(source, (title or "").strip()[:300], text, source_type, doc_hash, session_id)])
            if source_type == "web" and self.memory_limit:
                from .manage import enforce_memory_limit

                enforce_memory_limit(self, self.memory_limit)
            return added

    def documents(self) -> list[tuple]:
        """Every stored document, oldest first: (source, title, source_type, chunks, ingested_at)."""
        if self.chroma_url:
            self._open()
        else:
            self._check_lexical()
        with self._lock:
            sql = "SELECT source, title, source_type, chunks, ingested_at FROM sources ORDER BY ingested_at, rowid"
            return self._conn().execute(sql).fetchall()

    def remove(self, sources: list[str]) -> None:
        """Remove documents from the vectors and the lexical index, through the one write path."""
        self._write([Doc.removal(s) for s in dict.fromkeys(sources)])

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
                    f"SELECT id, source, chunk, title, text, source_type, session_id, section FROM chunks "
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
            hits.append(Hit(len(hits) + 1, 0.0, r[1], r[3] or "", r[2], r[4] or "", r[0], r[5] or "", md, r[7] or ""))
        return hits

    def has_source(self, source: str) -> bool:
        if self.chroma_url:
            self._open()
        return self._known_hash(source) is not None

    def reset(self) -> None:
        """Delete every chunk and vector (both stores); the KB then adopts the current embedding."""
        with self._lock:
            health.set_aside(self)  # damaged files are moved aside, not opened
            if self._client is None:
                from .embeddings import embedding_classes

                embedding_classes()
                self._client = health.client(self)
            try:
                self._client.delete_collection(self.collection_name)
            except Exception as exc:  # noqa: BLE001 - nothing to delete is fine
                if not sync.is_not_found(exc):
                    raise
            self._col = None
            sync.wipe_lexical(self._conn(), keep_meta=False)
            self._bm25.clear()

    # ---- reading -----------------------------------------------------------------------------

    def count(self) -> int:
        if self.chroma_url:
            self._open()
        with self._lock:
            return sync.count_chunks(self._conn())

    def stats(self) -> dict:
        vectors = health.vector_count(self)  # None: a full disk keeps Chroma from opening
        with self._lock:
            db = self._conn()
            chunks = sync.count_chunks(db)
            by_type: dict[str, dict] = {}
            for st, n_src, n_ch in db.execute(
                "SELECT source_type, count(*), sum(chunks) FROM sources GROUP BY source_type ORDER BY 1"
            ):
                by_type[st] = {"sources": n_src, "chunks": int(n_ch or 0)}
            sources = db.execute("SELECT count(*) FROM sources").fetchone()[0]
        return {
            "chunks": chunks,
            "sources": sources,
            "by_source_type": by_type,
            "vectors": vectors,
            "in_sync": vectors in (None, chunks),
            "embedding": self.embedding,
            "store": self.store,
            "lexical_index": str(self.lexical_file),
            "search_mode": self.search_mode,
        }

    def term_idf(self, text: str) -> dict[str, float]:
        """Each index term of `text` -> how rare it is among the chunks (bm25.smooth_idf): the offline
        engine weighs a question's words by it."""
        with self._lock:
            db = self._conn()
            return smooth_idf(db, list(dict.fromkeys(analyze(text)))[:64], self._bm25._n_docs(db))

    def _bm25_ranked(self, query: str, n: int) -> list[tuple[int, float]]:
        """[(rid, score in [0,1])] best first."""
        terms = list(dict.fromkeys(analyze(query)))[:64]
        if not terms:
            return []
        with self._lock:
            return self._bm25.rank(self._conn(), terms, n)

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
        for weight, ranked in ((1.0, self._bm25_ranked(query, depth)), (RRF_VECTOR_WEIGHT, self._vector(query, depth))):
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
        ranked = {"bm25": self._bm25_ranked, "vector": self._vector, "fused": self._fused}[mode](query, want)
        if not ranked:
            return []
        with self._lock:
            rids = [r for r, _ in ranked]
            marks = ",".join("?" * len(rids))
            sql = f"SELECT {_HIT_COLUMNS} FROM chunks WHERE rid IN ({marks})"
            rows = {r[0]: r for r in self._conn().execute(sql, rids)}
        hits: list[Hit] = []
        seen: set[str] = set()  # content hashes: identical texts are shown once
        for rid, score in ranked:
            r = rows.get(rid)
            if r is None or r[6] in seen:
                continue
            seen.add(r[6])
            hits.append(Hit.from_row(len(hits) + 1, score, r))
            if len(hits) == k:
                break
        return hits

    def bm25_scores(self, query: str, hits: list[Hit]) -> dict[str, float]:
        """{hit id: raw BM25 score} for hits of `query` (what ranks them in bm25 mode, unnormalised)."""
        from .bm25 import fts5_scores

        terms = list(dict.fromkeys(analyze(query)))[:64]
        with self._lock:
            return fts5_scores(self._conn(), terms, [h.id for h in hits])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
