"""Main-text extraction from HTML: title, publication date, article text and out-links.

Hand-rolled on lxml (one parse, one pass over the tree) because the libraries that reach this
quality are several times too slow for the crawler's budget (see bench/extraction.py).

1. Decode bytes (utils/web/decode.py: BOM, declared charset, UTF-8, detection, cp1252) and parse
   with lxml's HTML parser (again, with the title closed at the end of its line, when a <title> the
   page never closes has swallowed the body).
2. Read metadata and links from the whole page: title (og:title, <h1>, <title>), published date
   (meta tags, JSON-LD, itemprop, <time>), absolute out-links.
3. Drop scripts, styles, form controls and media (a <noscript> is kept when it holds paragraphs of
   prose: the page's own copy of a body that a script builds), then walk the tree once, cutting the
   text into blocks (one per paragraph-like element) and flagging furniture: nav/aside/footer/header tags,
   ARIA roles, elements that are not displayed, and boilerplate class/id words (comment, share,
   related, cookie, newsletter, ad...); an inline element so named counts only while it is short (one
   left open around the article is not furniture).
4. Score blocks: prose (80+ characters, at most 30% link text) counts +length, link lists count
   -length, short fragments a little negative; a lone prose block after a link headline in a small
   subtree is a teaser of another article and counts a quarter.
5. The main content is the element with the highest subtree score ("maximum subtree sum"), so an
   article split by ads or sub-headings stays whole while the navigation, teaser lists and footers
   around it pull its ancestors down. Flagged subtrees inside a candidate count against it and are
   left out; candidates that are or sit inside flagged or hidden elements are discounted.
6. Inside it, prose blocks are kept; sub-headings and one-line paragraphs are kept next to prose;
   the headline, link lists, stray fragments and captions are dropped (a caption being the short text
   in a box with an image, unless several such boxes follow one another: the steps of a how-to).
   Pages with almost no prose (stubs) fall back to the page's <article>/<main> element, keeping
   every block that is not a link list.
7. When that text looks wrong (short, taken from an element flagged as furniture, or missing most of
   the page's own description), readability-lxml gives a second opinion (extract_second.py), cleaned
   by the same rules; its text is used when the evidence favours it.

Everything is data: nothing from the page is executed. Safe to call from several threads.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, field
from urllib.parse import urljoin

from ..text import composed
from .decode import decode_body
from .extract_meta import declared_body, jsonld, meta_map, out_links, published_date, title_of
from .extract_score import main_text
from .extract_second import better_of, declared_if_missed

log = logging.getLogger(__name__)


@dataclass
class Extracted:
    title: str = ""
    published: str | None = None
    text: str = ""
    links: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Decoding and parsing
# --------------------------------------------------------------------------------------------

_BINARY_RE = re.compile(r"[\ufffd\x00-\x08\x0b\x0e-\x1f]")


def _looks_binary(text: str) -> bool:
    """Undecodable or control characters in more than 5% of the start: not a web page (image, PDF, junk)."""
    head = text[:4096]
    return len(_BINARY_RE.findall(head)) > 0.05 * len(head)


_local = threading.local()


def _parser():
    # One parser per thread (lxml parsers must not be shared between threads).  The plain etree parser
    # is used rather than lxml.html's: its per-element Python class lookup costs more than the parse.
    parser = getattr(_local, "parser", None)
    if parser is None:
        from lxml import etree

        # huge_tree lifts libxml2's nesting limit from 256 to 2048 levels: past the limit the parse stops,
        # and a page that leaves a <div> open per item loses everything after the 256th.  It also lifts the
        # 10 MB limit on one text node, which only cut such a page short the same way.
        parser = etree.HTMLParser(
            huge_tree=True,
            encoding="utf-8",
            remove_comments=True,
            remove_pis=True,
            no_network=True,
            default_doctype=False,
            collect_ids=False,
        )
        _local.parser = parser
    return parser


_TITLE_OPEN_RE = re.compile(r"(<title\b[^>]*>)([^<\n]*)", re.I)
_BODY_TAG_RE = re.compile(r"<body\b", re.I)
_TITLE_MAX = 1000  # a title longer than this is the rest of the page, read as title text


# Past libxml2's nesting limit (2,048 levels even with huge_tree) the parser stops and the rest of the
# page is lost: a page that leaves an element open per line or per item (<font>, <div>) can get there.
# Then the page is parsed again with its inline tags taken out, and if that is not enough, with its
# boxes turned into paragraph breaks: flatter, but with every word.
_INLINE_TAGS_RE = re.compile(
    r"</?(?:font|span|b|i|u|s|em|strong|small|big|tt|strike|sub|sup|mark|cite|abbr|q)\b[^>]*>", re.I
)
_BOX_TAGS_RE = re.compile(
    r"</?(?:div|section|article|main|aside|header|footer|nav|center|blockquote|table|thead|tbody|tfoot|tr|td|th"
    r"|form|fieldset|ul|ol|li|dl|dt|dd)\b[^>]*>",
    re.I,
)


def _too_deep() -> bool:
    """The last parse stopped at the nesting limit."""
    return any(e.message.startswith("Excessive depth") for e in _parser().error_log)


def _parse(text: str):
    root = _parse_once(text)
    for tags, replacement in ((_INLINE_TAGS_RE, ""), (_BOX_TAGS_RE, "<p>")):
        if root is None or not _too_deep():
            break
        text = tags.sub(replacement, text)
        root = _parse_once(text)
    if root is not None and root.find("body") is None and (_BODY_TAG_RE.search(text) or _long_title(root)):
        # A <title> the page never closes swallows the rest of it as title text (the parser reads a
        # title as raw text up to "</title>"): close it at the end of its first line and parse again.
        repaired = _parse_once(_TITLE_OPEN_RE.sub(r"\1\2</title>", text, count=1))
        if repaired is not None and repaired.find("body") is not None:
            return repaired
    return root


def _long_title(root) -> bool:
    """The page's title is far too long to be one: the rest of a page without a <body> tag."""
    title = root.find(".//title")
    return title is not None and len(title.text or "") > _TITLE_MAX


