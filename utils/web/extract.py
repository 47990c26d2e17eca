"""Main-text extraction from HTML: title, publication date, article text and out-links.

Hand-rolled on lxml (one parse, one pass over the tree) because the libraries that reach this
quality are several times too slow for the crawler's budget (see bench/extraction.py).

1. Decode bytes (BOM, declared charset, UTF-8, then cp1252) and parse with lxml's HTML parser.
2. Read metadata and links from the whole page: title (og:title, <h1>, <title>), published date
   (meta tags, JSON-LD, itemprop, <time>), absolute out-links.
3. Drop scripts, styles, form controls and media, then walk the tree once, cutting the text into
   blocks (one per paragraph-like element) and flagging furniture: nav/aside/footer/header tags,
   ARIA roles, elements that are not displayed, and boilerplate class/id words (comment, share,
   related, cookie, newsletter, ad...).
4. Score blocks: prose (80+ characters, at most 30% link text) counts +length, link lists count
   -length, short fragments a little negative; a lone prose block after a link headline in a small
   subtree is a teaser of another article and counts a quarter.
5. The main content is the element with the highest subtree score ("maximum subtree sum"), so an
   article split by ads or sub-headings stays whole while the navigation, teaser lists and footers
   around it pull its ancestors down. Flagged subtrees inside a candidate count against it and are
   left out; candidates inside flagged or hidden elements are discounted.
6. Inside it, prose blocks are kept; sub-headings and one-line paragraphs are kept next to prose;
   the headline, link lists and stray fragments are dropped. Pages with almost no prose (stubs) fall
   back to the page's <article>/<main> element, keeping every block that is not a link list.

Everything is data: nothing from the page is executed. Safe to call from several threads.
"""

from __future__ import annotations

import codecs
import functools
import json
import logging
import re
import threading
from dataclasses import dataclass, field
from urllib.parse import urljoin

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

_CHARSET_RE = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_XML_ENC_RE = re.compile(rb"""^\s*<\?xml[^>]{0,100}?encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""", re.I)
# Browsers (WHATWG encoding spec) read these labels as windows-1252.
_AS_CP1252 = {"iso8859-1", "latin-1", "ascii", "iso-8859-1", "cp819", "l1", "us-ascii", "iso8859_1"}


def _declared_charset(data: bytes) -> str | None:
    head = data[:8192]
    m = _XML_ENC_RE.search(head) or _CHARSET_RE.search(head)
    if not m:
        return None
    label = m.group(1).decode("ascii", "ignore").strip().lower()
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    if name in _AS_CP1252 or label in _AS_CP1252:
        return "cp1252"
    if name.startswith("utf-16") or name.startswith("utf-32"):
        return "utf-8"  # a page that could be read as ASCII up to here is not really UTF-16
    return name


