"""How much of one file the knowledge base reads: memory stays bounded whatever a file's size.

A text document (plain text, Markdown, reST, AsciiDoc, HTML; gzipped or not) is read up to
TEXT_CAP bytes of text: a larger one has its first TEXT_CAP bytes ingested, cut after the last whole
line, and `kb ingest` says so on stderr (peak memory follows the cap, not the file: chunking and
analysing hold the text several times over). A PDF or a gzip file is read whole up to
readers.MAX_DECOMPRESSED and refused beyond, since a part of one cannot be read.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..errors import KBError

log = logging.getLogger(__name__)

TEXT_CAP = 8 * 1024 * 1024  # bytes of text read from one document (the crawler keeps 5 MB of a page)
MB = 1024 * 1024


def read_head(path: Path, limit: int, whole: bool) -> bytes:
    """At most `limit` bytes of `path`; a larger file is refused when it must be read `whole`."""
    with path.open("rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit and whole:
        raise KBError(f"larger than {limit // MB} MB; not read (split it, or unpack it yourself)")
    return data


def capped_text(content: bytes, path: Path) -> bytes:
    """`content` cut to TEXT_CAP bytes after its last whole line within them, said once on stderr."""
    if len(content) <= TEXT_CAP:
        return content
    head = content[:TEXT_CAP]
    cut = head.rfind(b"\n")
    head = head[: cut + 1] if cut > 0 else head
    log.warning(
        "%s: only its first %.1f MB were read (the knowledge base reads at most %d MB of text from a file)",
        path,
        len(head) / MB,
        TEXT_CAP // MB,
    )
    return head