def _parse_once(text: str):
    from lxml import etree

    data = text.encode("utf-8", "replace")
    if not data.strip():
        return None
    try:
        root = etree.fromstring(data, parser=_parser())
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None
    if root is None or not isinstance(root.tag, str):
        return None
    return root


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------


_MAX_LINK_LINES = 20
_DESCRIPTION_KEYS = ("og:description", "description", "twitter:description")


def _title_and_links(root, title: str) -> str:
    """The text of a page with no prose at all (a title and a link or two, e.g. a landing or download
    page): the title and the links' texts, so the page still says what it is and where it points."""
    body = root.find("body")
    lines: list[str] = []
    for a in (body if body is not None else root).iter("a"):
        t = " ".join("".join(x for x in a.itertext() if isinstance(x, str)).split())
        if t and t not in lines and t != title:
            lines.append(t)
            if len(lines) >= _MAX_LINK_LINES:
                break
    return "\n\n".join(([title] if title else []) + lines) if lines else ""


def extract(html: str | bytes, url: str = "", document: bool = False) -> Extracted:
    """Extract title, published date (ISO), main text and absolute out-links from an HTML page.

    Never raises on bad input: empty or unparsable input gives an empty ``Extracted``. ``document``:
    the page is a document for the knowledge base (utils/kb/html_doc.py), whose short terms are kept.
    """
    try:
        if isinstance(html, (bytes, bytearray)):
            html = decode_body(bytes(html))[0]
        if not isinstance(html, str) or not html.strip() or _looks_binary(html):
            return Extracted()
        html = html.replace("\x00", "")  # a stray NUL reaches neither parser (ours, the second opinion's)
        root = _parse(html)
        if root is None:
            return Extracted()
        base = url or ""
        base_el = root.find(".//base[@href]")
        if base_el is not None:
            try:
                base = urljoin(base, base_el.get("href").strip())
            except ValueError:
                pass
        meta = meta_map(root)
        ld = jsonld(root)  # before main_text, which drops the page's scripts
        title = title_of(root, meta, url)
        published = published_date(root, meta, ld, url)
        links = out_links(root, base)
        declared = declared_body(ld)
        rejected: set[str] = set()
        doubts: set[str] = set()
        ours = main_text(root, rejected, doubts, document)
        description = next((meta[k] for k in _DESCRIPTION_KEYS if meta.get(k)), "")
        text = declared_if_missed(better_of(ours, html, url, rejected, doubts, description), declared)
        text = text or _title_and_links(root, title)
        return Extracted(title=composed(title), published=published, text=composed(text), links=links)
    except Exception:  # noqa: BLE001 - untrusted input must never crash the crawler
        log.warning("extraction failed for %s", url or "<html>", exc_info=True)
        return Extracted()
