"""The offline engine's notes: what it weighed to keep each fact, and how rare the words it searched
the knowledge base for are there. They are the engine's, not the session's facts: a `Fact` holds
what a fact is; the notes hold how the offline engine rated it, kept in the shared store under
`engine_notes["offline"]` (the Analyzer node stores what an analysis hands back, unread), so a
resumed session rates its facts as the run that found them did.

    {"facts": {Fact.key: [{"qcov", "retrieval", "prior", "follow_up", "sem"}, ...]},   # fields it set
     "term_idf": {word: IDF}, "idf_steps": [the KB steps whose query's words are in term_idf]}

A key holds one note per fact of that key in the order found: a step may quote one sentence of one
source twice (two frames, two ratings); the session keeps the first, or (search snippets) each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..registry import SEARCH_KB
from ..research.loopdata import Fact
from ..research.state import HistoryEntry, Shared

OFFLINE = "offline"  # the engine's name: its key in engine_notes


@dataclass
class Weighed(Fact):
    """A fact as the offline engine reads it: the fact and what the engine weighed of it."""

    qcov: float | None = None  # weighted share of the question's terms in it; None: an LLM extracted it
    retrieval: float | None = None  # KB facts: the hit's retrieval score
    prior: float = 0.0  # KB facts: what the KB's ranking of the chunk adds to its rank
    follow_up: bool = False  # found by a search for a lead, not for the question itself
    sem: float | None = None  # closeness in meaning to the question (engine/semantic.py)

    def fact(self) -> Fact:
        """The fact itself, as the session keeps it."""
        return Fact(self.text, self.source, self.score, self.step, self.form)

    def note(self) -> dict[str, Any]:
        """What the engine weighed, as saved: the fields it set."""
        optional = {"qcov": self.qcov, "retrieval": self.retrieval, "sem": self.sem}
        note = {k: v for k, v in optional.items() if v is not None}
        return note | {k: v for k, v in (("prior", self.prior), ("follow_up", self.follow_up)) if v}


def offline_notes(notes: Mapping[str, Any]) -> dict[str, Any]:
    """The offline engine's part of a context's notes (empty at the start)."""
    return notes.get(OFFLINE) or {}


def weighed(facts: Sequence[Fact], notes: Mapping[str, Any]) -> list[Weighed]:
    """The facts with what the engine weighed of each (nothing for an LLM's facts)."""
    by_key = offline_notes(notes).get("facts", {})
    seen: dict[str, int] = {}
    out = []
    for f in facts:
        key = f.key
        nth = seen[key] = seen.get(key, -1) + 1  # the nth fact of this key in the session
        found = by_key.get(key) or [{}]
        out.append(Weighed(f.text, f.source, f.score, f.step, f.form, **found[min(nth, len(found) - 1)]))
    return out


def with_facts(notes: Mapping[str, Any], facts: Sequence[Weighed], idf: tuple[dict[str, float], list[int]]) -> dict:
    """The engine's notes once an analysis has weighed `facts` and known the KB's word rarity `idf`."""
    own = offline_notes(notes)
    found: dict[str, list[dict[str, Any]]] = {}
    for f in facts:
        found.setdefault(f.key, []).append(f.note())
    by_key = {**own.get("facts", {}), **found}
    term_idf, steps = idf
    return {OFFLINE: {**own, "facts": by_key, "term_idf": term_idf, "idf_steps": steps}}


def kb_idf(
    notes: Mapping[str, Any], history: Sequence[HistoryEntry], term_idf: Callable[[str], dict[str, float]] | None
) -> tuple[dict[str, float], list[int]]:
    """How rare in the KB the words of every KB search so far are (word -> IDF), and the steps
    counted: the notes' own, plus those of KB steps not counted yet, asked of the KB now (the KB's
    numbers then are those of the search: nothing is written to it between a search and its
    analysis). A later search's numbers replace an earlier one's for a word they share."""
    own = offline_notes(notes)
    idf, steps = dict(own.get("term_idf", {})), list(own.get("idf_steps", []))
    if term_idf is None:
        return idf, steps
    for h in history:
        # a search that ran ("retrieval_confidence" is recorded when the KB answered, hits or none)
        if h.get("action") == SEARCH_KB and "retrieval_confidence" in h and h.get("step") not in steps:
            idf = {**idf, **term_idf(h.get("query_or_url", ""))}
            steps.append(h.get("step", 0))
    return idf, steps


NOTE_FIELDS = ("qcov", "retrieval", "prior", "follow_up", "sem")


def noted(shared: Shared) -> tuple[list[dict], dict[str, float]]:
    """A session's facts as JSON, each with the engine's notes on it, and the KB's word rarity: what
    the benches dump for bench/calibrate.py (which reads a fact back with `from_noted`)."""
    notes = shared.get("engine_notes", {})
    facts = weighed(shared.get("extracted_information", []), notes)
    return [_as_saved_before(f) for f in facts], dict(offline_notes(notes).get("term_idf", {}))


def _as_saved_before(f: Weighed) -> dict:
    """A fact and its notes as one object, as sessions saved facts before the notes were the engine's."""
    data: dict[str, object] = {"text": f.text, "source": f.source, "score": f.score, "step": f.step}
    optional = {"qcov": f.qcov, "form": f.form or None, "retrieval": f.retrieval, "sem": f.sem}
    data |= {k: v for k, v in optional.items() if v is not None}
    return data | {k: v for k, v in (("prior", f.prior), ("follow_up", f.follow_up)) if v}


def from_noted(data: dict) -> Weighed:
    f = Fact.from_json(data)
    return Weighed(f.text, f.source, f.score, f.step, f.form, **{k: data[k] for k in NOTE_FIELDS if k in data})
