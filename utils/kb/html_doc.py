"""An HTML file read as a document for the knowledge base.

The text is the page extractor's (utils/web/extract.py, tuned on articles and shared with the
crawler, so its output for web pages is not changed here; asked for a document, it keeps every term
of a definition list, which an article reader drops as a short line); this module then puts back
what a document needs and an article reader drops, by matching the extractor's paragraphs with the
page's elements: a paragraph that is a heading (``<h1>``-``<h6>``) becomes a heading line with its
level, one that is a ``<pre>`` becomes fenced code with its lines, one that is a whole list item
reads ``- item``, and the ``<h1>`` is put back at the top when the extractor left it out (it took it
as the headline) and it says more than the title chosen below (an ``<h1>`` equal to the title is
already the document's title and the head of every heading path; repeated as the text's first line
it would also displace the document's opening sentence).

The title is the page's own part of its ``<title>``: a documentation set titles its pages
"Page — Site 1.2 documentation" or "Site: Page"; of the parts between separators, the one closest
to the page's ``<h1>`` is the page's, or all the parts that are not the site's when the ``<h1>`` holds
them all ("shutil — High-level file operations — Python 3.11 documentation": the module's name and what
it does). Without an ``<h1>`` the extractor's title stands. An ``<h1>``
that matches the site's part of the titles (`site_parts`) is the site's name shown above every page,
not the page's heading: it neither chooses the title nor is put back in the text.

A table row reads as text tied to its headers, under the heading above it: a row headed by its own
first cell (``<th>Default:</th><td>1073741824</td>``) as "Default: 1073741824", a row under a header
row as "Name: smallint; Size: 2 bytes" (the header row is not read alone); a table without headers
stays rows of cells. A definition list's term (``<dt>``) is a heading of its own one level below the
heading above, its definition's first paragraph naming it ("- soak: A pause at ..."), so the entry's
heading path ends with its term; the text after the list is under the section again (its heading is
written again).

A power written with a superscript after a digit reads "2^32" (the text of "2<sup>32</sup>" is
the figure 232 otherwise).

A heading's text is read without its permalink ("fs.rm(path)#", the "#" a link to the heading
itself), as the extractor reads it; with the mark the two would not match and the heading would be
read as a paragraph.
"""

from __future__ import annotations

import re

from ..text import fold, tokenize
from .structure import as_text, fenced, heading_line

_TITLE_SEPARATORS = re.compile(r"\s+(?:[—–|·»:-]|::)\s+|:\s+")
_TITLE_TAG = re.compile(rb"<title[^>]*>(.*?)</title", re.I | re.S)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*>")
_ANCHOR_MARKS = str.maketrans("", "", "¶§\u00b6\U0001f517")
# A power written with a superscript after a digit, "2<sup>32</sup>": read "2^32", not the figure "232".
_POWER = re.compile(rb"(\d)(<sup\b[^>]*>)", re.I)
# The classes of a boxed aside (DocBook's <div class="note"><h3>Note</h3>, a Sphinx admonition,
# AsciiDoc's <div class="admonitionblock"><table>: an icon cell "Note" beside the text): its title
# heads the box, not a section, so the text after the box stays under the section it was in; and a
# box laid out as a table row reads "Note: text", not as a table row (which is never quoted).
ASIDE_CLASSES = frozenset("note tip warning caution important admonition admonitionblock attention hint danger".split())


def _clean(text: str) -> str:
    return " ".join((text or "").translate(_ANCHOR_MARKS).split())


def _overlap(a: str, b: str) -> float:
    ta, tb = set(tokenize(a)), set(tokenize(b))
    return len(ta & tb) / len(ta | tb) if ta and tb else 0.0


def title_parts(title_tag: str) -> list[str]:
    """A <title>'s parts between separators ("Page — Site 1.2 documentation": two parts)."""
    return [p for p in (_clean(x) for x in _TITLE_SEPARATORS.split(title_tag or "")) if p]


def site_parts(title_tags: list[str]) -> frozenset[str]:
    """The parts many titles of one folder share at their start or end: the site's name, not a page's
    (at least 3 titles and a third of those with several parts)."""
    from collections import Counter

    split = [p for p in map(title_parts, title_tags) if len(p) > 1]
    ends = Counter(x for p in split for x in {p[0], p[-1]})
    return frozenset(x for x, n in ends.items() if n >= 3 and n >= len(split) / 3)


