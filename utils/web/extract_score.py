"""Choosing the main content among the blocks of a page and assembling its text.

Blocks are scored (prose +length, link lists -length, short fragments a little negative, teasers a
quarter), the node with the highest subtree score is the main content, and inside it prose is kept
with the headings and short paragraphs next to it.
"""

from __future__ import annotations

import functools
import re

from .extract_dom import DROP_TAGS, HEADINGS, HIDDEN, STRONG, Block, segment

# Block classification.
_GOOD_MIN_CHARS = 80  # prose block: at least this many characters...
_GOOD_MAX_LINK = 0.3  # ...and at most this share of them inside links
_BAD_LINK = 0.5  # link lists: more than this share in links
_SHORT_PENALTY = 0.25  # score per character of a short, link-free fragment (negative)

# CJK scripts say in one character what Latin scripts say in about three: weigh them so.
_WIDE_CHARS = r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"


@functools.cache
def wide_re() -> re.Pattern:
    return re.compile(_WIDE_CHARS)  # compiled on first use: the big character class costs ~5 ms


def classify(b: Block) -> float:
    """Set b.kind (good / bad / short) and b.size; return the block's weight."""
    n = len(b.text)
    b.size = n if b.text.isascii() else n + 2 * len(wide_re().findall(b.text))
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
_MIN_TEASERS = 2  # ...when the page has at least this many of them
_CUT_OFF = re.compile(r"(?:\.\.\.|…)\s*\]?\s*$")  # an excerpt's end: "...", "…", "[...]", "[…]"
_MIN_CUT_OFF = 3  # ...on this many linked prose blocks of a page makes them teasers
_TEASER_WEIGHT = 0.25  # a prose block that is alone with a link headline (teaser list item) counts this much
_FLAGGED_DISCOUNT = 0.25  # per boilerplate-flagged ancestor of a candidate container (at most two)
_HIDDEN_DISCOUNT = 0.1  # for a candidate that is (inside) an element that is not displayed
_FLAGGED_PENALTY = 0.25  # per character of a flagged subtree, against the containers around it
_MIN_CONTENT = 80  # below this score the page has no real prose: use the lenient fallback


def main_text(root, rejected: set[str] | None = None, doubts: set[str] | None = None, document: bool = False) -> str:
    """The page's main text. ``rejected``, when given, receives the texts of blocks that are furniture
    whatever container is chosen: teasers of other articles and blocks in nav/header/footer/aside
    elements (or ARIA roles) or in elements that are not displayed. ``doubts``, when given, receives
    "furniture" when the chosen container is (inside) an element flagged as furniture: the best
    prose on the page is in a comment thread or sidebar, so the article may be elsewhere;
    "paragraph" when it is a single paragraph (or list item): the lines around it scored too low to
    join it, so the rest of a short article may be there; and "no prose" when the page has no prose
    and declares no main container (<article>, <main>, itemprop=articleBody): which of its short lines
    are the post is then a guess."""
    from lxml import etree

    body = root.find("body")
    if body is None:
        body = root
    _keep_fallback_prose(body)
    etree.strip_elements(body, *DROP_TAGS, with_tail=False)
    semantic: list[int] = []
    images: set[int] = set()
    tags: list[str] = []
    blocks, parents, flags = segment(body, semantic=semantic, images=images, tags=tags)
    if not blocks:
        return ""
    best, value = select(blocks, parents, flags)
    if doubts is not None and value >= _MIN_CONTENT:
        if _in_furniture(parents, flags, best):
            doubts.add("furniture")
        if best and any(b.node == best and b.tag in _CONTENT_TAGS for b in blocks):
            doubts.add("paragraph")
    if rejected is not None:
        strong = [False] * len(parents)
        for i in range(len(parents)):
            strong[i] = flags[i] in (STRONG, HIDDEN) or (i > 0 and strong[parents[i]])
        rejected.update(b.text for b in blocks if b.kind == "teaser" or strong[b.node])
    if value >= _MIN_CONTENT:
        inside = _clean_descendants(parents, flags, best)
        caption = _captions(blocks, parents, tags, images)
        text = _assemble([b for b in blocks if inside[b.node] and not caption[b.node]], parents, document=document)
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
    if doubts is not None and not semantic:
        doubts.add("no prose")
    inside = _clean_descendants(parents, flags, top)
    return _assemble([b for b in blocks if inside[b.node]], parents, lenient=True)