def decode_html(data: bytes) -> str:
    """Bytes -> str: BOM, then the page's declared charset, then UTF-8, then cp1252."""
    boms = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
    for bom, enc in boms:
        if data.startswith(bom):
            return data[len(bom) :].decode(enc, "replace")
    declared = _declared_charset(data)
    if declared:
        try:
            return data.decode(declared)
        except (UnicodeDecodeError, LookupError):
            if declared == "utf-8":
                return data.decode("utf-8", "replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


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

        parser = etree.HTMLParser(
            encoding="utf-8",
            remove_comments=True,
            remove_pis=True,
            no_network=True,
            default_doctype=False,
            collect_ids=False,
        )
        _local.parser = parser
    return parser


def _parse(text: str):
    from lxml import etree

    data = text.replace("\x00", "").encode("utf-8", "replace")
    if not data.strip():
        return None
    try:
        root = etree.fromstring(data, parser=_parser())
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None
    if root is None or not isinstance(root.tag, str):
        return None
    return root


def _text_of(el) -> str:
    return "".join(t for t in el.itertext() if isinstance(t, str))


# --------------------------------------------------------------------------------------------
# Metadata: title, date, links
# --------------------------------------------------------------------------------------------

_WS = re.compile(r"\s+")


def _clean(s: str | None) -> str:
    return _WS.sub(" ", s or "").strip()


def _meta_map(root) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in root.iter("meta"):
        key = (m.get("property") or m.get("name") or m.get("itemprop") or "").strip().lower()
        val = m.get("content")
        if key and val and key not in out:
            out[key] = val.strip()
    return out


def _title(root, meta: dict[str, str]) -> str:
    for key in ("og:title", "twitter:title", "dc.title", "headline"):
        if meta.get(key):
            return _clean(meta[key])
    page_title = ""
    t = root.find(".//title")
    if t is not None:
        page_title = _clean(_text_of(t))
    for h1 in root.iter("h1"):
        h = _clean(_text_of(h1))
        if h and (not page_title or h.lower() in page_title.lower()):
            return h
    if page_title:
        # "Headline | Site name" -> the longest segment
        parts = [p.strip() for p in re.split(r"\s+[|\u2013\u2014•·»:-]\s+", page_title) if p.strip()]
        if len(parts) > 1:
            return max(parts, key=len)
    return page_title


_MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)}
_ISO_RE = re.compile(
    r"^\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
    r"\s*(Z|[+-]\d{2}:?\d{2})?)?"
)
_COMPACT_RE = re.compile(r"^\s*(\d{4})(\d{2})(\d{2})(?:T?(\d{2})(\d{2})(\d{2})?)?\b")
_TEXT_DATE_RE = re.compile(
    r"\b(?:(\d{1,2})\s+([A-Za-z]{3})[a-z]*\.?,?\s+(\d{4})"  # 5 March 2024
    r"|([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4}))\b"
)  # March 5th, 2024


def _norm_date(value: str | None) -> str | None:
    """Normalise a machine-readable date to ISO ('YYYY-MM-DD' or full ISO with time), else None."""
    if not value:
        return None
    value = value.strip()
    m = _ISO_RE.match(value)
    if m:
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if not (1 <= mo <= 12 and 1 <= d <= 31 and 1900 <= y <= 2100):
            return None
        if m.group(4) is None:
            return f"{y:04d}-{mo:02d}-{d:02d}"
        out = f"{y:04d}-{mo:02d}-{d:02d}T{int(m.group(4)):02d}:{m.group(5)}:{m.group(6) or '00'}"
        tz = m.group(7)
        if tz:
            out += "Z" if tz == "Z" else (tz if ":" in tz else tz[:3] + ":" + tz[3:])
        return out
    m = _COMPACT_RE.match(value)
    if m and 1900 <= int(m.group(1)) <= 2100 and 1 <= int(m.group(2)) <= 12 and 1 <= int(m.group(3)) <= 31:
        return f"{m.group(1)}-{m.group(2)}-{m.group(3)}"
    m = _TEXT_DATE_RE.search(value)
    if m:
        if m.group(1):
            d, mon, y = m.group(1), m.group(2), m.group(3)
        else:
            mon, d, y = m.group(4), m.group(5), m.group(6)
        mo = _MONTHS.get(mon.lower())
        if mo and 1 <= int(d) <= 31 and 1900 <= int(y) <= 2100:
            return f"{int(y):04d}-{mo:02d}-{int(d):02d}"
    return None


_DATE_META_KEYS = (
    "article:published_time",
    "og:published_time",
    "article:published",
    "datepublished",
    "publishdate",
    "publish-date",
    "publish_date",
    "pubdate",
    "published_time",
    "date",
    "dc.date.issued",
    "dc.date",
    "dcterms.date",
    "dcterms.issued",
    "sailthru.date",
    "parsely-pub-date",
    "article.published",
    "cxenseparse:recs:publishtime",
)


def _jsonld_dates(obj, depth: int = 0):
    if depth > 8:
        return
    if isinstance(obj, dict):
        v = obj.get("datePublished")
        if isinstance(v, str):
            yield v
        for key in ("@graph", "mainEntity", "mainEntityOfPage", "itemListElement"):
            if key in obj:
                yield from _jsonld_dates(obj[key], depth + 1)
        v = obj.get("dateCreated")
        if isinstance(v, str):
            yield v
    elif isinstance(obj, list):
        for item in obj[:50]:
            yield from _jsonld_dates(item, depth + 1)


