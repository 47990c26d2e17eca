"""A yes or no for a question that compares two named things, from the two facts found.

"Were A and B from the same country?", "Are both A and B found in C?", "Are A and B both
kinds of D?": the question opens with an auxiliary verb and names exactly two documents. The
offline engine answers it only when the facts it states decide it, and cites both:

* "same …" — what each fact says its subject *is* (the capitalised words just after the first
  "is"/"was", e.g. "a Norlish clockmaker" → Norlish) is compared: shared → yes, both known and
  different → no.
* otherwise the question's remaining words are the property. When it holds a name ("found in
  Norland") the property is that name: in what was read of both → yes; of one only → no. Without
  a name, both facts having all of it, or both saying they are the same kind of thing (the noun
  after "is a"), is a yes; there is no "no" without a name to go by.

Anything less clear-cut gives no verdict; the report then states the facts as usual.
"""

from __future__ import annotations

import re

from ..research.loopdata import Source
from ..text import STOPWORDS, bare_title, fold, has_qualifier, qualifier, term_set, tokenize
from .lexicon import AUXILIARIES, LINKING, NOT_NAMES
from .notes import Weighed
from .select import named_in, title_phrase

_COPULA = re.compile(r"\b(?:is|was|are|were)\s+(?:(?:an?|the|one of the)\s+)?(.{0,80})")


def _words(text: str) -> list[str]:
    """The words of a text as it writes them (case kept), without the punctuation around them."""
    return [w for w in (x.strip('.,;:!?()[]{}"“”') for x in text.split()) if any(c.isalnum() for c in w)]


def _facts_of(n: int, facts: list[Weighed]) -> list[Weighed]:
    return [f for f in facts if f.source == n]


def _what_it_is(fact: str) -> tuple[set[str], str]:
    """The capitalised words of the phrase after the first copula, and that phrase's first noun-ish
    word ("a Norlish clock maker" -> ({"norlish"}, "norlish"))."""
    m = _COPULA.search(fact)
    if not m:
        return set(), ""
    words = [w for w in _words(m.group(1)) if not w[0].isdigit()][:6]
    caps = {fold(w) for w in words if w[0].isupper() and fold(w) not in NOT_NAMES}
    plain = [fold(w) for w in words if fold(w) not in STOPWORDS]
    return caps, (plain[0] if plain else "")


def asks_yes_no(query: str) -> bool:
    """Whether a question is answered yes or no: it opens with an auxiliary verb ("Can I ...?", "Were A and B ...?")."""
    toks = tokenize(query)
    return bool(toks) and toks[0] in AUXILIARIES


def verdict(query: str, chosen: list[Weighed], facts: list[Weighed], sources: list[Source], weights: dict[str, float]):
    """(sentence starting "Yes." or "No.", with citations; the two facts it rests on) or None.
    `chosen` are the facts the report states already."""
    got = _decide(query, chosen, facts, sources, weights)
    return None if got is None else (f"{got[0]}. {got[1]}", got[2])


def _decide(query, chosen, facts, sources, weights):
    if not asks_yes_no(query):
        return None
    toks = tokenize(query)
    names = {s.n: title_phrase(s.title) for s in sources}
    by_name: dict[str, int] = {}
    stated = {f.source for f in chosen}
    title = {s.n: s.title for s in sources}
    qterms = term_set(query)

    def other_sense(n: int) -> bool:
        """Two documents of one name ("Ivo Brandt", "Ivo Brandt (novel)"): the main thing of that name comes
        first, unless the question says which sense ("the novel"); then the one the answer states."""
        return has_qualifier(title[n]) and not term_set(qualifier(title[n])) & qterms

    for n in sorted(named_in(query, names, weights), key=lambda n: (other_sense(n), n not in stated, n)):
        if _facts_of(n, facts):
            by_name.setdefault(names[n], n)
    if len(by_name) != 2:
        return None
    (pa, a), (pb, b) = by_name.items()
    fa = next((f for f in chosen if f.source == a), _facts_of(a, facts)[0])
    fb = next((f for f in chosen if f.source == b), _facts_of(b, facts)[0])
    subject = {a: bare_title(title[a]), b: bare_title(title[b])}
    qwords = set(toks)

    if "same" in qwords:
        (ca, _), (cb, _) = _what_it_is(fa.text), _what_it_is(fb.text)
        ca, cb = ca - qwords, cb - qwords
        shared = ca & cb
        if shared:
            word = _as_written(fa.text, shared)
            return "Yes", f"Both are {word} [{a}] [{b}].", (fa, fb)
        if ca and cb:
            va = _as_written(fa.text, ca)
            vb = _as_written(fb.text, cb)
            return "No", f"{subject[a]}: {va} [{a}]. {subject[b]}: {vb} [{b}].", (fa, fb)
        return None

    prop = set(weights) - term_set(pa) - term_set(pb) - {t for t in qwords if t in LINKING | AUXILIARIES}
    if not prop:
        return None
    read = {x.n: term_set(" ".join(filter(None, (x.title, x.excerpt, x.snippet)))) for x in sources}
    for f in facts:
        read[f.source] = read.get(f.source, set()) | term_set(f.text)
    key = {t for t in prop if weights[t] > 1.0}  # the property's names and numbers
    if key:
        has_a, has_b = key <= read.get(a, set()), key <= read.get(b, set())
        said = _surface(query, key)
        if has_a and has_b:
            return "Yes", f"{subject[a]}: {said} [{a}]. {subject[b]}: {said} [{b}].", (fa, fb)
        if has_a != has_b:
            yes, no = (a, b) if has_a else (b, a)
            return "No", f"{subject[yes]}: {said} [{yes}]. Nothing read about {subject[no]} says {said}.", (fa, fb)
        return None
    if prop <= read.get(a, set()) and prop <= read.get(b, set()):
        said = _surface(query, prop)
        return "Yes", f"{subject[a]}: {said} [{a}]. {subject[b]}: {said} [{b}].", (fa, fb)
    (_, na), (_, nb) = _what_it_is(fa.text), _what_it_is(fb.text)
    if na and na == nb:
        return "Yes", f"Both are a {na} [{a}] [{b}].", (fa, fb)
    return None


def _as_written(text: str, folded: set[str]) -> str:
    """The first word of `text` whose folded form is in `folded`, as the text writes it."""
    return next((w for w in _words(text) if fold(w) in folded), "")


def _surface(query: str, terms: set[str]) -> str:
    """The question's own words for a set of index terms, in its order ("found", "Norland")."""
    out = []
    for w in _words(query):
        if term_set(w) & terms and w not in out:
            out.append(w)
    return " ".join(out)
