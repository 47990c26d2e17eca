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
summed), bent below 1 rather than capped (bm25.share); vector: cosine similarity clipped at
0; fused: the RRF sum over its maximum (rank 1 in both lists).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import EmbeddingMismatch, KBError  # noqa: F401 - the KB's errors, importable from here
from . import ingest, retrieve, sync
from .hits import Hit, IngestReport, hits_json  # noqa: F401 - the KB's result types
from .ingest import SOURCE_TYPES  # noqa: F401 - the KB's names, importable from here
from .lifecycle import DEFAULT_SEARCH_MODE, HNSW, SEARCH_MODES, KBLifecycle  # noqa: F401

log = logging.getLogger(__name__)


class KnowledgeBase(KBLifecycle):
    """Chroma vectors + SQLite FTS5 BM25 over the same chunks (their life: lifecycle.py). Safe to
    share between threads."""

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
    def quick_count(path: Path, *, chroma_url: str = "", collection: str = "sleuth") -> int:
        """Chunks in the KB at `path`, read from the lexical SQLite file (no chromadb import); 0 if none."""
        f = KnowledgeBase.lexical_path(path, chroma_url=chroma_url, collection=collection)
        return sync.quick_count(f) if f.is_file() else 0

    # ---- what it does: the work is in ingest.py (putting documents in) and retrieve.py (answers)

    def ingest_paths(
        self,
        paths: Iterable[str | Path],
        progress: Callable[[int, int, str], None] | None = None,
        follow_links: bool = False,
    ) -> IngestReport:
        return ingest.ingest_paths(self, paths, progress, follow_links)

    def add_document(
        self, *, source: str, title: str, text: str, source_type: str = "web", session_id: str | None = None
    ) -> int:
        return ingest.add_document(
            self, source=source, title=title, text=text, source_type=source_type, session_id=session_id
        )

    def remove(self, sources: list[str]) -> None:
        ingest.remove(self, sources)

    def documents(self) -> list[tuple]:
        return ingest.documents(self)

    def _known_hash(self, source: str) -> str | None:
        return ingest.known_hash(self, source)

    def has_source(self, source: str) -> bool:
        return retrieve.has_source(self, source)

    def count(self) -> int:
        return retrieve.count(self)

    def stats(self) -> dict:
        return retrieve.stats(self)

    def term_idf(self, text: str) -> dict[str, float]:
        return retrieve.term_idf(self, text)

    def search(self, query: str, k: int = 5, mode: str | None = None) -> list[Hit]:
        return retrieve.search(self, query, k, mode)

    def chunks_of(self, sources: list[str], per_source: int = 20) -> list[Hit]:
        return retrieve.chunks_of(self, sources, per_source)

    def bm25_scores(self, query: str, hits: list[Hit]) -> dict[str, float]:
        return retrieve.bm25_scores(self, query, hits)
