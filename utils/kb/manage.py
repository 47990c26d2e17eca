"""Looking after what the knowledge base holds: its documents, finding them by path or URL,
removing them, the ingested files that no longer exist, and the cap on remembered web pages.

A document is a source (a file's absolute path, a page's URL, ``feedback:SESSION:ROUND``) with its
chunks. Removal goes through the KB's one write path (`KnowledgeBase.remove`: a write of the source
with no chunks), so the vectors, the BM25 index and, with a Chroma server, the server's collection
and every machine's lexical cache stay consistent.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

KINDS = {"file": "ingested file", "web": "remembered page", "feedback": "feedback"}


@dataclass
class Document:
    source: str
    title: str
    kind: str  # the stored source_type: file | web | feedback
    chunks: int
    added: str  # when its current content was stored (UTC, ISO 8601)

    @property
    def kind_label(self) -> str:
        return KINDS.get(self.kind, self.kind)

    def to_dict(self) -> dict:
        return asdict(self)


def documents(kb) -> list[Document]:
    """Every document, oldest first."""
    return [Document(s, t or "", k or "file", int(c or 0), a or "") for s, t, k, c, a in kb.documents()]


def _is_url(text: str) -> bool:
    return "://" in text or text.startswith("feedback:")


def matching(docs: list[Document], target: str) -> list[Document]:
    """The documents a `kb remove` argument names: a URL (or feedback source) exactly; a path as the
    file it names, or every file under it when it is a folder (the path need not exist any more)."""
    if _is_url(target):
        return [d for d in docs if d.source == target]
    path = str(Path(target).expanduser().resolve())
    under = path.rstrip(os.sep) + os.sep
    return [d for d in docs if d.kind == "file" and (d.source == path or d.source.startswith(under))]


def missing_under(docs: list[Document], folder: str | Path) -> list[Document]:
    """Ingested files under `folder` that are no longer files there (`kb ingest --sync`)."""
    return [d for d in matching(docs, str(folder)) if not os.path.isfile(d.source)]


def older_than(docs: list[Document], limit: datetime) -> list[Document]:
    """Documents stored before `limit` (an aware datetime)."""
    out = []
    for d in docs:
        try:
            added = datetime.fromisoformat(d.added.replace("Z", "+00:00"))
        except ValueError:
            continue
        if added < limit:
            out.append(d)
    return out


def enforce_memory_limit(kb, limit: int) -> list[str]:
    """Keep at most `limit` remembered pages: the oldest go first. Returns the sources removed."""
    with kb._lock:
        n = kb._conn().execute("SELECT count(*) FROM sources WHERE source_type='web'").fetchone()[0]
        if n <= limit:
            return []
        rows = kb._conn().execute(
            "SELECT source FROM sources WHERE source_type='web' ORDER BY ingested_at, rowid LIMIT ?", (n - limit,)
        )
        oldest = [r[0] for r in rows]
        kb.remove(oldest)
        return oldest