def _json_in(raw: str):
    """The JSON value in a script body, tolerating wrappers such as <!-- --> or //<![CDATA[ ]]>."""
    decoder = json.JSONDecoder()
    for start in sorted(i for i in (raw.find("{"), raw.find("[")) if i >= 0):
        try:
            return decoder.raw_decode(raw, start)[0]
        except ValueError:
            continue
    return None


def _published(root, meta: dict[str, str]) -> str | None:
    for key in _DATE_META_KEYS:
        d = _norm_date(meta.get(key))
        if d:
            return d
    for script in root.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json" or not script.text:
            continue
        data = _json_in(script.text)
        if data is None:
            continue
        for v in _jsonld_dates(data):
            d = _norm_date(v)
            if d:
                return d
    for el in root.xpath('//*[@itemprop="datePublished"]'):
        d = _norm_date(el.get("content") or el.get("datetime") or _text_of(el))
        if d:
            return d
    times = list(root.iter("time"))
    for t in sorted(times, key=lambda t: t.get("pubdate") is None):  # <time pubdate> first
        d = _norm_date(t.get("datetime"))
        if d:
            return d
    return None


def _links(root, base: str) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    scheme, _, rest = base.partition("://")
    site = f"{scheme}://{rest.split('/', 1)[0]}" if rest and scheme.lower() in ("http", "https") else ""
    for a in root.iter("a", "area"):
        href = a.get("href")
        if not href:
            continue
        href = href.strip()
        if not href or href[0] == "#":
            continue
        if href.startswith(("http://", "https://")):
            absolute = href
        elif site and href[0] == "/" and not href.startswith("//") and "/." not in href:
            absolute = site + href  # fast path for the common root-relative link
        else:
            try:
                absolute = urljoin(base, href) if base else href
            except ValueError:
                continue
            if not absolute.lower().startswith(("http://", "https://")):
                continue
        absolute = absolute.partition("#")[0]
        if absolute not in seen:
            seen.add(absolute)
            out.append(absolute)
    return out


# --------------------------------------------------------------------------------------------
# Main text
# --------------------------------------------------------------------------------------------

# Elements whose whole subtree is never article text.
_DROP_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "math",
    "iframe",
    "object",
    "embed",
    "canvas",
    "button",
    "select",
    "textarea",
    "input",
    "option",
    "label",
    "map",
    "audio",
    "video",
    "head",
    "title",
    "dialog",
)
# Layout furniture by tag or ARIA role: flagged, so their subtree never counts as (or joins) the main text.
_SKIP_TAGS = frozenset(("nav", "aside", "footer", "header", "figcaption", "menu"))
_SKIP_ROLES = frozenset(
    (
        "navigation",
        "banner",
        "contentinfo",
        "complementary",
        "dialog",
        "alertdialog",
        "menu",
        "menubar",
        "search",
        "toolbar",
        "tablist",
    )
)
_BLOCK_TAGS = frozenset(
    (
        "p",
        "div",
        "section",
        "article",
        "main",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "li",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "table",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "td",
        "th",
        "caption",
        "blockquote",
        "pre",
        "figure",
        "address",
        "center",
        "details",
        "summary",
        "fieldset",
        "hr",
        "body",
        "html",
        "hgroup",
        "legend",
        "nav",
        "aside",
        "footer",
        "header",
        "figcaption",
        "form",
        "menu",
    )
)
_HEADINGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
# Inline tags not worth a boilerplate check (a share link inside them is caught by its link density).
_PLAIN_INLINE = frozenset(
    (
        "a",
        "img",
        "b",
        "i",
        "u",
        "em",
        "strong",
        "small",
        "sup",
        "sub",
        "abbr",
        "cite",
        "code",
        "q",
        "mark",
        "wbr",
        "br",
        "time",
        "picture",
        "source",
        "font",
    )
)
# Class/id words that mark boilerplate (comments, sharing, related links, ads, cookie banners...).
# The lower-cased "class id" string is cut into word parts at every non-alphanumeric character
# ("jp-relatedposts" -> "jp", "relatedposts"); a part marks boilerplate when it starts with one of the
# prefixes or equals one of the words ("ad" in "top-ad", not in "header" or "add").  Whole class names
# that mean "not shown" are checked separately, so "field-label-hidden" is not mistaken for "hidden".
_BOILER_PREFIXES = (
    "related",
    "recommend",
    "comment",
    "disqus",
    "share",
    "sharing",
    "social",
    "newsletter",
    "subscri",
    "signup",
    "cookie",
    "consent",
    "gdpr",
    "promo",
    "sponsor",
    "advert",
    "sidebar",
    "widget",
    "breadcrumb",
    "navbar",
    "navigation",
    "footer",
    "masthead",
    "paginat",
    "popup",
    "modal",
    "overlay",
    "toolbar",
    "byline",
    "caption",
    "outbrain",
    "taboola",
    "trending",
    "tooltip",
    "popover",
    "hovercard",
    "paywall",
    "login",
    "copyright",
    "disclaimer",
)
_BOILER_WORDS = frozenset(
    (
        "ad",
        "ads",
        "nav",
        "menu",
        "header",
        "pager",
        "meta",
        "tag",
        "tags",
        "print",
        "skip",
        "author",
        "credit",
        "banner",
        "respond",
        "reply",
        "replies",
        "rss",
        "popular",
    )
)
_NOT_BOILER = ("commentary",)  # opinion pieces: "commentary-body" is content
_HIDDEN_CLASSES = frozenset(
    (
        "hidden",
        "hide",
        "is-hidden",
        "visually-hidden",
        "visuallyhidden",
        "sr-only",
        "screen-reader-text",
        "d-none",
        "invisible",
    )
)
_PART_RE = re.compile(r"[a-z0-9]+")


