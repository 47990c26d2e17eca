"""The one PDF text reader (pypdf), for pages the crawler fetches and files the KB ingests.

At most MAX_PAGES pages are read: text extraction is slow per page (docs/measurements.md), and the
crawler has a step to finish; a longer PDF keeps its first MAX_PAGES pages (`PdfText.truncated`). A page that
fails is skipped; a document that cannot be opened, or is encrypted with a password, raises
PdfUnreadable. pypdf is imported on first use.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass

from ..errors import PdfUnreadable
from ..text import composed

log = logging.getLogger(__name__)

MAX_PAGES = 300


@dataclass
class PdfText:
    title: str
    published: str | None  # ISO creation date from the metadata
    text: str  # the pages' text, separated by blank lines
    pages: int  # pages in the document
    truncated: bool  # more than MAX_PAGES pages: only the first MAX_PAGES were read


def read_pdf(data: bytes) -> PdfText:
    """Title, creation date and text of a PDF; PdfUnreadable if it cannot be read."""
    from pypdf import PasswordType, PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except Exception as exc:  # noqa: BLE001 - any failure to open means we cannot read it
                raise PdfUnreadable("the PDF is encrypted") from exc
            if opened == PasswordType.NOT_DECRYPTED:
                raise PdfUnreadable("the PDF is encrypted")
        n_pages = len(reader.pages)
        texts = []
        for i, page in enumerate(reader.pages):
            if i >= MAX_PAGES:
                break
            try:
                texts.append(page.extract_text() or "")
            except Exception:  # noqa: BLE001 - one bad page should not lose the rest
                log.debug("pdf page %d failed", i, exc_info=True)
    except PdfUnreadable:
        raise
    except Exception as exc:  # noqa: BLE001 - pypdf raises many types for malformed files
        raise PdfUnreadable(f"not a readable PDF ({exc})") from exc
    title, published = _metadata(reader)
    text = composed("\n\n".join(t.strip() for t in texts if t and t.strip()))
    return PdfText(composed(title), published, text, n_pages, n_pages > MAX_PAGES)


def _metadata(reader) -> tuple[str, str | None]:
    """(title, ISO creation date or None); broken metadata is not worth failing the file."""
    try:
        meta = reader.metadata
    except Exception:  # noqa: BLE001
        return "", None
    if meta is None:
        return "", None
    try:
        title = str(meta.title or "").strip()
    except Exception:  # noqa: BLE001
        title = ""
    try:
        dt = meta.creation_date
        published = dt.isoformat() if dt else None
    except Exception:  # noqa: BLE001 - malformed dates are common
        published = None
    return title, published
