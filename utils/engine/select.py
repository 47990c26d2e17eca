"""Which facts the offline report states: the pair of passages that answers the question together.

A two-hop question is answered by two passages from two documents: one the question points at,
and one about the thing that passage names (the bridge), or one for each of two things the question
compares. So the report opens with the best *pair* of facts from different documents — the pair
that together covers most of the question's weighted terms, with a bonus when one document names
the other (a bridge to something the question does not name) and when the pair holds the kind of
value the question asks for (a year for "when", a number for "how many"). Documents the question
names are cited too; then facts are added greedily while they cover more of the question.

Names are matched as whole phrases, and the longest name wins: a title inside a longer title that
the same text names ("Glass Harbour" inside "Beyond the Glass Harbour") is not a mention of its own.
"""

from __future__ import annotations

from ..research.loopdata import Source
from ..text import bare_title, has_qualifier, term_set, tokenize
from .notes import Weighed
from .passages import coverage, refers_back, without_heading
from .tuning import OFFLINE as T
from .values import asks_for, holds

MAX_FACTS = 4
FIRST_CANDIDATES = 8  # facts considered for the first half of the pair
LINK_BONUS = 0.4
READ_LINK = 1.0  # named only in text read but not kept as a fact: how well that answers is not known
NAMED_BONUS = 0.2
TYPE_BONUS = 0.15


def phrase(text: str) -> str:
    """Folded words of a text separated by single spaces, padded: ' beyond the glass harbour '."""
    return " " + " ".join(tokenize(text)) + " "


def title_phrase(title: str) -> str:
    """A document title without its qualifier ("Ivo Brandt (novel)" -> ' ivo brandt '), or '' when it is
    too short or holds no content word to count as a name."""
    bare = phrase(bare_title(title))
    return bare if len(bare.strip()) > 3 and term_set(bare) else ""


def mentions(text: str, names: dict[int, str], own: int | None = None) -> set[int]:
    """Documents whose title phrase `text` names, as a name (a word of it is capitalised or a number
    in the text: "an electric kettle" does not name the document "Kettle"), longest match first: a
    title found only inside a longer title the text also names (or inside the text's own document
    title) does not count."""
    t = phrase(text)
    words = [w.lstrip("([{\"'“‘") for w in text.split()]
    caps = set(tokenize(" ".join(w for w in words if w[:1].isupper() or w[:1].isdigit())))
    found = {n: p for n, p in names.items() if p and p in t and not caps.isdisjoint(p.split())}
    longer = list(found.values()) + ([names[own]] if own in names and names[own] in t else [])
    return {n for n, p in found.items() if n != own and not any(p != q and p in q for q in longer)}


def named_in(query: str, names: dict[int, str], weights: dict[str, float]) -> set[int]:
    """Documents the question names: their title phrase is in the question (longest match) and holds
    a word the question writes as a name (capitalised, or a number; weight > 1): "home town" in a
    question is not the document "Home town"."""
    return {n for n in mentions(query, names) if any(weights.get(t, 0) > 1.0 for t in term_set(names[n]))}


def about_subject(sentence: str, opening: bool) -> bool:
    """Whether a sentence of a document is about what the document's title names: its opening
    sentence is ("Ivo Karl Brandt ... was a Norlish clockmaker" under "Ivo Brandt"), and so is one
    that opens with a pronoun ("He was working as a ferry pilot ...")."""
    return opening or refers_back(sentence)