def _boiler_words(key: str) -> bool:
    """True when a lower-cased "class id" string names boilerplate."""
    for part in _PART_RE.findall(key):
        if part in _BOILER_WORDS or (part.startswith(_BOILER_PREFIXES) and not part.startswith(_NOT_BOILER)):
            return True
    return not _HIDDEN_CLASSES.isdisjoint(key.split())


_MARKUP_RE = re.compile(r"<[a-zA-Z!/][^>]*>")
_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)

# Block classification.
_GOOD_MIN_CHARS = 80  # prose block: at least this many characters...
_GOOD_MAX_LINK = 0.3  # ...and at most this share of them inside links
_BAD_LINK = 0.5  # link lists: more than this share in links
_SHORT_PENALTY = 0.25  # score per character of a short, link-free fragment (negative)


class _Block:
    __slots__ = ("node", "text", "link", "tag", "kind", "size")

    def __init__(self, node: int, text: str, link: int, tag: str):
        self.node = node
        self.text = text
        self.link = link  # characters inside <a>
        self.tag = tag
        self.kind = ""
        self.size = len(text)  # length in Latin-equivalent characters (set by _classify)


_BOILER = 1  # looks like furniture by its class/id: share box, related list, comments...
_STRONG = 2  # a nav/aside/footer/header element or ARIA role: never the content itself
_HIDDEN = 3  # not displayed at all (display:none, visibility:hidden, the hidden attribute)


def _boilerplate(el, tag: str) -> int:
    """0 for ordinary elements, else _BOILER (class/id), _STRONG (tag or role) or _HIDDEN (not displayed)."""
    if tag in _SKIP_TAGS:
        return _STRONG
    keys = el.keys()
    if not keys:  # most elements: no attributes at all
        return 0
    if "hidden" in keys:
        return _HIDDEN
    if "style" in keys and _HIDDEN_STYLE_RE.search(el.get("style")):
        return _HIDDEN
    if "role" in keys and el.get("role").strip().lower() in _SKIP_ROLES:
        return _STRONG
    if "aria-hidden" in keys and el.get("aria-hidden") == "true":
        return _BOILER
    if "class" in keys or "id" in keys:
        key = f"{el.get('class') or ''} {el.get('id') or ''}"
        hit = _class_cache.get(key)
        if hit is None:
            hit = _BOILER if _boiler_words(key.lower()) else 0
            if len(_class_cache) > 50_000:  # bounded; a plain dict is safe enough across threads (GIL)
                _class_cache.clear()
            _class_cache[key] = hit
        return hit
    return 0