def _keep_fallback_prose(body) -> None:
    """A <noscript> that holds paragraphs of prose is the page's own rendering for readers without
    scripts (the article body a script would otherwise build): read it like any other element."""
    for el in list(body.iter("noscript")):
        if len(el.findall(".//p")) >= 3 and len("".join(el.itertext())) >= 500:
            el.tag = "div"


def select(blocks: list[Block], parents: list[int], flags: list[int]) -> tuple[int, float]:
    """Pick the main-content node; returns it and its (discounted) score."""
    n = len(parents)
    weights = [classify(b) for b in blocks]
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
    teasers: list[int] = []
    for k, b in enumerate(blocks):
        if b.kind == "good":
            i, up = b.node, 0
            while i > 0 and up < 3:
                if n_good[i] > 1 or length[i] > 3 * b.size:
                    break
                if first_link[i] < k:
                    teasers.append(k)
                    break
                i, up = parents[i], up + 1
    # An excerpt cut off with an ellipsis ("...", "[…]") that carries a link (its headline, or "read
    # more") is a teaser too, whether or not the headline is a block of its own, when the page has a
    # few of them.
    cut = [k for k, b in enumerate(blocks) if b.kind == "good" and b.link and _CUT_OFF.search(b.text)]
    if len(cut) >= _MIN_CUT_OFF:
        teasers = sorted(set(teasers).union(cut))
    # One such block is an article under a linked headline (a blog's permalink title); a list of them is
    # a teaser list.
    if len(teasers) >= _MIN_TEASERS:
        for k in teasers:
            blocks[k].kind = "teaser"
            weights[k] *= _TEASER_WEIGHT
    own = [0.0] * n
    for b, w in zip(blocks, weights, strict=True):
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
    hidden[0] = flags[0] == HIDDEN
    for i in range(1, n):
        p = parents[i]
        flagged_above[i] = flagged_above[p] + (1 if flags[p] else 0)
        hidden[i] = hidden[p] or flags[i] == HIDDEN
    best, best_value = 0, float("-inf")
    for i in range(n):
        v = score[i]
        if v > 0:
            k = flagged_above[i] + (1 if flags[i] else 0)
            if k:
                v *= _FLAGGED_DISCOUNT ** min(k, 2)
            if hidden[i]:
                v *= _HIDDEN_DISCOUNT
        if v >= best_value:  # ties go to the later (deeper) node: same content with less around it
            best, best_value = i, v
    return best, best_value


def _in_furniture(parents: list[int], flags: list[int], node: int) -> bool:
    """The node or one of its ancestors is flagged as furniture."""
    while node >= 0:
        if flags[node]:
            return True
        node = parents[node]
    return False


_CAPTION_MAX = 250  # an element holding an image and less text than this is the image's caption...
_CAPTION_REPEAT = 3  # ...unless this many such elements follow each other: steps or items, each with a picture
_BOX_TAGS = frozenset(("div", "figure", "section", "td", "center"))


def _captions(blocks: list[Block], parents: list[int], tags: list[str], images: set[int]) -> list[bool]:
    """Nodes that are (inside) the caption of an image, however it is marked up: a box element holding an
    image and a short text (a caption, a credit line, a chart's labels). A run of such boxes one after
    another is the content itself (the steps of a how-to, a list of products), so they are not captions."""
    n = len(parents)
    length = [0] * n
    has_image = [False] * n
    for b in blocks:
        length[b.node] += b.size
    for i in images:
        has_image[i] = True
    for i in range(n - 1, 0, -1):
        length[parents[i]] += length[i]
        if has_image[i]:
            has_image[parents[i]] = True
    box = [i > 0 and has_image[i] and 0 < length[i] < _CAPTION_MAX and tags[i] in _BOX_TAGS for i in range(n)]
    in_run = [False] * n  # one of _CAPTION_REPEAT or more boxes that are consecutive children of one parent
    run: dict[int, list[int]] = {}
    for i in range(1, n):
        siblings = run.setdefault(parents[i], [])
        if not box[i]:
            siblings.clear()
            continue
        siblings.append(i)
        if len(siblings) == _CAPTION_REPEAT:
            for j in siblings:
                in_run[j] = True
        elif len(siblings) > _CAPTION_REPEAT:
            in_run[i] = True
    caption = [False] * n
    for i in range(1, n):
        p = parents[i]
        in_run[i] = in_run[i] or in_run[p]
        caption[i] = not in_run[i] and (box[i] or caption[p])
    return caption


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
_SENTENCE_END = re.compile(r"[.!?…:][\"'”’)\]]*$")  # a sentence, or a line that introduces what follows


