"""Cutting a parsed page into text blocks and flagging furniture (one pass over the tree).

A block is the text of one paragraph-like element; every block-level element is a numbered node
with its parent and a boilerplate flag (nav/aside/footer/header tags, ARIA roles, elements that
are not displayed, class/id words such as comment, share, related, cookie, newsletter, ad).
"""

from __future__ import annotations

import re

# Elements whose whole subtree is never article text.
DROP_TAGS = (
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
HEADINGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
# Inline elements whose characters a block counts, by kind: links (link density), bold (a sub-heading
# set in bold), code (code an article shows is not leaked script).
_LINK, _BOLDED, _CODE = 0, 1, 2
_COUNTED = {"a": _LINK, "b": _BOLDED, "strong": _BOLDED, "code": _CODE, "kbd": _CODE, "samp": _CODE, "tt": _CODE}
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
        "skip",
        "author",
        "credit",
        "banner",
        "respond",
        "reply",
        "replies",
        "rss",
        "popular",
        "bio",
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


# Markers of a post itself (microformats h-entry, schema.org properties): such an element is never
# furniture, whatever its other classes say (blog engines add "tag-<slug>", "category-<slug>" to posts).
_ENTRY_CLASSES = frozenset(
    ("hentry", "h-entry", "entry", "post", "article", "type-post", "entry-type-post", "entry-content", "e-content")
)
_ENTRY_PROPS = frozenset(("articleBody", "text", "blogPost", "mainEntity"))


def _boiler_words(key: str) -> bool:
    """True when a lower-cased "class id" string names boilerplate."""
    classes = key.split()
    if not _HIDDEN_CLASSES.isdisjoint(classes):
        return True
    if not _ENTRY_CLASSES.isdisjoint(classes):
        return False
    for part in _PART_RE.findall(key):
        if part in _BOILER_WORDS or (part.startswith(_BOILER_PREFIXES) and not part.startswith(_NOT_BOILER)):
            return True
    return False


_MARKUP_RE = re.compile(r"<[a-zA-Z!/][^>]*>")
_SCRIPT_WORDS_RE = re.compile(r"\b(?:var|function|return|document\.|window\.|if\s*\()")
_SCRIPT_PUNCT = 0.03  # script text: at least this share of its characters is one of {};=()...
_SCRIPT_WORDS = 5  # ...and it has this many script keywords


def _script_text(text: str) -> bool:
    """JavaScript that leaked into the page's text.  A parser ends a script at the first "</script>",
    even one inside a string (document.write('<script>...</script>')), so the rest of the script is
    read as text; a block of it is not prose, whatever its length."""
    if len(text) < 80 or ("{" not in text and ";" not in text):
        return False
    punct = sum(text.count(c) for c in "{};=()")
    return punct >= _SCRIPT_PUNCT * len(text) and len(_SCRIPT_WORDS_RE.findall(text)) >= _SCRIPT_WORDS


_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)


class Block:
    __slots__ = ("node", "text", "link", "bold", "tag", "kind", "size")

    def __init__(self, node: int, text: str, link: int, tag: str, bold: int = 0):
        self.node = node
        self.text = text
        self.link = link  # characters inside <a>
        self.bold = bold  # characters inside <b>/<strong>
        self.tag = tag
        self.kind = ""
        self.size = len(text)  # length in Latin-equivalent characters (set by _classify)


BOILER = 1  # looks like furniture by its class/id: share box, related list, comments...
_ANCHORED = frozenset(("dt", "h1", "h2", "h3", "h4", "h5", "h6"))
STRONG = 2  # a nav/aside/footer/header element or ARIA role: never the content itself
HIDDEN = 3  # not displayed at all (display:none, visibility:hidden, the hidden attribute)


def _boilerplate(el, tag: str) -> int:
    """0 for ordinary elements, else BOILER (class/id), STRONG (tag or role) or HIDDEN (not displayed)."""
    if tag in _SKIP_TAGS:
        return STRONG
    keys = el.keys()
    if not keys:  # most elements: no attributes at all
        return 0
    if "hidden" in keys:
        return HIDDEN
    if "style" in keys and _HIDDEN_STYLE_RE.search(el.get("style")):
        return HIDDEN
    if "role" in keys and el.get("role").strip().lower() in _SKIP_ROLES:
        return STRONG
    if "aria-hidden" in keys and el.get("aria-hidden") == "true":
        return BOILER
    if "itemprop" in keys and el.get("itemprop") in _ENTRY_PROPS:
        return 0
    if "class" in keys or "id" in keys:
        # a heading's or a term's id is its anchor, named after its words ("GUC-SHARED-BUFFERS"), not layout
        key = f"{el.get('class') or ''} {el.get('id') if tag not in _ANCHORED else ''}"
        hit = _class_cache.get(key)
        if hit is None:
            hit = BOILER if _boiler_words(key.lower()) else 0
            if len(_class_cache) > 50_000:  # bounded; a plain dict is safe enough across threads (GIL)
                _class_cache.clear()
            _class_cache[key] = hit
        return hit
    return 0


