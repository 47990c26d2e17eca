"""The one charset decoder: bytes of a web page or a file -> text (crawler, extractor, KB readers).

Order: a byte-order mark; then the declared charsets -- the HTTP header's, then (for HTML) the
document's own ``<?xml encoding>`` or ``<meta charset>``; then UTF-8 if at most 0.5% of it is
undecodable; then charset-normalizer's guess if it is ASCII-compatible (windows-1252 when that fits
as well); then windows-1252.
Labels are read as browsers read them (WHATWG): latin-1/ascii mean windows-1252, and a UTF-16/32
label inside a page that was readable as ASCII up to the label means UTF-8.
"""

from __future__ import annotations

import codecs
import logging
import re

log = logging.getLogger(__name__)

_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""", re.I)
# WHATWG: these labels mean windows-1252 in browsers.
_LATIN1_LABELS = {"iso-8859-1", "iso8859-1", "latin-1", "latin1", "l1", "us-ascii", "ascii", "cp819", "ibm819"}
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def parse_content_type(value: str | None) -> tuple[str, str | None]:
    """('text/html', 'windows-1251') from 'text/html; charset="windows-1251"'."""
    if not value:
        return "", None
    parts = [p.strip() for p in str(value).split(";")]
    mime = parts[0].lower()
    charset = None
    for p in parts[1:]:
        k, _, v = p.partition("=")
        if k.strip().lower() == "charset" and v.strip():
            charset = v.strip().strip("\"'").strip()
    return mime, charset or None


def codec_name(label: str | None) -> str | None:
    """Python's name for a charset label, or None if unknown."""
    if not label:
        return None
    try:
        return codecs.lookup(label.strip()).name
    except LookupError:
        return None


def _candidates(label: str | None) -> list[str]:
    name = codec_name(label)
    if not name or label is None:
        return []
    if label.strip().lower() in _LATIN1_LABELS or name in ("latin-1", "iso8859-1", "ascii"):
        return ["cp1252", "latin-1"]
    return [name]


def decode_body(body: bytes, header_charset: str | None = None, html: bool = True) -> tuple[str, str]:
    """(text, encoding used) of `body`; `header_charset` is the HTTP charset (or None), `html` also reads
    the document's own declaration. Never raises."""
    for bom, enc in _BOMS:
        if body.startswith(bom):
            return body.decode(enc, errors="replace"), enc
    declared: list[str] = list(_candidates(header_charset))
    if html:
        head = body[:8192]
        m = _XML_ENCODING.search(head) or _META_CHARSET.search(head)
        if m:
            meta = m.group(1).decode("ascii", "replace")
            cands = _candidates(meta)
            # A page that can be read as ASCII cannot really be UTF-16 (WHATWG rule).
            declared += ["utf-8" if c.startswith(("utf-16", "utf-32")) else c for c in cands]
    for enc in declared:
        try:
            return body.decode(enc), enc
        except (UnicodeDecodeError, LookupError):
            continue
    # Nothing declared fits. Mostly-valid UTF-8 (a stray bad byte) stays UTF-8.
    text = body.decode("utf-8", errors="replace")
    if text.count("\ufffd") <= max(0, len(text) // 200):
        return text, "utf-8"
    try:
        from charset_normalizer import from_bytes

        matches = from_bytes(body[:200_000])
        best = matches.best()
        guess = best.encoding if best is not None else None
        # Equally plausible guesses (short Western text fits cp1250 as well as cp1252): take windows-1252,
        # the browsers' default for undeclared pages.
        if guess and best is not None and any(m.encoding == "cp1252" and m.chaos <= best.chaos for m in matches):
            guess = "cp1252"
        # Web pages are ASCII-compatible: reject detector guesses such as UTF-16 or EBCDIC.
        if guess and _ascii_compatible(guess):
            return body.decode(guess, errors="replace"), guess
    except Exception:  # noqa: BLE001 - detection is best effort
        log.debug("charset detection failed", exc_info=True)
    return body.decode("cp1252", errors="replace"), "cp1252"


def _ascii_compatible(enc: str) -> bool:
    sample = b"<html lang='en'>Az09 ?&;</html>"
    try:
        return sample.decode(enc) == sample.decode("ascii")
    except (UnicodeDecodeError, LookupError):
        return False
