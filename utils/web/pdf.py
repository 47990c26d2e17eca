"""The one PDF text reader, for pages the crawler fetches and files the KB ingests: PDFium's text
(pypdfium2), then the page furniture taken out.

PDFium was chosen over pypdf (plain and layout modes) and pdfminer.six by measurement
(docs/design.md, "Dependencies"): on manuals that also ship as HTML it splits the fewest words,
marks the hyphens it breaks lines at (so a word broken over two lines is joined again), and is the
fastest by far. What is taken out: a word's line-end hyphen (``desti-`` / ``nation`` reads
"destination", unless the document writes the word with its hyphen elsewhere), and the running
headers and footers (a line at the top or bottom of many pages, its page number aside: "Valgrind
Documentation", "Page 12 of 80").

At most MAX_PAGES pages are read: a longer PDF keeps its first MAX_PAGES pages (`PdfText.truncated`).
A page that fails is skipped; a document that cannot be opened, or is encrypted with a password,
raises PdfUnreadable. The library's own messages never reach the terminal (they go to the debug
log). pypdfium2 is imported on first use.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass

from ..errors import PdfUnreadable
from ..text import composed

log = logging.getLogger(__name__)

MAX_PAGES = 300
_EDGE_LINES = 2  # lines at the top and at the bottom of a page that may be a running header or footer
_SOFT_HYPHEN = re.compile(r"[\x02\u00ad]\r?\n?")
_LINE_END_HYPHEN = re.compile(r"(\w+)-\n(\s*)([a-z]\w*)")
_DIGITS = re.compile(r"\d+|\b[ivxlcdm]+\b")


@dataclass
class PdfText:
    title: str
    published: str | None  # ISO creation date from the metadata
    text: str  # the pages' text, separated by blank lines
    pages: int  # pages in the document
    truncated: bool  # more than MAX_PAGES pages: only the first MAX_PAGES were read


def read_pdf(data: bytes) -> PdfText:
    """Title, creation date and text of a PDF; PdfUnreadable if it cannot be read."""
    import warnings

    with warnings.catch_warnings():  # a library's warnings about a damaged file are not the user's to read
        warnings.simplefilter("ignore")
        return _read(data)


def _read(data: bytes) -> PdfText:
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise PdfUnreadable("the PDF is encrypted") from exc
        raise PdfUnreadable(f"not a readable PDF ({exc})") from exc
    except Exception as exc:  # noqa: BLE001 - a malformed file may raise anything
        raise PdfUnreadable(f"not a readable PDF ({exc})") from exc
    try:
        n_pages = len(doc)
        pages = []
        for i in range(min(n_pages, MAX_PAGES)):
            try:
                page = doc[i]
                textpage = page.get_textpage()
                pages.append(textpage.get_text_bounded())
                textpage.close()
                page.close()
            except Exception:  # noqa: BLE001 - one bad page should not lose the rest
                log.debug("pdf page %d failed", i, exc_info=True)
        title, published = _metadata(doc)
    finally:
        doc.close()
    return PdfText(composed(title), published, composed(clean_pages(pages)), n_pages, n_pages > MAX_PAGES)


def _key(line: str) -> str:
    """A line as a running header or footer is matched: its numbers aside."""
    return " ".join(_DIGITS.sub("#", line.lower()).split())


def clean_pages(pages: list[str]) -> str:
    """The pages' text without running headers and footers or line-end hyphens, pages a blank line apart."""
    split = [_SOFT_HYPHEN.sub("", p).replace("\r\n", "\n").replace("\r", "\n").split("\n") for p in pages]
    split = [[ln.rstrip() for ln in lines] for lines in split]
    edges: Counter[str] = Counter()
    for lines in split:
        body = [ln for ln in lines if ln.strip()]
        edges.update({_key(ln) for ln in body[:_EDGE_LINES] + body[-_EDGE_LINES:]})
    repeated = {k for k, n in edges.items() if n >= max(3, len(pages) // 4) and k not in ("", "#")}
    out = []
    for lines in split:
        filled = [i for i, ln in enumerate(lines) if ln.strip()]
        edge = set(filled[:_EDGE_LINES] + filled[-_EDGE_LINES:])
        kept = [ln for i, ln in enumerate(lines) if not (i in edge and (_key(ln) in repeated or _key(ln) == "#"))]
        text = "\n".join(kept).strip()  # a running header or footer, or a page number alone, left out
        if text:
            out.append(text)
    text = "\n\n".join(out)
    whole = set(re.findall(r"\w+-\w+", text))

    def join(m: re.Match) -> str:
        if f"{m.group(1)}-{m.group(3)}" in whole:  # the document writes it with its hyphen
            return f"{m.group(1)}-{m.group(3)}\n{m.group(2)}"
        return f"{m.group(1)}{m.group(3)}\n{m.group(2)}"

    return _LINE_END_HYPHEN.sub(join, text)


def _metadata(doc) -> tuple[str, str | None]:
    """(title, ISO creation date or None); broken metadata is not worth failing the file."""
    try:
        meta = doc.get_metadata_dict(skip_empty=True)
    except Exception:  # noqa: BLE001
        return "", None
    title = str(meta.get("Title") or "").strip()
    raw = str(meta.get("CreationDate") or "")
    m = re.match(r"D:(\d{4})(\d{2})?(\d{2})?", raw)
    published = None
    if m:
        published = "-".join(g for g in (m.group(1), m.group(2), m.group(3)) if g)
    return title, published