def choose(
    query: str, facts: list[Weighed], sources: list[Source], weights: dict[str, float], lead: bool = False
) -> list[Weighed]:
    """The facts the report states, in order. `facts` are sorted best first (by question coverage).
    With `lead`, the first fact opens the answer (it holds the value the question asks for) and only
    what adds to it joins."""
    if not facts:
        return []
    names = {s.n: title_phrase(s.title) for s in sources}
    text_of = {s.n: " ".join([s.excerpt or "", s.snippet or ""]) for s in sources}
    for f in facts:  # what was read of a document includes its facts
        text_of[f.source] = text_of.get(f.source, "") + " " + f.text
    named = named_in(query, names, weights)
    linked = {n: mentions(text_of.get(n, ""), names, own=n) for n in {f.source for f in facts}}
    w = set(weights)
    # A document's opening sentence is about what its title names (as the analyzer reads it).
    titles = {s.n: term_set(bare_title(s.title)) for s in sources}
    excerpts = {s.n: without_heading((s.excerpt or "").lstrip()) for s in sources}

    def about(f: Weighed) -> set[str]:
        text = f.text.strip()
        lead = excerpts.get(f.source, "").startswith(text[:80])
        return (term_set(text) | (titles.get(f.source, set()) if about_subject(text, lead) else set())) & w

    terms = [about(f) for f in facts]
    terms_of = {id(f): t for f, t in zip(facts, terms, strict=True)}

    wants = asks_for(query)

    def has_type(f: Weighed) -> bool:
        return holds(wants, f.text, query)

    plain = {s.n for s in sources if not has_qualifier(s.title)}

    def primary(f: Weighed) -> bool:
        """A title without a qualifier names the main thing of that name ("Ivo Brandt", not "Ivo
        Brandt (novel)"): on a tie, the pair about the main thing wins."""
        return f.source in plain

    # How strongly one document leads to another: as much as the best of its facts naming the other
    # answers the question, relative to the best fact ("built to steer the Tidewell loom", not "it has
    # since been replaced by the Quillon panel"); named only elsewhere in it, READ_LINK.
    top = max(f.qcov or 0.0 for f in facts) or 1.0
    says: dict[tuple[int, int], float] = {}
    for f in facts:
        for n in mentions(f.text, names, own=f.source):
            says[f.source, n] = max(says.get((f.source, n), 0.0), (f.qcov or 0.0) / top)

    def link(a: Weighed, b: Weighed) -> float:
        ab = b.source not in named and b.source in linked[a.source]
        ba = a.source not in named and a.source in linked[b.source]
        return max(ab * says.get((a.source, b.source), READ_LINK), ba * says.get((b.source, a.source), READ_LINK))

    best, pair = -1.0, [facts[0]]
    for i, a in enumerate(facts[: 1 if lead else FIRST_CANDIDATES]):
        for j, b in enumerate(facts):
            if b.source == a.source:
                continue
            tied = link(a, b)
            if not (
                (terms[j] - terms[i] or tied or b.source in named)
                and (terms[i] - terms[j] or tied or a.source in named)
            ):
                continue  # one of the two adds nothing: the answer may well be in one document
            s = (
                coverage(terms[i] | terms[j], weights)
                + LINK_BONUS * tied
                + NAMED_BONUS * ((a.source in named) + (b.source in named and names[b.source] != names[a.source]))
                + TYPE_BONUS * (has_type(a) or has_type(b))
                + T.PAIR_SCORE_WEIGHT * (a.score + b.score)
                + 0.01 * (primary(a) + primary(b))
            )
            if s > best + 1e-9:
                best, pair = s, [a, b] if lead or (a.qcov or 0) >= (b.qcov or 0) else [b, a]
    chosen = list(pair)
    covered = set().union(*(terms_of[id(f)] for f in chosen))
    # Each thing the question names is cited once (one document per name: "Harbour Lights" and
    # "Harbour Lights (season 1)" are one name), by its best fact.
    cited_names = {names[f.source] for f in chosen}
    for n in sorted(named, key=lambda n: -len(names[n])):
        if names[n] in cited_names or len(chosen) >= MAX_FACTS:
            continue
        mine = [f for f in facts if f.source in named and names[f.source] == names[n]]
        mine.sort(key=lambda f: not primary(f))  # the main thing of that name first
        if mine:
            chosen.append(mine[0])
            cited_names.add(names[n])
            covered |= terms_of[id(mine[0])]
    # Then greedy cover: the fact adding the most uncovered question weight, until none adds any.
    floor = 0.2 * (facts[0].qcov or 0)
    pool = [f for f in facts if f not in chosen and (f.qcov or 0) >= floor]
    while pool and len(chosen) < MAX_FACTS:
        gains = [(coverage(terms_of[id(f)] - covered, weights), f.qcov or 0, -i) for i, f in enumerate(pool)]
        gain, _, neg_i = max(gains)
        if gain <= 0:
            break
        f = pool.pop(-neg_i)
        chosen.append(f)
        covered |= terms_of[id(f)]
    return chosen
