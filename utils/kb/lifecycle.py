"""The knowledge base's two stores and their life: opening them (the lexical SQLite file checked, Chroma's
collection with the embedding it was built with, a server's newer writes pulled in), repairing any
difference between them on open (utils/kb/sync.py), embedding, the one write path (`_write`, steps
in utils/kb/write.py), reset and close. KnowledgeBase (store.py) adds what it does with them."""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..config import MEMORY_LIMIT
from ..errors import EmbeddingMismatch, KBError
from ..storage import WriteProblems
from ..text import analyze
from . import health, sync
from .bm25 import BM25
from .chunking import chunk_size_for
from .embeddings import EMBEDDINGS, HASH_DIM
from .hits import Hit, IngestReport, hits_json  # noqa: F401 - the KB's result types
from .score_index import ScoreIndex, folder_for
from .write import Doc, build_rows, replace_lexical, stale_ids, upsert_vectors

log = logging.getLogger(__name__)

SEARCH_MODES = ("bm25", "vector", "fused")  # how search() ranks (retrieve.py)
DEFAULT_SEARCH_MODE = "bm25"
NO_VECTORS = "none"  # the embedding of a KB that keeps no vectors: BM25 alone (docs/design.md, "Knowledge base")
DEFAULT_EMBEDDING = "none"  # a new KB's when none is asked for (an existing KB keeps the one it was built with)
SERVER_EMBEDDING = "hash"  # the same with a Chroma server, which holds chunks by their vectors

# HNSW: building the graph is most of Chroma's insert time, and its cost follows ef_construction.
# 16 (the floor: max_neighbors, 16 by default) halves the build time of 50; the looser graph is made
# up at query time by ef_search 1500, for the same neighbour recall as (50, 300) (bench/kb.py;
# numbers in docs/measurements.md).
HNSW = {"space": "cosine", "ef_construction": 16, "ef_search": 1500}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80] or "x"


class KBLifecycle:
    """The two stores of one knowledge base, opened lazily. Safe to share between threads."""

    def __init__(
        self,
        path: Path,
        *,
        chroma_url: str = "",
        embedding: str = "",
        collection: str = "sleuth",
        gemini_api_key: str = "",
        gemini_base_url: str = "",
        search_mode: str = DEFAULT_SEARCH_MODE,
        memory_limit: int = MEMORY_LIMIT,
    ) -> None:
        if embedding and embedding not in EMBEDDINGS:
            raise KBError(f"unknown embedding {embedding!r}; choose from {', '.join(EMBEDDINGS)}")
        if search_mode not in SEARCH_MODES:
            raise KBError(f"unknown search mode {search_mode!r}; choose from {', '.join(SEARCH_MODES)}")
        self.path = Path(path).expanduser()
        self.chroma_url = (chroma_url or "").strip()
        self._asked = embedding  # "": the embedding the KB was built with (`embedding`)
        self._embedding = embedding or None
        self.collection_name = collection
        self.search_mode = search_mode
        self.memory_limit = memory_limit  # remembered pages kept (oldest evicted first); 0: no cap
        self._gemini_api_key = gemini_api_key
        self._gemini_base_url = gemini_base_url
        if embedding == NO_VECTORS and self.chroma_url:
            raise KBError(
                "--embedding none keeps no vectors, and a Chroma server holds the chunks by their vectors; "
                "choose another --embedding, or leave out --chroma-url"
            )
        self.lexical_file = self.lexical_path(self.path, chroma_url=self.chroma_url, collection=collection)
        self.store = self.chroma_url or str(self.path / "chroma")
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._client: Any = None  # chromadb's client, collection and embedding function, opened lazily
        self._col: Any = None
        self._ef: Any = None
        self._checked_at = 0.0
        self._lex_checked = False
        self.timings: dict[str, float] = {}  # seconds spent per write phase, summed (bench/kb.py)
        self.write_problems: WriteProblems | None = None  # a write that found no room is told there
        self._bm25 = BM25(ScoreIndex(folder_for(self.lexical_file)))

    @property
    def embedding(self) -> str:
        """The embedding asked for; else the one the KB was built with (kb_meta, or a server collection's
        metadata once opened), so a KB opens as it was made; a new KB's: DEFAULT_EMBEDDING."""
        if self._embedding is None:
            built = None
            if self.lexical_file.is_file():
                with self._lock:
                    db = self._conn()
                    if db.execute("SELECT 1 FROM chunks LIMIT 1").fetchone():
                        # a KB made before the embedding was recorded kept vectors: the default then, hash
                        built = self._meta("embedding") or ("hash" if (self.path / "chroma").exists() else None)
            self._embedding = built or (SERVER_EMBEDDING if self.chroma_url else DEFAULT_EMBEDDING)
        return self._embedding

    @staticmethod
    def lexical_path(path: Path, *, chroma_url: str = "", collection: str = "sleuth") -> Path:
        path = Path(path).expanduser()
        if not chroma_url and collection == "sleuth":
            return path / "lexical.sqlite"
        parts = urlsplit(chroma_url) if chroma_url else None
        where = f"{parts.hostname}-{parts.port or 8000}-" if parts else ""
        return path / f"lexical-{_slug(where + collection)}.sqlite"

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
            if self.embedding == NO_VECTORS:  # BM25 alone: no vector store is opened (or made)
                health.check_chroma(self)
                self._check_lexical()
                db = self._conn()
                with db:
                    sync.set_meta(db, "embedding", self.embedding)
                    sync.set_meta(db, "store", self.store)
                return None
            from .embeddings import embedding_classes

            classes = embedding_classes()  # registers Sleuth's functions with Chroma before any get
            db = self._conn()
            self._check_lexical()
            if self._client is None:  # kept from the start: close() closes it even if opening fails below
                self._client = health.client(self)
            client = self._client
            col = sync.get_collection(client, self.collection_name, self.chroma_url)
            if col is not None:
                cbuilt = (col.metadata or {}).get("sleuth_embedding")
                if cbuilt and cbuilt != self.embedding:
                    if (col.count() or sync.count_chunks(db)) and self._asked:
                        raise self._mismatch(cbuilt)
                    if col.count() or sync.count_chunks(db):
                        self._embedding = cbuilt  # none asked for: the server's collection says how it was built
                    else:
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
            self._ef = ef
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
            server = bool(self.chroma_url)
            t_embed = 0.0 if col is None else upsert_vectors(col, batch, stale, self._embed, server=server)
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

    def reset(self) -> None:
        """Delete every chunk and vector (both stores); the KB then adopts the embedding asked for (or
        the default)."""
        with self._lock:
            health.set_aside(self)  # damaged files are moved aside, not opened
            try:
                self._reset()
            finally:
                self._embedding = self._asked or None

    def _reset(self) -> None:
        with self._lock:
            if self.embedding == NO_VECTORS and not (self.path / "chroma").exists():
                sync.wipe_lexical(self._conn(), keep_meta=False)
                self._bm25.clear()
                return
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

    def close(self) -> None:
        """Close both stores (Chroma keeps its files open until its client is closed); the next use
        opens them again."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self._bm25.close()
            client, self._client, self._col = self._client, None, None
            if client is not None:
                try:
                    client.close()
                except Exception as exc:  # noqa: BLE001 - closing what is gone (a server) is not an error
                    log.debug("closing the Chroma client: %s", exc)