def _bold_line(b: Block) -> bool:
    """A paragraph set wholly in bold and not ending like a sentence: a sub-heading written as text."""
    return b.tag in ("p", "div") and b.bold >= 0.9 * len(b.text) and not _SENTENCE_END.search(b.text)


_UNLINKED_MIN = 25  # a linked sentence has this many characters outside its links (not "Read more: <link>")


def _linked_sentence(b: Block) -> bool:
    """A paragraph that is mostly links but reads as a sentence: names linked in running text."""
    return (
        b.tag == "p"
        and len(b.text) - b.link >= _UNLINKED_MIN
        and len(b.text.split()) >= 6
        and bool(_SENTENCE_END.search(b.text))
    )


def continues_list(kept: Block | None, b: Block, parents: list[int]) -> bool:
    """b is the next item of the list whose item ``kept`` (the block before it) was kept: a list the
    article keeps (one a kept line introduces, or one between its paragraphs) keeps its linked items
    too."""
    return kept is not None and kept.tag == b.tag == "li" and parents[kept.node] == parents[b.node]


def _assemble(blocks: list[Block], parents: list[int], lenient: bool = False, document: bool = False) -> str:
    """Join the kept blocks of the chosen container.

    Prose blocks are kept, link lists dropped.  A short block is kept when it sits between prose
    blocks; a short sentence in a paragraph element (a one-line paragraph, or a line ending in a colon
    that introduces what follows) only needs prose on one side; a heading, or a sub-heading written as
    a paragraph set wholly in bold, needs prose after it; and the short items of a list follow a kept
    line that introduces them with a colon ("Here is what you need:") or a kept item of any list (a
    nested list's items follow the item they hang from), while a wholly linked item only follows a
    kept item of the same list; a list with an item of prose keeps all its items. A
    link-heavy paragraph that reads as a sentence is kept between prose blocks.  Teasers are dropped
    unless they are all the prose there.
    ``lenient`` keeps every block that is not a link list or a teaser. ``document`` (a file read into
    the knowledge base, not an article) keeps every term of a definition list (``<dt>``) too: a short
    term is what the definition after it is about, never a stray line of a page's layout.
    The headline (an <h1> before any prose) is left out: it is the title, not the text.
    """
    n = len(blocks)
    # teasers inside the chosen container are a related-articles list, unless they are all the prose
    # there; a list is not kept, and short lines are not kept for being next to it
    teaser_as = "teaser" if any(b.kind == "good" for b in blocks) else "good"
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
    # a list with an item of prose in it is part of the text, its short and wholly linked items too
    prose_lists = {parents[b.node] for b, k in zip(blocks, kinds, strict=True) if b.tag == "li" and k == "good"}
    seen_prose = False
    for i, b in enumerate(blocks):
        if kinds[i] == "good":
            seen_prose = True
        elif b.tag == "h1" and not seen_prose:
            keep[i] = False
        elif not lenient and b.tag == "li" and kinds[i] in ("short", "bad") and parents[b.node] in prose_lists:
            keep[i] = True
        elif kinds[i] == "bad":
            before = blocks[i - 1] if i and keep[i - 1] else None
            keep[i] = not lenient and (
                (prev_good[i] and next_good[i] and _linked_sentence(b)) or continues_list(before, b, parents)
            )
        elif kinds[i] != "short" or lenient:
            continue
        elif document and b.tag == "dt":
            keep[i] = True
        elif b.tag in HEADINGS or _bold_line(b):
            keep[i] = next_good[i]
        elif b.tag in _CONTENT_TAGS and _SENTENCE_END.search(b.text) and len(b.text.split()) >= 5:
            keep[i] = prev_good[i] or next_good[i]
        elif b.tag == "li" and i and keep[i - 1] and (blocks[i - 1].tag == "li" or blocks[i - 1].text.endswith(":")):
            keep[i] = True  # introduced by a kept colon line, or after a kept item (of any list: nesting)
        else:
            keep[i] = prev_good[i] and next_good[i]
        if keep[i]:
            seen_prose = True
    return "\n\n".join(b.text for b, k in zip(blocks, keep, strict=True) if k)