_class_cache: dict[str, int] = {}


_BR = "\x00"  # line-break marker inside a block (NUL never survives _parse)


def _join_lines(pieces: list[str]) -> str:
    """Text split at <br>: one break keeps a line break, a blank line (<br><br>) starts a new paragraph."""
    out: list[str] = []
    blank = False
    for piece in pieces:
        line = " ".join(piece.split())
        if not line:
            blank = True
            continue
        if out:
            out.append("\n\n" if blank else "\n")
        out.append(line)
        blank = False
    return "".join(out)


def _segment(
    body, nodes: list | None = None, semantic: list[int] | None = None
) -> tuple[list[_Block], list[int], list[int]]:
    """Walk the tree once.

    Returns the text blocks, the parent index of each block-level node (nodes are numbered in document
    order, 0 is <body>) and, per node, whether it looks like boilerplate (nav, footer, share box...).
    """
    from lxml import etree

    blocks: list[_Block] = []
    parents: list[int] = [-1]
    flags: list[int] = [0]
    node_tags: list[str] = ["body"]
    cur = 0
    buf: list[str] = []
    link_chars = 0
    in_link = 0
    stack: list[int] = []  # per open element: 0 inline, 1 block, 2 skipped, 3 link

    def flush():
        nonlocal buf, link_chars
        if buf:
            text = "".join(buf)
            text = _join_lines(text.split(_BR)) if _BR in text else " ".join(text.split())
            if text and not (text[0] == "<" and _MARKUP_RE.match(text)):  # raw markup (e.g. from noscript)
                blocks.append(_Block(cur, text, link_chars, node_tags[cur]))
            buf = []
        link_chars = 0

    walker = etree.iterwalk(body, events=("start", "end"))
    for event, el in walker:
        tag = el.tag
        if event == "start":
            if el is body:
                stack.append(1)
            elif not isinstance(tag, str):
                stack.append(2)
                walker.skip_subtree()
                continue
            elif tag in _BLOCK_TAGS:
                flush()
                parents.append(cur)
                flags.append(_boilerplate(el, tag))
                if nodes is not None:
                    nodes.append(el)
                if semantic is not None and (
                    tag in ("article", "main") or el.get("itemprop") == "articleBody" or el.get("role") == "main"
                ):
                    semantic.append(len(parents) - 1)
                node_tags.append(tag)
                cur = len(parents) - 1
                stack.append(1)
            elif tag not in _PLAIN_INLINE and _boilerplate(el, tag):
                stack.append(2)
                walker.skip_subtree()
                continue
            elif tag == "a":
                in_link += 1
                stack.append(3)
            elif tag == "br":
                buf.append(_BR)
                stack.append(0)
            else:
                stack.append(0)
            if el.text:
                buf.append(el.text)
                if in_link:
                    link_chars += len(el.text.strip())
        else:
            kind = stack.pop()
            if kind == 1:
                flush()
                cur = max(parents[cur], 0)
            elif kind == 3:
                in_link -= 1
            if el is body:
                break
            if el.tail:
                buf.append(el.tail)
                if in_link:
                    link_chars += len(el.tail.strip())
    flush()
    return blocks, parents, flags


# CJK scripts say in one character what Latin scripts say in about three: weigh them so.
_WIDE_CHARS = r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"


@functools.cache
def _wide_re() -> re.Pattern:
    return re.compile(_WIDE_CHARS)  # compiled on first use: the big character class costs ~5 ms


def _classify(b: _Block) -> float:
    """Set b.kind (good / bad / short) and b.size; return the block's weight."""
    n = len(b.text)
    b.size = n if b.text.isascii() else n + 2 * len(_wide_re().findall(b.text))
    ld = b.link / n if n else 1.0
    if ld > _BAD_LINK:
        b.kind = "bad"
        return -float(b.size)
    if b.size >= _GOOD_MIN_CHARS and ld <= _GOOD_MAX_LINK:
        b.kind = "good"
        return b.size * (1.0 - ld)
    b.kind = "short"
    return -_SHORT_PENALTY * b.size