_class_cache: dict[str, int] = {}


_BR = "\x00"  # line-break marker inside a block (extract() removes every NUL before parsing)


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


# A link whose text is only a mark: a permalink ("¶" after a Sphinx heading or signature, "#", a link
# symbol) or a reference ("§" after a release note's item, to its commit). It is furniture, and its
# mark would stick to the sentence before it.
_LINK_MARKS = frozenset("¶§#\U0001f517")


def mark_link(el) -> bool:
    text = "".join(el.itertext()).strip()
    return bool(text) and set(text) <= _LINK_MARKS


_INLINE_FURNITURE_MAX = 300  # an inline element named like furniture but holding more text than this wraps content


def _wraps_content(el) -> bool:
    """Furniture in an inline element (a byline, a share link, a label) is short; one holding hundreds of
    characters wraps the content itself, usually because the page left it open."""
    n = 0
    for t in el.itertext():
        if isinstance(t, str):
            n += len(t.strip())
            if n > _INLINE_FURNITURE_MAX:
                return True
    return False


def segment(
    body,
    semantic: list[int] | None = None,
    images: set[int] | None = None,
    tags: list[str] | None = None,
) -> tuple[list[Block], list[int], list[int]]:
    """Walk the tree once.

    Returns the text blocks, the parent index of each block-level node (nodes are numbered in document
    order, 0 is <body>) and, per node, whether it looks like boilerplate (nav, footer, share box...).
    When given, ``semantic`` receives the nodes that declare the main content (<article>, <main>,
    itemprop=articleBody, role=main), ``images`` the nodes that directly hold an <img> and ``tags`` each
    node's tag.
    """
    from lxml import etree

    blocks: list[Block] = []
    parents: list[int] = [-1]
    flags: list[int] = [0]
    node_tags: list[str] = ["body"]
    cur = 0
    buf: list[str] = []
    opened = [0, 0, 0]  # counted elements of each kind open around the current text
    chars = [0, 0, 0]  # the current block's characters inside each kind
    counting = 0  # counted elements open, of any kind
    stack: list[int] = []  # per open element: 0 inline, 1 block, 2 skipped, 3 + kind for a counted one

    def count(text: str) -> None:
        n = len(text.strip())
        for k in (_LINK, _BOLDED, _CODE):
            if opened[k]:
                chars[k] += n

    def flush():
        nonlocal buf
        if buf:
            text = "".join(buf)
            text = _join_lines(text.split(_BR)) if _BR in text else " ".join(text.split())
            # raw markup (a template, a comment form's list of allowed tags) and script text are dropped;
            # code shown in <pre> or <code> is kept
            if text and not (
                node_tags[cur] != "pre"
                and (
                    (text[0] == "<" and _MARKUP_RE.match(text)) or (chars[_CODE] < len(text) / 2 and _script_text(text))
                )
            ):
                blocks.append(Block(cur, text, chars[_LINK], node_tags[cur], chars[_BOLDED]))
            buf = []
        chars[_LINK] = chars[_BOLDED] = chars[_CODE] = 0

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
                if semantic is not None and (
                    tag in ("article", "main") or el.get("itemprop") == "articleBody" or el.get("role") == "main"
                ):
                    semantic.append(len(parents) - 1)
                node_tags.append(tag)
                cur = len(parents) - 1
                stack.append(1)
            elif (tag not in _PLAIN_INLINE and _boilerplate(el, tag) and not _wraps_content(el)) or (
                tag == "a" and mark_link(el)
            ):
                stack.append(2)
                walker.skip_subtree()
                continue
            elif tag == "br":
                buf.append(_BR)
                stack.append(0)
            elif tag == "img":
                if images is not None:
                    images.add(cur)
                stack.append(0)
            elif tag in _COUNTED:
                opened[_COUNTED[tag]] += 1
                counting += 1
                stack.append(3 + _COUNTED[tag])
            else:
                stack.append(0)
            if el.text:
                buf.append(el.text)
                if counting:
                    count(el.text)
        else:
            kind = stack.pop()
            if kind == 1:
                flush()
                cur = max(parents[cur], 0)
            elif kind >= 3:
                opened[kind - 3] -= 1
                counting -= 1
            if el is body:
                break
            if el.tail:
                buf.append(el.tail)
                if counting:
                    count(el.tail)
    flush()
    if tags is not None:
        tags[:] = node_tags
    return blocks, parents, flags
