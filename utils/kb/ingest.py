"""Putting documents into the knowledge base: files and folders (`kb ingest`, which ones:
utils/kb/walk.py; read by utils/kb/readers.py), one document (a page read, feedback), removals.
Every change goes through the KB's one write path (KnowledgeBase._write, steps in write.py); a
document whose content is stored already is not written again."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import KBError
from ..text import valid_text
from . import walk
from .hits import IngestReport
from .readers import read_document, site_titles
from .write import Doc, sha256_hex

if TYPE_CHECKING:
    from .lifecycle import KBLifecycle as KnowledgeBase

SOURCE_TYPES = ("file", "web", "feedback")
WRITE_BATCH_CHUNKS = 5000


def known_hash(kb: KnowledgeBase, source: str) -> str | None:
    with kb._lock:
        row = kb._conn().execute("SELECT doc_hash FROM sources WHERE source=?", (source,)).fetchone()
    return row[0] if row else None


def ingest_paths(
    kb: KnowledgeBase,
    paths: Iterable[str | Path],
    progress: Callable[[int, int, str], None] | None = None,
    follow_links: bool = False,
) -> IngestReport:
    """Ingest files and folders (which ones: utils/kb/walk.py). `progress(done, total, path)` after each file."""
    found = walk.walk(paths, follow_links=follow_links)
    files, sites = found.files, site_titles(found.files)  # sites: a folder's title parts naming the site
    report = IngestReport.of(found)
    pending: list[Doc] = []
    pending_words = 0
    replaced_pending = 0
    added_pending = 0
    kb._open()

    def flush() -> None:
        nonlocal pending, pending_words, replaced_pending, added_pending
        if pending:
            report.chunks_added += kb._write(pending)
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
            known = known_hash(kb, source)
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
        with kb._lock:  # merge the FTS5 index segments after a bulk load
            kb._conn().execute("INSERT INTO chunks_fts(chunks_fts) VALUES('optimize')")
    return report


def add_document(
    kb: KnowledgeBase, *, source: str, title: str, text: str, source_type: str = "web", session_id: str | None = None
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
    with kb._lock:
        kb._open()
        known = known_hash(kb, source)
        if known == doc_hash:
            return 0
        if known is None:
            dup = kb._conn().execute("SELECT 1 FROM sources WHERE doc_hash=? LIMIT 1", (doc_hash,)).fetchone()
            if dup:
                return 0
        added = kb._write([Doc(source, (title or "").strip()[:300], text, source_type, doc_hash, session_id)])
        if source_type == "web" and kb.memory_limit:
            from .manage import enforce_memory_limit

            enforce_memory_limit(kb, kb.memory_limit)
        return added


def documents(kb: KnowledgeBase) -> list[tuple]:
    """Every stored document, oldest first: (source, title, source_type, chunks, ingested_at)."""
    if kb.chroma_url:
        kb._open()
    else:
        kb._check_lexical()
    with kb._lock:
        sql = "SELECT source, title, source_type, chunks, ingested_at FROM sources ORDER BY ingested_at, rowid"
        return kb._conn().execute(sql).fetchall()


def remove(kb: KnowledgeBase, sources: list[str]) -> None:
    """Remove documents from the vectors and the lexical index, through the one write path."""
    kb._write([Doc.removal(s) for s in dict.fromkeys(sources)])
