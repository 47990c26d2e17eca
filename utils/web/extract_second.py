"""A second opinion for pages where our extractor's output looks wrong.

Our extractor picks one container by its prose; on a page with a short article (a few paragraphs)
beside longer furniture it can pick the furniture, or keep only a line. readability-lxml, which
scores paragraphs' parents rather than subtrees, reads the page too when ours looks wrong:

* our container is (inside) an element flagged as furniture (a comment thread, a sidebar): the
  other is used when it says anything (blocks flagged only by class words are kept in it, since
  those words are what is in doubt), unless nearly all of it is in ours: then both read the same
  article and ours, in a wrapper named like furniture, is only the larger part of the page; or unless
  ours covers clearly more of the page's own description (page builders name every wrapper "widget");
* our text covers less than half the words of the page's own description (og:description, meta
  description): the other is used when it covers clearly more of it;
* our text is short (under ``SHORT_CHARS`` characters, about 100 words): the other is used when it
  says clearly more, or simply more when ours is a single paragraph (the short lines around a lone
  paragraph are more often the rest of the article than furniture); and when it says anything that
  is not already in ours when the page has no prose and no declared main container, since our pick
  among its short lines is a guess while the other weighs class names ("entry", "sidebar").

It runs on that minority of pages only (it is several times slower than ours), and never when it is
not installed.

Last, the page's own statement of its text, a JSON-LD ``articleBody``, wins over whichever text was
chosen when it is long (50+ words), longer, and that text holds less than half of its words: the
body is then built by a script from that data, or both readers took the wrong part of the page.
"""

from __future__ import annotations

import logging
import re
from collections import Counter

from .extract_score import wide_re

_WORD = re.compile(r"\w+")
_CONTAINED = 0.9
_EXTENDS = 2  # a second opinion that contains our text must be this many times longer to replace it
MIN_OTHER = 200  # under furniture doubt, a second opinion this short (Latin-equivalent chars) is no answer
_AGREES = 0.97  # ...and one with this share of its words in ours agrees with ours
_DESCRIPTION_WORDS = 10  # a page description this long is evidence of what the article says...
_DESCRIPTION_COVERED = 0.5  # ...and our text covering less than this share of its words is doubtful
_DESCRIPTION_MARGIN = 0.1  # the second opinion must cover this much more of it to replace ours
SHORT_CHARS = 600  # our text under this many (Latin-equivalent) characters, ~100 words, asks for one

log = logging.getLogger(__name__)


def size(text: str) -> int:
    """Length in Latin-equivalent characters, whitespace not counted (a CJK character counts three)."""
    n = len("".join(text.split()))
    return n if text.isascii() else n + 2 * len(wide_re().findall(text))


def suspicious(text: str) -> bool:
    """Our text is too short to trust."""
    return size(text) < SHORT_CHARS


def second_opinion(
    html: str, url: str = "", rejected: set[str] | frozenset[str] = frozenset(), by_class: bool = True
) -> str:
    """readability-lxml's main text of the page, one paragraph per block; "" when it cannot say."""
    try:
        from readability import Document
    except ImportError:
        return ""
    logging.getLogger("readability").setLevel(logging.CRITICAL)
    try:
        # No url: given one, readability makes every link absolute, a fifth of its time, and we
        # only read its text.
        summary = Document(html).summary(html_partial=True)
    except Exception:  # noqa: BLE001 - a second opinion that fails is no opinion
        log.debug("second opinion failed for %s", url or "<html>", exc_info=True)
        return ""
    if not summary or not summary.strip():
        return ""
    return _clean_text(summary, rejected, by_class)


def _clean_text(summary: str, rejected: set[str] | frozenset[str], by_class: bool = True) -> str:
    """The text of readability's part of the page, less what our own rules call furniture: blocks in
    nav/footer/aside or boilerplate-named elements, link lists (not the linked items of a list it keeps),
    teaser lists, a headline before any prose."""
    from lxml import etree

    from .extract_dom import BOILER, DROP_TAGS, segment
    from .extract_score import continues_list, select

    try:
        root = etree.fromstring(f"<html><body>{summary}</body></html>", parser=etree.HTMLParser())
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return ""
    body = root.find("body") if root is not None else None
    if body is None:
        return ""
    etree.strip_elements(body, *DROP_TAGS, with_tail=False)
    blocks, parents, flags = segment(body)
    flagged = [False] * len(parents)
    for i in range(1, len(parents)):
        flagged[i] = bool(flags[i] and (by_class or flags[i] != BOILER)) or flagged[parents[i]]
    select(blocks, parents, flags)  # classifies the blocks and marks teaser lists
    kept: list[str] = []
    last = None  # the block before this one, when kept
    for b in blocks:
        link_list = b.kind == "bad" and not continues_list(last, b, parents)
        if b.text in rejected or flagged[b.node] or link_list or b.kind == "teaser" or (b.tag == "h1" and not kept):
            last = None
            continue
        kept.append(b.text)
        last = b
    return "\n\n".join(kept)


