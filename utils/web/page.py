"""What a fetched page is: its FetchResult, and its bytes read as a document (HTML through the
extractor, plain text, or PDF), whatever the content type it came with says or the bytes show."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from ..text import composed
from .decode import decode_body
from .pdf import read_pdf

log = logging.getLogger(__name__)

ALLOWED_TYPES = {"text/html": "html", "application/xhtml+xml": "html", "text/plain": "text", "application/pdf": "pdf"}


@dataclass
class FetchResult:
    url: str
    final_url: str = ""
    status: int | None = None
    title: str = ""
    published: str | None = None
    text: str = ""
    links: list[str] = field(default_factory=list)
    content_type: str = ""
    error: str | None = None
    error_kind: str | None = None
    elapsed_ms: int = 0
    from_cache: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict:
        return {
            "url": self.url,
            "final_url": self.final_url,
            "status": self.status,
            "title": self.title,
            "published": self.published,
            "text": self.text,
            "links": list(self.links),
            "error": self.error,
            "error_kind": self.error_kind,
            "content_type": self.content_type,
            "elapsed_ms": self.elapsed_ms,
            "from_cache": self.from_cache,
        }

    @classmethod
    def from_dict(cls, d: dict) -> FetchResult:
        return cls(
            url=str(d.get("url", "")),
            final_url=str(d.get("final_url", "")),
            status=d.get("status"),
            title=str(d.get("title") or ""),
            published=d.get("published"),
            text=str(d.get("text") or ""),
            links=[str(x) for x in d.get("links") or []],
            content_type=str(d.get("content_type") or ""),
            error=d.get("error"),
            error_kind=d.get("error_kind"),
            elapsed_ms=int(d.get("elapsed_ms") or 0),
            from_cache=bool(d.get("from_cache")),
        )


_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")


def sniff(body: bytes) -> str:
    head = body[:1024].lstrip()
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    low = head.lower()
    if low.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<?xml")) or b"<html" in low:
        return "text/html"
    if b"\x00" in head:
        return "application/octet-stream"
    return "text/plain"


def read_page(url: str, final_url: str, status: int, mime: str, charset: str | None, body: bytes) -> FetchResult:
    """A page's bytes as a FetchResult (its title, date, text and links): `mime` is one of
    ALLOWED_TYPES. A malformed document raises."""
    kind = ALLOWED_TYPES[mime]
    result = FetchResult(url=url, final_url=final_url, status=status, content_type=mime)
    if kind == "pdf":
        pdf = read_pdf(body)
        result.title, result.published, result.text = pdf.title, pdf.published, pdf.text
    elif kind == "text":
        result.text, _ = decode_body(body, charset, html=False)
        result.text = composed(result.text.strip())
    else:
        html, _ = decode_body(body, charset, html=True)
        _extract_html(result, html, body, final_url)
    return result


def _extract_html(result: FetchResult, html: str, body: bytes, final_url: str) -> None:
    from .extract import extract

    html = _XML_DECL.sub("", html, count=1)
    try:
        ex = extract(html, final_url)
    except Exception:  # noqa: BLE001 - let the extractor try the raw bytes before giving up
        log.debug("extract(str) failed for %s; retrying with bytes", final_url, exc_info=True)
        ex = extract(body, final_url)
    result.title = str(getattr(ex, "title", "") or "").strip()
    published = getattr(ex, "published", None) or None
    if published is not None and not isinstance(published, str):
        published = published.isoformat() if hasattr(published, "isoformat") else str(published)
    result.published = published
    result.text = str(getattr(ex, "text", "") or "")
    result.links = [str(x) for x in (getattr(ex, "links", None) or [])]
