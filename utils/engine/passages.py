"""What the offline analyzer reads: a question's weighted terms and wanted value, and a document's
sentences with the context that says what each one is about.

A sentence in documentation rarely repeats its subject: "The default value is forty thousand
pages." sits under an option's entry ("--page-pool=<number> [default: 40000]"), in a
section, in a file with a title. So each sentence is read with
  * its own words (full weight),
  * the words of what it sits under (half weight): the heading path of its chunk, the nearest
    heading-like line above it in the text (a short line that is not a sentence), and the
    sentence before it in the same block (which often names the subject the next one answers).
A question's words weigh by how rare they are in the knowledge base (IDF, when the KB said so):
a word every page of a manual uses ("memory", "table") says little about which sentence answers.
A question that asks for a kind of value (a default, a number or size, a version, a date, an
option or command) gives a bonus to the sentences that hold one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..research.loopdata import Form
from ..text import (
    QUESTION_WORDS,
    STOPWORDS,
    content_terms,
    fold,
    paragraphs,
    split_sentences,
    stem,
    term_set,
    tokenize,
    without_marker,
)
from .lexicon import NOT_NAMES, REFERS_BACK
from .notes import Weighed
from .tuning import OFFLINE as T
from .values import CAPITALISED, asks_for, clause_words, holds, limit_word


def question_parts(question: str) -> list[str]:
    """The questions a two-part question asks ("How long does the kettle keep water warm, and which switch
    changes it?": two), each to search for on its own; [] for a question of one part. A part starts
    after ", and " with a question word or an auxiliary verb."""
    pieces = question.split(", and ")
    parts = [pieces[0]]
    for piece in pieces[1:]:
        first = piece.split(maxsplit=1)[:1]
        if first and fold(first[0]) in QUESTION_WORDS | {"can", "could", "should", "will", "would"}:
            parts.append(piece)
        else:
            parts[-1] += f", and {piece}"
    parts = [p.strip(" ?") for p in parts]
    return parts if len(parts) > 1 and all(len(content_terms(p)) >= 2 for p in parts) else []


def coverage(terms: set[str], weights: dict[str, float]) -> float:
    """The weighted share of the question's terms that `terms` holds (0..1)."""
    total = sum(weights.values())
    return sum(v for k, v in weights.items() if k in terms) / total if total else 0.0


def question_weights(query: str, extra: Sequence[str] = (), idf: dict[str, float] | None = None) -> dict[str, float]:
    """Stemmed question terms -> weight: names and numbers weigh more, feedback terms less, and (with
    the knowledge base's IDF) a word common to the whole collection less than a rare one."""
    w: dict[str, float] = {}
    caps = {stem(t) for m in CAPITALISED.findall(query) for t in tokenize(m) if t not in STOPWORDS | NOT_NAMES}
    when = clause_words(query)  # "unless I pick one": when, not what, the question asks about
    for t in content_terms(query):
        if t not in when:
            s = stem(t)
            w[s] = T.NAME_WEIGHT if (s in caps or t.isdigit()) else 1.0
    # implied, not said ("the longest name it can take" asks for the maximum length): the words
    # documentation states it with, weighing less than the question's own
    for word in limit_word(query).split():
        w.setdefault(stem(word), T.IMPLIED_WORD_WEIGHT)
    if asks_for(query) == "default":  # a default clause asks for the default as plainly as the word does
        w.setdefault(stem("default"), 1.0)
    for t in extra:
        w.setdefault(stem(t), T.FEEDBACK_WEIGHT)
    if idf:
        for s in w:
            if s in idf:
                w[s] *= max(T.IDF_FLOOR, min(idf[s], T.IDF_CAP)) / T.IDF_UNIT
    return w


@dataclass
class Passage:
    """A sentence of a document (or a sentence and the one before it), with what it sits under."""

    text: str  # what is quoted
    index: int  # position of its (last) sentence in the item
    own: set[str]  # the quoted words' terms
    context: set[str] = field(default_factory=set)  # terms of what it sits under (half weight)
    code: bool = False  # a fenced code block, not prose
    heading: str = ""  # the heading-like line it sits under, if any
    before: str = ""  # the sentence before it in the same block, if any
    title_line: bool = False  # a heading-like line itself, not a sentence under one
    item: str = ""  # the whole paragraph (a list item) it is a sentence of, if that has more than one
    then: str = ""  # what it introduces when it ends with a colon: the list items (or sentence) after it
    opening: bool = False  # in the first paragraph under its heading-like line (an entry's description)


_ITEM_MARK = re.compile(r"^(?:[|*•+]|-(?=\s|$))")  # a table row or a list item; "--all", "-F format" are terms


def _is_heading(para: str) -> bool:
    words = para.split()
    return (
        0 < len(words) <= T.HEADING_MAX_WORDS
        and not para.endswith((".", "!", "?", ":", ";", ","))
        and not _ITEM_MARK.match(para)
    )


def without_heading(text: str) -> str:
    """A document's text without the heading-like line it opens with (its title as an <h1>)."""
    first, sep, rest = text.partition("\n")
    return rest.lstrip() if sep and _is_heading(first.strip()) else text


def passages(text: str, section: str = "") -> list[Passage]:
    """The sentences of `text` in order, each with the terms of what frames it: its chunk's heading
    path (`section`); under a heading-like line, that line and the block it heads (an option's
    entry: the line naming it and its description frame each other); elsewhere the sentence before."""
    out: list[Passage] = []
    path_terms = term_set(section) if section else set()
    for heading, paras in _blocks(paragraphs(text)):
        block = set().union(*(term_set(p) for p in paras[: T.BLOCK_PARAGRAPHS])) if heading else set()
        if heading:
            out.append(Passage(heading, len(out), term_set(heading), path_terms | block, title_line=True))
            block |= term_set(heading)
        before = ""
        for k, para in enumerate(paras):
            code = para.startswith("```")
            sents = [para] if code else [without_marker(s) for s in split_sentences(para)]
            item = " ".join(sents) if len(sents) > 1 else ""
            for n, s in enumerate(sents):
                own = term_set(s)
                ctx = (path_terms | block | term_set(before)) - own
                then = introduced(paras[k + 1 :]) if not code and n == len(sents) - 1 and s.endswith(":") else ""
                out.append(
                    Passage(
                        s,
                        len(out),
                        own,
                        ctx,
                        code,
                        heading,
                        "" if code else before,
                        item=item,
                        then=then,
                        opening=k == 0,
                    )
                )
                before = "" if code else s
    return out


def introduced(rest: list[str]) -> str:
    """What a line ending with a colon introduces, as it can be quoted after it: the items of the list
    that follows (as many as fit), or the sentence that follows; nothing when code or a table follows."""
    if not rest or rest[0].startswith(("```", "|")):  # code, or a table (a row is never quoted)
        return ""
    if not _ITEM_MARK.match(rest[0]):
        return split_sentences(rest[0])[0] if not _is_heading(rest[0]) else ""
    items: list[str] = []
    for para in rest:
        if not _ITEM_MARK.match(para) or para.startswith("|") or len(items) == T.INTRODUCED_ITEMS:
            break
        items.append(without_marker(para).rstrip(" .;,") + ";")
    return " ".join(items)[:-1] + "." if items else ""


def _blocks(paras: list[str]) -> list[tuple[str, list[str]]]:
    """(heading-like line or "", the paragraphs under it) in order."""
    blocks: list[tuple[str, list[str]]] = [("", [])]
    for para in paras:
        if _is_heading(para) and not para.startswith("```"):
            blocks.append((para, []))
        else:
            blocks[-1][1].append(para)
    return [b for b in blocks if b[0] or b[1]]


_UNDERLINE = re.compile(r"\s*([~=\-_*#^\"'`])\1{2,}\s*")


_ENUMERATION = re.compile(r"^(?:[A-Z]|\d+)(?:\.\d+)*\.\s+(?=\S)")  # "4.3.7. ", "E.2. ", "1. "


def plain_heading(line: str) -> str:
    """A heading-like line without the rules that underline it ("Release 5.4.2 ~~~~~~~"), the
    marks that make it one ("## make_widget(size)") or its section number ("4.3.7. Disk
    Needs": the number places the section, it is not a figure the section gives)."""
    return _ENUMERATION.sub("", _UNDERLINE.sub(" ", line).strip().lstrip("#").strip())


def with_subject(quote: str, p: Passage, title: str) -> str:
    """A quote that names its subject: a sentence of the first paragraph under a heading that shares no
    word with it ("The default value is 40." under the entry "queue.depth", or the sentence after the
    one that opens the entry) is quoted under that heading; it is scored on its own words, as before
    (the heading frames it)."""
    head = plain_heading(p.heading) if p.heading and not p.title_line and (p.opening or not p.before) else ""
    if not head or p.code or fold(head) == fold(title) or fold(quote).startswith(fold(head)):
        return quote
    return quote if term_set(head) & p.own else f"{head}: {quote}"


def refers_back(sentence: str) -> bool:
    """A sentence that opens what a heading names and refers back to it ("It ...", "This ..."): the
    heading is its subject."""
    first = sentence.split(maxsplit=1)[:1]
    return bool(first) and first[0][:1].isupper() and fold(first[0]) in REFERS_BACK


def is_quotable(sentence: str) -> bool:
    """Not a table row, a Markdown heading marker or an over-long run of text."""
    return T.MIN_CHARS <= len(sentence) <= T.MAX_CHARS and not sentence.startswith(("#", "|"))


def trust(fact: Weighed) -> float:
    """How much a fact's wording can be taken at face value: snippets are cut short, and a KB
    passage counts in proportion to the KB's own retrieval score."""
    if fact.form == Form.SNIPPET:
        return T.SNIPPET_TRUST
    if fact.form == Form.KB and fact.retrieval is not None:
        return T.KB_TRUST_BASE + (1 - T.KB_TRUST_BASE) * fact.retrieval
    return 1.0


FEATURES = ("coverage", "best", "framed", "support", "wants_value", "value_found", "rare_missing", "verdict")
KB_FEATURES = (*FEATURES, "specific", "crowd")  # with a KB's word rarity (term IDF) to go by


def confidence_features(
    answer: list[Weighed],
    facts: list[Weighed],
    weights: dict[str, float],
    query: str,
    decided: bool = False,
    idf: dict[str, float] | None = None,
) -> dict[str, float]:
    """What the confidence in an answer is made of, each in 0..1, from the facts the answer states
    (`answer`) and all the facts read (`facts`):
    coverage: the question's weighted terms the answer's facts say, together; best: the best single
    answer fact's coverage times its trust; framed: the best coverage of an answer fact read with what
    frames it (its heading, the sentence before; the analyzer's qcov); support: other sources whose
    facts each cover 40 % of the question (two: 1); wants_value / value_found: the question asks for a
    kind of value / the answer holds one; rare_missing: the question's rarest word (by KB IDF) is in
    no fact of the answer; verdict: a yes/no comparison the facts settle; specific: how rare the
    question's words are in the KB (`idf`, its mean capped IDF; a word the KB lacks counts as rare; no
    KB: 0): a question in words found everywhere is hard to pin to one passage; crowd: how many facts
    come as close to the question as the closest (ten or more: 1): the words do not single one out."""
    # What the facts themselves say: a sentence read with its document's title (select.about_subject)
    # ranks higher among facts, but the title's words are not evidence the answer was found.
    said = [(f, coverage(terms, weights), terms) for f in answer for terms in [term_set(f.text)]]
    if not said:
        return dict.fromkeys(FEATURES, 0.0)
    union: set[str] = set().union(*(t for _, _, t in said))
    wants = asks_for(query)
    rarest = max(weights, key=lambda t: (weights[t], t)) if weights else ""
    mean = sum(weights.values()) / len(weights) if weights else 0.0
    supporting = {f.source for f in facts if coverage(term_set(f.text), weights) >= 0.4}
    return {
        "coverage": coverage(union, weights),
        "best": max(c * trust(f) for f, c, _ in said),
        "framed": max(min(1.0, float(f.qcov or 0.0)) for f, _, _ in said),
        "support": min(1.0, len(supporting) / 2),
        "wants_value": float(wants is not None),
        "value_found": float(any(holds(wants, f.text, query) for f, _, _ in said)),
        "rare_missing": float(weights.get(rarest, 0) > T.RARE_FACTOR * mean and rarest not in union),
        "verdict": float(decided),
        "specific": _specific(weights, idf),
        "crowd": _crowd(facts),
    }


def _specific(weights: dict[str, float], idf: dict[str, float] | None) -> float:
    if not idf or not weights:
        return 0.0
    return sum(min(idf.get(t, T.IDF_CAP), T.IDF_CAP) for t in weights) / (T.IDF_CAP * len(weights))


def _crowd(facts: list[Weighed]) -> float:
    near = [(f.qcov or 0.0) + T.MEANING_WEIGHT * (f.sem or 0.0) for f in facts]
    top = max(near, default=0.0)
    return min(1.0, sum(v >= top - T.CROWD_WINDOW for v in near) / T.CROWD_FULL)