def own_title(title_tag: str, h1: str, fallback: str, site: frozenset[str] = frozenset()) -> str:
    """The page's own part of its <title>, chosen by its <h1>; without an <h1>, the parts that are not
    the site's (`site_parts`); `fallback` when that cannot tell."""
    parts = title_parts(title_tag)
    own = [p for p in parts if p not in site]
    if not h1 and site and own != parts:
        return " — ".join(own) if own else fallback
    if not h1 or not parts:
        return fallback
    whole = _clean(title_tag)
    # "Chapter 3: Foo" stays whole; "shutil — High-level file operations — Python 3.11 documentation"
    # keeps both of the page's own parts
    mine = " — ".join(own) if site and 1 < len(own) < len(parts) else whole
    best = max([*parts, mine, whole], key=lambda p: (_overlap(p, h1), p in (mine, whole)))
    if _overlap(best, h1) == 0:
        return h1 if _overlap(fallback, h1) == 0 and len(parts) > 1 else fallback
    return best


def _without_marks(el) -> str:
    """An element's text without its permalinks' marks ("fs.rm(path)#": the "#" links to the heading,
    it is not part of it; the extractor drops such links too)."""
    from copy import deepcopy

    from ..web.extract_dom import mark_link

    if not any(mark_link(a) for a in el.iter("a")):
        return el.text_content()
    el = deepcopy(el)
    for a in [a for a in el.iter("a") if mark_link(a)]:
        a.drop_tree()
    return el.text_content()


def banner(h1: str, title_tag: str, site: frozenset[str]) -> bool:
    """Whether a page's <h1> is the site's name (a banner above every page), not the page's: the part
    of its <title> it matches is the site's part."""
    parts = title_parts(title_tag)
    if not site or len(parts) < 2:
        return False
    best = max(parts, key=lambda p: _overlap(p, h1))
    return best in site and _overlap(best, h1) > 0


def _in_aside(el) -> bool:
    return any(ASIDE_CLASSES & set((a.get("class") or "").lower().split()) for a in el.iterancestors())


def _page_parts(data: bytes):
    """(<title> text, first <h1> text, {heading text: level}, {pre text single-spaced: pre lines},
    {a table row's first cell: its rows' cells}, the same for rows of a boxed aside, the texts of the
    list items that hold no list of their own), texts single-spaced."""
    from lxml import etree, html

    from ..web.decode import decode_body

    try:
        text = _XML_DECLARATION.sub("", decode_body(data)[0].replace("\x00", ""), count=1)
        root = html.document_fromstring(text)
    except (etree.ParserError, ValueError):
        return "", "", {}, {}, {}, {}, set(), (set(), set())
    etree.strip_elements(root, "script", "style", "template", etree.Comment, with_tail=False)
    t = root.find(".//title")
    title_tag = _clean(t.text_content()) if t is not None else ""
    h1 = ""
    headings: dict[str, int] = {}
    pres: dict[str, list[str]] = {}
    for el in root.iter("h1", "h2", "h3", "h4", "h5", "h6", "pre"):
        text = _without_marks(el)
        if el.tag == "pre":
            pres.setdefault(" ".join(text.split()), text.split("\n"))
            continue
        text = _clean(text)
        if text and not _in_aside(el):
            headings.setdefault(fold(text), int(el.tag[1]))
            if el.tag == "h1" and not h1:
                h1 = text
    rows: dict[str, list[tuple[list[str], str | None]]] = {}
    asides: dict[str, list[list[str]]] = {}
    for table in root.iter("table"):
        header: list[str] = []
        for n, tr in enumerate(r for r in table.iter("tr") if _own_table(r) is table):
            if tr.find(".//table") is not None:
                continue
            tds = [td for td in tr if td.tag in ("td", "th")]
            texts = [" ".join(td.text_content().split()) for td in tds]
            cells = [c for c in texts if c]
            if tds and all(td.tag == "th" for td in tds) and (n == 0 or tr.getparent().tag == "thead"):
                header = texts  # the column headers the rows below are read with
                if len(cells) >= 2:
                    rows.setdefault(cells[0], []).append((cells, None))  # read with each row: not again
                continue
            if len(cells) < 2:
                continue
            if _in_aside(tr):
                asides.setdefault(cells[0], []).append(cells)
            else:
                rows.setdefault(cells[0], []).append((cells, _row_text(tds, texts, header)))
    # an item that is one paragraph ("<li>The number of columns in a table</li>", "<li><p>...</p></li>"),
    # matched whole: not the first of an item's paragraphs (a sub-heading set in bold, say) or lists
    items = {
        " ".join(li.text_content().split())
        for li in root.iter("li")
        if li.find(".//ul") is None and li.find(".//ol") is None
    }
    return title_tag, h1, headings, pres, rows, asides, items, _definitions(root)