_HEADLINE_MIN = 10  # a link block this long can be a teaser's headline
_TEASER_WEIGHT = 0.25  # a prose block that is alone with a link headline (teaser list item) counts this much
_FLAGGED_DISCOUNT = 0.5  # per boilerplate-flagged ancestor of a candidate container (at most two)
_HIDDEN_DISCOUNT = 0.1  # for a candidate that is (inside) an element that is not displayed
_FLAGGED_PENALTY = 0.25  # per character of a flagged subtree, against the containers around it
_MIN_CONTENT = 80  # below this score the page has no real prose: use the lenient fallback


def _main_text(root) -> str:
    from lxml import etree

    body = root.find("body")
    if body is None:
        body = root
    etree.strip_elements(body, *_DROP_TAGS, with_tail=False)
    semantic: list[int] = []
    blocks, parents, flags = _segment(body, semantic=semantic)
    if not blocks:
        return ""
    best, value = _select(blocks, parents, flags)
    if value >= _MIN_CONTENT:
        inside = _clean_descendants(parents, flags, best)
        text = _assemble([b for b in blocks if inside[b.node]])
        if text:
            return text
    # Too little prose for the scoring to mean much (a stub page, a one-line answer): take the page's
    # declared main container (<article>, <main>, itemprop=articleBody) if any, else the best node, and
    # keep every block there that is not a link list.
    top, top_len = (best if value > 0 else 0), -1
    for i in semantic:
        inside = _clean_descendants(parents, flags, i)
        size = sum(b.size for b in blocks if inside[b.node] and b.kind != "bad")
        if size > top_len:
            top, top_len = i, size
    inside = _clean_descendants(parents, flags, top)
    return _assemble([b for b in blocks if inside[b.node]], lenient=True)


def _select(blocks: list[_Block], parents: list[int], flags: list[int]) -> tuple[int, float]:
    """Pick the main-content node; returns it and its (discounted) score."""
    n = len(parents)
    weights = [_classify(b) for b in blocks]
    # Subtree statistics (nodes are numbered in document pre-order, so a reverse sweep sees every
    # child before its parent).
    n_good = [0] * n
    first_link = [len(blocks)] * n  # index of the first link-list block in the subtree
    length = [0.0] * n
    for k, b in enumerate(blocks):
        i = b.node
        length[i] += b.size
        if b.kind == "good":
            n_good[i] += 1
        elif b.kind == "bad" and b.size >= _HEADLINE_MIN and first_link[i] > k:
            first_link[i] = k
    for i in range(n - 1, 0, -1):
        p = parents[i]
        n_good[p] += n_good[i]
        length[p] += length[i]
        if first_link[i] < first_link[p]:
            first_link[p] = first_link[i]
    # Teasers ("headline link + one-paragraph summary" items of a related-articles list) look like prose
    # block by block; what gives them away is a small subtree (a few times the prose block) holding one prose
    # block after a link block.
    own = [0.0] * n
    for k, (b, w) in enumerate(zip(blocks, weights, strict=True)):
        if b.kind == "good":
            i, up = b.node, 0
            while i > 0 and up < 3:
                if n_good[i] > 1 or length[i] > 3 * b.size:
                    break
                if first_link[i] < k:
                    b.kind = "teaser"
                    w *= _TEASER_WEIGHT
                    break
                i, up = parents[i], up + 1
        own[b.node] += w
    # score[i]: sum of block weights in the subtree of i, where everything inside a boilerplate-flagged
    # node strictly below i counts as negative (a fraction of its length).  A flagged wrapper can still
    # win (its own flag does not count against it), but its flagged children cannot help it.
    score = own
    for i in range(n - 1, 0, -1):
        score[parents[i]] += -_FLAGGED_PENALTY * length[i] if flags[i] else score[i]
    # A candidate inside flagged furniture is discounted (a footer's text block should not beat a short
    # article), and one inside an element that is not displayed much more (hidden duplicates, templates).
    flagged_above = [0] * n
    hidden = [False] * n
    hidden[0] = flags[0] == _HIDDEN
    for i in range(1, n):
        p = parents[i]
        flagged_above[i] = flagged_above[p] + (1 if flags[p] else 0)
        hidden[i] = hidden[p] or flags[i] == _HIDDEN
    best, best_value = 0, float("-inf")
    for i in range(n):
        v = score[i]
        if v > 0:
            k = flagged_above[i] + (1 if flags[i] == _STRONG else 0)
            if k:
                v *= _FLAGGED_DISCOUNT ** min(k, 2)
            if hidden[i]:
                v *= _HIDDEN_DISCOUNT
        if v >= best_value:  # ties go to the later (deeper) node: same content with less around it
            best, best_value = i, v
    return best, best_value