def better_of(
    ours: str,
    html: str,
    url: str = "",
    rejected: set[str] | frozenset[str] = frozenset(),
    doubts: set[str] | frozenset[str] = frozenset(),
    description: str = "",
) -> str:
    """Our text, or the second opinion's when ours looks wrong and the other is better by evidence.

    Blocks whose text is in ``rejected`` (what our pass saw as teasers or layout furniture) are left out
    of the other. Ours looks wrong when ``doubts`` holds "furniture" (it came from an element flagged as
    furniture: the other is used when it says anything, is not nearly all in ours and does not cover
    clearly less of the page's ``description``), when it leaves out most of the page's own
    ``description`` (the other is used when it covers clearly more of it), or when it is short (the
    other is used when it says clearly more; just more when ``doubts`` holds "paragraph": ours is a
    single paragraph), or, when ``doubts`` holds "no prose", when it says anything not already in ours.
    Then our teaser marks are guesses too: the other keeps the blocks ours called teasers."""
    if "no prose" in doubts and suspicious(ours):
        other = second_opinion(html, url)
        return other if other and coverage(other, ours) < _AGREES else ours
    if "furniture" in doubts:
        other = second_opinion(html, url, rejected, by_class=False)
        if size(other) < MIN_OTHER or coverage(other, ours) >= _AGREES:
            return ours
        if _describes(description, ours, other):
            return ours
        return other
    if len(_WORD.findall(description)) >= _DESCRIPTION_WORDS:
        covered = coverage(description, ours)
        if covered < _DESCRIPTION_COVERED:
            other = second_opinion(html, url, rejected)
            if _describes(description, other, ours):
                return other
            if not suspicious(ours):
                return ours
            return _longer(ours, other, "paragraph" in doubts)
    if not suspicious(ours):
        return ours
    return _longer(ours, second_opinion(html, url, rejected), "paragraph" in doubts)


_DECLARED_WORDS = 50  # a JSON-LD articleBody this long is the page's own statement of its text...
_DECLARED_COVERED = 0.5  # ...and a text holding less than this share of its words missed it


def declared_if_missed(text: str, declared: str) -> str:
    """The page's declared article text (JSON-LD articleBody) when it is long, longer than ``text``
    and ``text`` holds less than half of its words: the body is built by a script from that data, or
    both readers took the wrong part of the page."""
    if len(_WORD.findall(declared)) < _DECLARED_WORDS or size(declared) <= size(text):
        return text
    return declared if coverage(declared, text) < _DECLARED_COVERED else text


def _describes(description: str, text: str, other: str) -> bool:
    """The page's own description (when long enough to be evidence) is clearly better covered by text."""
    if len(_WORD.findall(description)) < _DESCRIPTION_WORDS:
        return False
    return coverage(description, text) >= coverage(description, other) + _DESCRIPTION_MARGIN


def _longer(ours: str, other: str, lone: bool = False) -> str:
    """The other text when it says clearly more than ours (just more, when ours is a ``lone`` paragraph)."""
    if size(other) <= size(ours):
        return ours
    if not lone and contained(ours, other) and size(other) < max(SHORT_CHARS, _EXTENDS * size(ours)):
        return ours  # the same text plus a little more: the little more is furniture as often as not
    return other


def coverage(part: str, whole: str) -> float:
    """The share of part's words (as a multiset) that are in whole."""
    a, b = Counter(_WORD.findall(part.lower())), Counter(_WORD.findall(whole.lower()))
    n = sum(a.values())
    return sum((a & b).values()) / n if n else 0.0


def contained(part: str, whole: str) -> bool:
    """Nearly all of part's words (as a multiset) are in whole."""
    return coverage(part, whole) >= _CONTAINED
