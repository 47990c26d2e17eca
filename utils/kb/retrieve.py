"""What the knowledge base answers: the best chunks for a query (`bm25`, `vector` or `fused`: see
store.py), the first chunks of given documents, counts and stats, and how rare a text's words are
among the chunks (the offline engine weighs a question's words by it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import KBError
from ..text import analyze
from . import health, sync
from .bm25 import smooth_idf
from .hits import Hit
from .ingest import known_hash
from .lifecycle import NO_VECTORS, SEARCH_MODES

if TYPE_CHECKING:
    from .lifecycle import KBLifecycle as KnowledgeBase

RRF_K = 60
RRF_VECTOR_WEIGHT = 0.5  # vectors are the weaker signal (bench/kb.py)
_HIT_COLUMNS = (
    "rid, id, source, chunk, title, text, content_hash, doc_hash, source_type, ingested_at, session_id, section"
)


def count(kb: KnowledgeBase) -> int:
    if kb.chroma_url:
        kb._open()
    with kb._lock:
        return sync.count_chunks(kb._conn())


def stats(kb: KnowledgeBase) -> dict:
    vectors = health.vector_count(kb)  # None: a full disk keeps Chroma from opening
    with kb._lock:
        db = kb._conn()
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
        "in_sync": vectors in (None, chunks) or kb.embedding == NO_VECTORS,
        "embedding": kb.embedding,
        "store": kb.store,
        "lexical_index": str(kb.lexical_file),
        "search_mode": kb.search_mode,
    }


def term_idf(kb: KnowledgeBase, text: str) -> dict[str, float]:
    """Each index term of `text` -> how rare it is among the chunks (bm25.smooth_idf): the offline
    engine weighs a question's words by it."""
    with kb._lock:
        db = kb._conn()
        return smooth_idf(db, list(dict.fromkeys(analyze(text)))[:64], kb._bm25._n_docs(db))


def _bm25_ranked(kb: KnowledgeBase, query: str, n: int) -> list[tuple[int, float]]:
    """[(rid, score in [0,1])] best first."""
    terms = list(dict.fromkeys(analyze(query)))[:64]
    if not terms:
        return []
    with kb._lock:
        return kb._bm25.rank(kb._conn(), terms, n)


def _vector(kb: KnowledgeBase, query: str, n: int) -> list[tuple[int, float]]:
    col = kb._open()
    if col is None:
        raise KBError(
            f"the knowledge base at {kb.path} keeps no vectors (--embedding none): search with --mode bm25, "
            "or `kb reset --yes` and ingest again with --embedding hash"
        )
    total = col.count()
    if not total:
        return []
    vec = kb._embed_query(query)
    res = col.query(query_embeddings=vec, n_results=min(n, total), include=["distances"])
    ids, dists = res["ids"][0], res["distances"][0]
    if not ids:
        return []
    with kb._lock:
        marks = ",".join("?" * len(ids))
        rid_of = dict(kb._conn().execute(f"SELECT id, rid FROM chunks WHERE id IN ({marks})", ids).fetchall())
    return [(rid_of[i], max(0.0, min(1.0, 1.0 - d))) for i, d in zip(ids, dists, strict=True) if i in rid_of]


def _fused(kb: KnowledgeBase, query: str, n: int) -> list[tuple[int, float]]:
    depth = max(50, n)
    scores: dict[int, float] = {}
    for weight, ranked in ((1.0, _bm25_ranked(kb, query, depth)), (RRF_VECTOR_WEIGHT, _vector(kb, query, depth))):
        for rank, (rid, _s) in enumerate(ranked, 1):
            scores[rid] = scores.get(rid, 0.0) + weight / (RRF_K + rank)
    best = (1.0 + RRF_VECTOR_WEIGHT) / (RRF_K + 1)
    return sorted(((rid, s / best) for rid, s in scores.items()), key=lambda x: -x[1])[:n]


def search(kb: KnowledgeBase, query: str, k: int = 5, mode: str | None = None) -> list[Hit]:
    """The k best chunks for `query` (distinct chunks, identical texts shown once), best first."""
    mode = mode or kb.search_mode
    if mode not in SEARCH_MODES:
        raise KBError(f"unknown search mode {mode!r}; choose from {', '.join(SEARCH_MODES)}")
    if k < 1 or not query.strip():
        return []
    if kb.chroma_url or mode != "bm25":
        kb._open()
    else:
        kb._check_lexical()  # plain BM25 in embedded mode needs only SQLite (no chromadb import)
    want = k * 2 + 5
    ranked = {"bm25": _bm25_ranked, "vector": _vector, "fused": _fused}[mode](kb, query, want)
    if not ranked:
        return []
    with kb._lock:
        rids = [r for r, _ in ranked]
        marks = ",".join("?" * len(rids))
        sql = f"SELECT {_HIT_COLUMNS} FROM chunks WHERE rid IN ({marks})"
        rows = {r[0]: r for r in kb._conn().execute(sql, rids)}
    hits: list[Hit] = []
    seen: set[str] = set()  # content hashes: identical texts are shown once
    for rid, score in ranked:
        r = rows.get(rid)
        if r is None or r[6] in seen or r[8] == "feedback":  # feedback stored by old versions: not knowledge
            continue
        seen.add(r[6])
        hits.append(Hit.from_row(len(hits) + 1, score, r))
        if len(hits) == k:
            break
    return hits


def bm25_scores(kb: KnowledgeBase, query: str, hits: list[Hit]) -> dict[str, float]:
    """{hit id: raw BM25 score} for hits of `query` (what ranks them in bm25 mode, unnormalised)."""
    from .bm25 import fts5_scores

    terms = list(dict.fromkeys(analyze(query)))[:64]
    ids = [h.id for h in hits]
    with kb._lock:
        db = kb._conn()
        if ids and terms and kb._bm25.loaded():  # the scores of the ranking just made
            marks = ",".join("?" * len(ids))
            rid_of = dict(db.execute(f"SELECT id, rid FROM chunks WHERE id IN ({marks})", ids).fetchall())
            raw = kb._bm25.raw_scores(db, terms, list(rid_of.values()))
            if raw is not None:
                return {i: raw[r] for i, r in rid_of.items() if r in raw}
        return fts5_scores(db, terms, ids)


def chunks_of(kb: KnowledgeBase, sources: list[str], per_source: int = 20) -> list[Hit]:
    """The first chunks of the given documents, in document order (score 0): a document reached
    by a link rather than by a query."""
    if not sources:
        return []
    if kb.chroma_url:
        kb._open()
    else:
        kb._check_lexical()
    with kb._lock:
        marks = ",".join("?" * len(sources))
        rows = (
            kb._conn()
            .execute(
                f"SELECT id, source, chunk, title, text, source_type, session_id, section FROM chunks "
                f"WHERE source IN ({marks}) AND chunk < ? ORDER BY source, chunk",
                [*sources, per_source],
            )
            .fetchall()
        )
    hits: list[Hit] = []
    for r in rows:
        md = {"id": r[0], "source": r[1], "chunk": r[2], "title": r[3], "source_type": r[5]}
        if r[6]:
            md["session_id"] = r[6]
        hits.append(Hit(len(hits) + 1, 0.0, r[1], r[3] or "", r[2], r[4] or "", r[0], r[5] or "", md, r[7] or ""))
    return hits


def has_source(kb: KnowledgeBase, source: str) -> bool:
    if kb.chroma_url:
        kb._open()
    return known_hash(kb, source) is not None
