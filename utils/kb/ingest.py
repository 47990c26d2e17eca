"""Putting documents into the knowledge base: files and folders (`kb ingest`, which ones:
utils/kb/walk.py; read by utils/kb/readers.py), one document (a page read, feedback), removals.
Every change goes through the KB's one write path (KnowledgeBase._write, steps in write.py); a
document whose content is stored already is not written again."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import KBError
from ..text import valid_text
from . import health, sync, walk
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


FRESH_NS = 2_000_000_000  # a file changed this recently may change again within its clock tick: not stamped


def file_stamp(f: str | Path) -> str:
    """The file's size, modification and change times and inode ("" when modified too recently to trust,
    or unreadable): a file whose stamp is the one stored with its document is unchanged, and is not read
    again. The change time, which no program can set back, catches a copy that kept the modification time."""
    try:
        st = os.stat(f)
    except OSError:
        return ""
    if time.time_ns() - st.st_mtime_ns < FRESH_NS:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


def folder_of(f: str) -> str:
    """The folder of a file named by its path's text (a path as `str(Path)` writes it): the text of its
    Path's parent, made without a Path."""
    return os.path.dirname(f) or "."


def real_paths(files: list[str]) -> list[str]:
    """Each file's real path (its document's source), as text: a file name that is not UTF-8 keeps
    U+FFFD. Each folder is resolved once, and a file that is not a symlink is its real folder's entry:
    one system call a file where resolving it would cost one for every folder on its path. A source
    that is the file's own text is that same string (one copy of each path in memory)."""
    folders: dict[str, str] = {}
    out = []
    for f in files:
        parent = folder_of(f)
        folder = folders.get(parent)
        if folder is None:
            folder = folders[parent] = str(Path(parent).resolve())
        real = str(Path(f).resolve()) if os.path.islink(f) else os.path.join(folder, os.path.basename(f))
        source = valid_text(real)
        out.append(f if source == f else source)
    return out


def ingest_paths(
    kb: KnowledgeBase,
    paths: Iterable[str | Path],
    progress: Callable[[int, int, str], None] | None = None,
    follow_links: bool = False,
) -> IngestReport:
    """Ingest files and folders (which ones: utils/kb/walk.py). `progress(done, total, path)` after each file.

    A file whose size and modification time are those stored with its document is unchanged and not
    read; the others are read, and written in batches of about WRITE_BATCH_CHUNKS chunks, each batch
    committed on its own: memory is bounded by a batch, and an ingest that was stopped (Ctrl-C writes
    the files read so far) resumes where it stopped, the files already written being unchanged."""
    with kb._lock:
        db = kb._conn()
    with sync.bounded_memory(db):
        return _ingest_paths(kb, paths, progress, follow_links)


def _ingest_paths(
    kb: KnowledgeBase, paths: Iterable[str | Path], progress: Callable[[int, int, str], None] | None, follow_links: bool
) -> IngestReport:
    found = walk.walk(paths, follow_links=follow_links)
    report = IngestReport.of(found)
    del found  # its Paths: each file is its path's text from here on, and a pass that needs a Path makes one
    files = report.files
    if kb.chroma_url:
        kb._open()  # a server that does not answer is told before any file is read
    else:
        health.check_chroma(kb)  # a damaged vector store is told first; it opens at the first write
        kb._check_lexical()
    stamps = [file_stamp(f) for f in files]
    sources = real_paths(files)
    unchanged: list[bool] = []
    old_hash: list[str | None] = []  # the stored content's hash of each file to read (None: a new file)
    with kb._lock:
        db = kb._conn()
        for s, st in zip(sources, stamps, strict=True):
            row = db.execute("SELECT doc_hash, stamp FROM sources WHERE source=?", (s,)).fetchone()
            unchanged.append(bool(st) and row is not None and row[1] == st)
            old_hash.append(None if row is None or unchanged[-1] else row[0])
    to_read = {folder_of(f) for f, same in zip(files, unchanged, strict=True) if not same}
    # a folder's title parts naming the site
    sites = site_titles(Path(f) for f in files if to_read and folder_of(f) in to_read)
    pending: list[Doc] = []
    restamp: list[tuple[str, str]] = []  # (stamp, source): content unchanged, the file touched
    pending_words = replaced_pending = added_pending = 0

    def flush() -> None:
        nonlocal pending, pending_words, replaced_pending, added_pending
        if pending:
            report.chunks_added += kb._write(pending)
            report.files_added += added_pending
            report.files_replaced += replaced_pending
            sync.give_back_memory()  # what the batch used, for the next one: memory is bounded by a batch
        if restamp:
            with kb._lock:
                db = kb._conn()
                with db:
                    db.executemany("UPDATE sources SET stamp=? WHERE source=?", restamp)
            restamp.clear()
        pending, pending_words, replaced_pending, added_pending = [], 0, 0, 0

    try:
        rows = zip(files, sources, stamps, unchanged, old_hash, strict=True)
        for n, (f, source, stamp, same, old) in enumerate(rows, 1):
            if same:
                report.files_unchanged += 1
            else:
                path = Path(f)
                try:
                    title, text, data, structured = read_document(path, sites.get(path.parent, frozenset()))
                except KBError as exc:
                    report.errors.append((f, str(exc)))
                except Exception as exc:  # noqa: BLE001 - one bad file must not stop the rest
                    report.errors.append((f, f"{type(exc).__name__}: {exc}"))
                else:
                    doc_hash = sha256_hex(data)
                    if old == doc_hash:
                        report.files_unchanged += 1
                        if stamp:
                            restamp.append((stamp, source))
                    else:
                        title = valid_text(title.strip()[:300])
                        doc = Doc(source, title, valid_text(text), "file", doc_hash, structured=structured, stamp=stamp)
                        pending.append(doc)
                        pending_words += len(text.split())
                        if old is None:
                            added_pending += 1
                        else:
                            replaced_pending += 1
                        if pending_words >= WRITE_BATCH_CHUNKS * 180:
                            flush()
            if progress:
                progress(n, len(files), f)
    except KeyboardInterrupt:
        flush()  # what was read is kept: the next ingest goes on from there
        raise
    flush()
    with kb._lock:
        if report.chunks_added >= 1000:  # merge the FTS5 index segments after a bulk load
            kb._conn().execute("INSERT INTO chunks_fts(chunks_fts) VALUES('optimize')")
        sync.give_back_memory()
        kb._bm25.build_index(kb._conn())  # the score index of what is now stored (utils/kb/score_index.py)
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
