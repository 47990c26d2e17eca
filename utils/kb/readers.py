"""Reading files for the knowledge base: .txt and .md as text, .html through the page extractor,
.pdf through the one PDF reader (which files of a folder are read: utils/kb/walk.py). Bytes are
decoded by utils.web.decode, the same decoder the crawler uses."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from ..errors import KBError, PdfUnreadable
from ..text import composed

log = logging.getLogger(__name__)

FILE_TYPES = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}


def _read_text(data: bytes, path: Path) -> tuple[str, str]:
    from ..web.decode import decode_body

    if b"\x00" in data[:8192]:
        raise KBError("looks like a binary file, not text")
    text, _ = decode_body(data, html=False)
    title = path.stem
    if path.suffix.lower() in (".md", ".markdown"):
        m = re.search(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", text, re.M)
        if m:
            title = m.group(1).strip()
    return title, text


def _read_html(data: bytes, path: Path) -> tuple[str, str]:
    from ..web.extract import extract

    ex = extract(data, url=path.absolute().as_uri())  # relative paths too
    return (ex.title or path.stem), ex.text


def _read_pdf(data: bytes, path: Path) -> tuple[str, str]:
    from ..web.pdf import MAX_PAGES, read_pdf

    try:
        pdf = read_pdf(data)
    except PdfUnreadable as exc:
        raise KBError(str(exc)) from exc
    if pdf.truncated:
        log.warning("%s: only the first %d of its %d pages were read", path, MAX_PAGES, pdf.pages)
    return (pdf.title or path.stem), pdf.text


_READERS = {"text": _read_text, "markdown": _read_text, "html": _read_html, "pdf": _read_pdf}


def read_file(path: Path) -> tuple[str, str, bytes]:
    """(title, text, raw bytes) of a supported file; KBError with a clear reason otherwise."""
    kind = FILE_TYPES.get(path.suffix.lower())
    if kind is None:
        raise KBError(f"unsupported file type {path.suffix or '(none)'!r} (supported: {', '.join(sorted(FILE_TYPES))})")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KBError(f"cannot read: {exc.strerror or exc}") from exc
    title, text = map(composed, _READERS[kind](data, path))  # a file name from macOS is decomposed
    if not text.strip():
        raise KBError("no text found" + (" (a scanned PDF without a text layer?)" if kind == "pdf" else ""))
    return title, text, data
