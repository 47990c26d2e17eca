"""The knowledge base's result types: a search hit and an ingest report."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..text import analyze

# A hit repeats a better one when this share of its word triples (or of the other's, if that is
# shorter) are the other's: a page and its rendering (a Sphinx page's HTML and its .rst.txt source,
# a man page's HTML and its AsciiDoc) cut into chunks at different places share most of them.
REPEAT_SHARE = 0.5


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
    section: str = ""  # heading path, "Title › Section › Subsection" (" › "); "" when the document had none

    @classmethod
    def from_row(cls, rank: int, score: float, row: tuple) -> Hit:
        """From a `chunks` row selected as store._HIT_COLUMNS."""
        _rid, cid, source, chunk, title, text, content_hash, doc_hash, source_type, ingested_at, session_id, section = (
            row
        )
        md = {
            "id": cid,
            "source": source,
            "chunk": chunk,
            "title": title,
            "content_hash": content_hash,
            "doc_hash": doc_hash,
            "source_type": source_type,
            "ingested_at": ingested_at,
        }
        if session_id:
            md["session_id"] = session_id
        if section:
            md["section"] = section
        return cls(
            rank, float(score), source, title or "", chunk, text or "", cid, source_type or "", md, section or ""
        )

    def to_dict(self) -> dict:
        return {
            "rank": self.rank,
            "score": round(self.score, 4),
            "source": self.source,
            "title": self.title,
            "section": self.section,
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
    passed_over: list[tuple[str, str]] = field(default_factory=list)  # (path, why): loops, duplicates (kb/walk.py)
    files: list[str] = field(default_factory=list)  # the files found to read (kb/walk.py), as text

    @classmethod
    def of(cls, found) -> IngestReport:
        """The report of an ingest of what kb/walk.py found. Its files are kept as text: a Path holds its
        parts and caches besides (~500 bytes a file, ~100 MB for the 200,000 files of a million chunks),
        and the report lives as long as the ingest."""
        files = [str(f) for f in found.files]
        return cls(errors=found.errors, skipped=found.skipped, passed_over=found.passed_over, files=files)

    @property
    def kinds(self) -> dict[str, int]:
        """The files read, by the kind they were read as (readers.document_kind), most first."""
        from collections import Counter
        from pathlib import Path

        from .readers import document_kind

        failed = {p for p, _ in self.errors}
        return dict(Counter(document_kind(Path(f)) or "text" for f in self.files if f not in failed).most_common())

    @property
    def files_ok(self) -> int:
        return self.files_added + self.files_unchanged + self.files_replaced


def _triples(text: str) -> set[tuple[str, ...]]:
    terms = analyze(text)
    return {tuple(terms[i : i + 3]) for i in range(len(terms) - 2)}


def distinct(hits: list[Hit]) -> list[Hit]:
    """The hits (best first) without those that repeat a better hit of another document: the same
    passage read twice adds nothing and takes the place of another (a folder holding both a page and
    its rendering holds every passage twice)."""
    kept: list[tuple[Hit, set]] = []
    for h in hits:
        own = _triples(h.text)
        if not any(
            k.source != h.source and len(own & theirs) >= REPEAT_SHARE * max(1, min(len(own), len(theirs)))
            for k, theirs in kept
        ):
            kept.append((h, own))
    return [h for h, _ in kept]


def hits_json(query: str, hits: list[Hit]) -> str:
    """One JSON line for `kb search --json`."""
    return json.dumps({"query": query, "hits": [h.to_dict() for h in hits]}, ensure_ascii=False)