def _clean_descendants(parents: list[int], flags: list[int], top: int) -> list[bool]:
    """Nodes in the subtree of top that are not inside a flagged node below top."""
    mask = [False] * len(parents)
    mask[top] = True
    for i in range(top + 1, len(parents)):  # nodes are numbered in document (pre-)order
        p = parents[i]
        if p >= 0 and mask[p] and not flags[i]:
            mask[i] = True
    return mask


_CONTENT_TAGS = frozenset(("p", "li", "blockquote", "pre", "dd"))
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*$")


def _assemble(blocks: list[_Block], lenient: bool = False) -> str:
    """Join the kept blocks of the chosen container.

    Prose blocks are kept, link lists dropped.  A short block is kept when it sits between prose
    blocks; a short sentence in a paragraph element (a one-line paragraph) only needs prose on one side,
    and a heading needs prose after it.  ``lenient`` keeps every block that is not a link list.
    The headline (an <h1> before any prose) is left out: it is the title, not the text.
    """
    n = len(blocks)
    # teasers inside the chosen container are a related-articles list, unless they are all the prose there
    teaser_as = "short" if any(b.kind == "good" for b in blocks) else "good"
    kinds = [b.kind if b.kind != "teaser" else teaser_as for b in blocks]
    keep = [k == "good" or (lenient and k == "short") for k in kinds]
    prev_good = [False] * n
    last = "start"
    for i in range(n):
        prev_good[i] = last in ("good", "start")
        if kinds[i] != "short":
            last = kinds[i]
    next_good = [False] * n
    last = "end"
    for i in range(n - 1, -1, -1):
        next_good[i] = last == "good"
        if kinds[i] != "short":
            last = kinds[i]
    seen_prose = False
    for i, b in enumerate(blocks):
        if kinds[i] == "good":
            seen_prose = True
        elif b.tag == "h1" and not seen_prose:
            keep[i] = False
        elif kinds[i] != "short" or lenient:
            continue
        elif b.tag in _HEADINGS:
            keep[i] = next_good[i]
        elif b.tag in _CONTENT_TAGS and _SENTENCE_END.search(b.text) and len(b.text.split()) >= 5:
            keep[i] = prev_good[i] or next_good[i]
        else:
            keep[i] = prev_good[i] and next_good[i]
        if keep[i]:
            seen_prose = True
    return "\n\n".join(b.text for b, k in zip(blocks, keep, strict=True) if k)


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------


def extract(html: str | bytes, url: str = "") -> Extracted:
    """Extract title, published date (ISO), main text and absolute out-links from an HTML page.

    Never raises on bad input: empty or unparsable input gives an empty ``Extracted``.
    """
    try:
        if isinstance(html, (bytes, bytearray)):
            html = decode_html(bytes(html))
        if not isinstance(html, str) or not html.strip() or _looks_binary(html):
            return Extracted()
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
        meta = _meta_map(root)
        title = _title(root, meta)
        published = _published(root, meta)
        links = _links(root, base)
        text = _main_text(root)
        return Extracted(title=title, published=published, text=text, links=links)
    except Exception:  # noqa: BLE001 - untrusted input must never crash the crawler
        log.warning("extraction failed for %s", url or "<html>", exc_info=True)
        return Extracted()
