"""Names to follow: the names a question asks about, and the names in what was read that may lead to
its answer (the bridge of a two-hop question) — the decision's follow-up searches and the pages it
reads next (offline.py)."""

from __future__ import annotations

import re
from collections.abc import Set

from ..research.loopdata import Form, Source
from ..text import STOPWORDS, content_terms, fold, stem, term_set
from .lexicon import NOT_NAMES
from .notes import Weighed
from .select import named_in, title_phrase
from .tuning import OFFLINE as T

_ENTITY = re.compile(
    r"\b[A-Z][\w'’.\-]*(?:\s+(?:(?:of|the|and|de|da|du|von|van|der|del|la|le|y)\s+)?[A-Z0-9][\w'’.\-]*)*"
)


def question_names(query: str) -> list[str]:
    """The names a question asks about, in order: "Bridge of Tarvel" in "When was the Bridge of
    Tarvel opened?", "Mara Quell" and "Ivo Brandt" in "Did Mara Quell and Ivo Brandt study at the
    same school?" (a capitalised question word is not part of a name)."""
    out: list[str] = []
    for m in _ENTITY.finditer(query):
        for part in " ".join(m.group(0).strip(" .'’-").split()).split(" and "):
            words = part.split()
            while words and fold(words[0]) in STOPWORDS | NOT_NAMES:
                words.pop(0)
            name = " ".join(words)
            if name and content_terms(name) and name not in out:
                out.append(name)
    return out


# Capitalised at a sentence's start, not within the name that follows ("Since 2006, ..."); an
# article stays: "The Lantern" is a name, "Lantern" a word.
_LEADING = (NOT_NAMES | STOPWORDS) - {"the", "a", "an"}


def _names(text: str, cut: bool = False):
    """(name, start, end) for each capitalised name in a sentence (positions in `text` with its spaces
    made single): a run of capitalised words split where a sentence ends inside it ("Norland. It",
    "Gizmo 2. If"; not "J. Smith" or "St. Louis"), at "and" between names of two words or more
    ("Mara Quell and Ivo Brandt", not "Brandt and Sons") and after a possessive ("Quell's 1976"),
    without a leading capitalised common word ("In", "Since") or number; a date ("December 1") is not
    a name, nor one at the end of a text cut short (`cut`: a search snippet's last word may be cut)."""
    text = " ".join(text.split())  # positions are in the text with its spaces made single
    cut = cut and not text.endswith((".", "!", "?", '"', "”", ")"))
    for m in _ENTITY.finditer(text):
        for part in _name_parts(m.group(0)):
            words = part.split()
            while words and (fold(words[0].strip(".")) in _LEADING or words[0].isdigit()):
                words.pop(0)
            name = _without_possessive(" ".join(words)).strip(" .'’-")
            if not name or all(fold(w) in STOPWORDS | NOT_NAMES or w.isdigit() for w in name.split()):
                continue
            start = text.index(name, m.start())
            end = start + len(name)
            if cut and end >= len(text.rstrip(" .'’-")):
                continue
            yield name, start, end


def _name_parts(run: str) -> list[str]:
    out: list[str] = []
    for piece in re.split(r"(?:(?<=[a-z]{2})|(?<=\d))\.\s+|(?<=['’]s)\s+", run):
        sides = " ".join(piece.split()).split(" and ")
        out += sides if all(len(x.split()) > 1 for x in sides) else [piece]
    return out


def _without_possessive(name: str) -> str:
    """A name without the possessive ending it is written with ("Cosby's" -> "Cosby")."""
    for end in ("'s", "’s", "'", "’"):
        if name.endswith(end):
            return name[: -len(end)]
    return name


def _kin(term: str, terms: set[str]) -> bool:
    """Whether a word stem is among `terms`, or one of them starts with it or it with one ("paint" in
    "painted by" for "the painter"): words of one root the stemmer leaves apart."""
    return term in terms or any(
        min(len(term), len(t)) >= T.KIN_PREFIX and (t.startswith(term) or term.startswith(t)) for t in terms
    )


def anchors(query: str, sources: list[Source], weights: dict[str, float]) -> set[int]:
    """The sources the question names (their title is in it): the first hop of a two-hop question,
    whose sentences name the second ("painted by Oren Falk" on the page of the mural asked about)."""
    return named_in(query, {s.n: title_phrase(s.title) for s in sources if s.title}, weights)


def salient_entities(
    facts: list[Weighed], query_terms: set[str], limit: int = 3, top: int = 6, named: Set[int] = frozenset()
) -> list[str]:
    """Names in the most question-relevant facts that the question does not mention, best first; a
    fact of a source the question names (`named`: anchors()) counts as one of the most relevant."""
    scores: dict[str, float] = {}
    by_cover = sorted(facts, key=lambda f: (-(f.qcov or 0.0), -f.score))
    # a sentence read twice (a search snippet, then its page) is one fact, not two of the best
    by_cover = list({fold(f.text): f for f in by_cover[::-1]}.values())[::-1]
    most = (by_cover[0].qcov or 0.0) if by_cover else 0.0
    # A word the facts also write in lower case is a word, capitalised where a sentence starts ("See
    # the table", "Note that ..."), not a name to follow.
    lower = {w for f in by_cover for w in f.text.split() if w.isalpha() and w.islower()}
    for i, f in enumerate(by_cover):
        if i >= top and f.source not in named:
            continue
        weight = f.score if f.qcov is None else f.qcov
        if f.source in named:
            weight = max(weight, most)
        text = " ".join(f.text.split())  # as _names reads it
        for ent, start, end in _names(text, cut=f.form == Form.SNIPPET):
            if " " not in ent and ent.lower() in lower:
                continue
            toks = content_terms(ent)
            if all(stem(t) in query_terms or t in STOPWORDS for t in toks):
                continue
            words = len(ent.split())
            # A name right after or before a word of the question fills the slot the question asks
            # about ("sung by soprano Ilse Varga" for "the soprano who sings ...").
            near = term_set(" ".join(text[:start].split()[-T.NEAR_WORDS :]))
            near |= term_set(" ".join(text[end:].split()[: T.NEAR_WORDS]))
            slot = 1.0 + T.NEAR_BONUS * len({t for t in query_terms - term_set(ent) if _kin(t, near)})
            # max, not sum: a generic word found in many facts ("American") must not beat a name
            size = 0.6 if words == 1 else 1.0 + 0.25 * min(words - 2, 2)
            scores[ent] = max(scores.get(ent, 0.0), weight * size * slot)
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    out: list[str] = []
    for ent, _ in ranked:
        if any(fold(ent) in fold(o) for o in out):
            continue
        out.append(ent)
        if len(out) == limit:
            break
    return out