def _own_table(tr):
    """The table a row belongs to (not a table around that one)."""
    for a in tr.iterancestors("table"):
        return a
    return None


def _row_text(tds, texts: list[str], header: list[str]) -> str:
    """A table row as text tied to its headers: "Default: 1073741824" for a row headed by its first
    cell, "Name: smallint; Size: 2 bytes" under a header row; "" (read as cells) without headers."""
    if tds[0].tag == "th" and all(td.tag == "td" for td in tds[1:]) and len(texts) >= 2:
        key = texts[0].rstrip(":")
        return f"{key}: {'; '.join(t for t in texts[1:] if t)}"
    if header and len(header) == len(texts):
        pairs = [f"{h.rstrip(':')}: {t}" if h else t for h, t in zip(header, texts, strict=True) if t]
        return "; ".join(pairs)
    return ""


def _definitions(root) -> tuple[set[str], set[str]]:
    """(the terms of definition lists, the texts inside their definitions), texts single-spaced."""
    terms: set[str] = set()
    inside: set[str] = set()
    for dl in root.iter("dl"):
        for el in dl:
            if el.tag == "dt":
                terms.add(_clean(_without_marks(el)))
            elif el.tag == "dd":
                for sub in el.iter():
                    text = " ".join(sub.text_content().split()) if isinstance(sub.tag, str) else ""
                    if text:
                        inside.add(text)
    return terms, inside


def title_tag_of(data: bytes) -> str:
    """A page's <title> text, read cheaply from its first 16 kB."""
    m = _TITLE_TAG.search(data[:16384])
    if not m:
        return ""
    from html import unescape

    return _clean(unescape(m.group(1).decode("utf-8", "replace")))


def read_html(data: bytes, url: str, fallback_title: str, site: frozenset[str] = frozenset()) -> tuple[str, str]:
    """(title, text in the structured readers' form) of an HTML document."""
    from ..web.extract import extract

    data = _POWER.sub(rb"\1^\2", data)
    ex = extract(data, url=url, document=True)
    title_tag, h1, headings, pres, rows, asides, items, (terms, defined) = _page_parts(data)
    out: list[str] = []
    paras = [p for p in ex.text.split("\n\n") if _clean(p)]  # a paragraph that is only a permalink's mark is none
    keys = [" ".join(p.split()) for p in paras]
    level = 1  # the level of the last heading written
    section = ""  # that heading's line, written again after a definition list
    term = ""  # the definition list's term whose definition comes next
    in_entry = False
    i = 0
    while i < len(paras):
        para, key = paras[i], keys[i]
        i += 1
        defines, term = term, ""
        if in_entry and key not in defined and _clean(key) not in terms:
            in_entry = False
            if section:
                out.append(section)  # text after a definition list is under its section again
        row = next((r for r in rows.get(key, ()) if keys[i - 1 : i - 1 + len(r[0])] == r[0]), None)
        box = next((r for r in asides.get(key, ()) if keys[i - 1 : i - 1 + len(r)] == r), None)
        if box:  # a boxed aside laid out as a table: "Note: text"
            out.append(as_text(f"{box[0]}: {' '.join(box[1:])}"))
            i += len(box) - 1
        elif row:  # a table row the extractor gave as one paragraph per cell: with its headers, or as cells
            cells, text = row
            if text:
                out.append(as_text(f"- {text}"))
            elif text is not None:
                out.append("| " + " | ".join(cells) + " |")
            i += len(cells) - 1
        elif key in pres and "\n" in "\n".join(pres[key]).strip():
            out.append(fenced(pres[key]) or key)
        elif (lv := headings.get(fold(_clean(key)))) is not None:
            level = lv
            section = heading_line(level, _clean(key))
            out.append(section)
        elif _clean(key) in terms and len(key) <= 120:  # a term: a heading of its own, its definition names it
            out.append(heading_line(min(6, level + 1), _clean(key)))
            term, in_entry = _clean(key), True
        elif key in items:  # a list item reads as one, as in the other readers: not a heading-like line
            out.append(as_text(f"- {para}"))
        elif defines:
            out.append(as_text(f"- {defines}: {para}"))
        else:
            out.append(as_text(para))
    if h1 and banner(h1, title_tag, site):
        h1 = ""  # the site's name above every page, not this page's heading: no title, no text
    title = own_title(title_tag, h1, ex.title or fallback_title, site)
    if h1 and fold(h1) != fold(title) and not any(o.startswith("# ") and fold(o[2:]) == fold(h1) for o in out):
        out.insert(0, heading_line(1, h1))  # an <h1> that is not the title is put back; the title is the rest
    return title, "\n\n".join(out)
