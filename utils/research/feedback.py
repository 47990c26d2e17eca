"""What feedback says, with one owner: which sources it rejects (and the numbers it names that no
source was shown as), and what it asks to look for. Feedback steers the research: a clause that
rejects a source ("the second source is irrelevant") only drops that source, and the words of the
other clauses, less those about the research itself ("look for", "please"), are what to look for.
Feedback is never searched as it was typed, and never stored as knowledge."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..text import content_terms
from .numbering import to_session

# Words that say something about the research itself rather than its subject (feedback).
META_WORDS = frozenset(
    """source sources outdated wrong incorrect unreliable old stale please look check more detail details
    second third fourth fifth first last answer answers again better ignore remove drop instead also into
    focus find search want need like think seems seem looks information info result results link links page pages
    thanks thank good bad ok okay irrelevant unrelated relevant useless see also not don't dont should could would
    instead rather try use using""".split()
)
_ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
}
_NEGATIVE = (
    "outdated",
    "wrong",
    "incorrect",
    "unreliable",
    "ignore",
    "remove",
    "drop",
    "stale",
    "old",
    "biased",
    "not trustworthy",
    "untrustworthy",
    "spam",
    "irrelevant",
)


_NUMBERS = re.compile(r"\[(\d+)\]|source\s*#?\s*(\d+)")
_CLAUSES = re.compile(r"[,;.!?()]+|\s(?:and|but|then|also)\s", re.IGNORECASE)


def _rejects(clause: str) -> bool:
    low = clause.lower()
    return any(re.search(rf"\b{w}\b", low) for w in _NEGATIVE)


def _named_numbers(low: str) -> set[int]:
    nums = {int(g) for groups in _NUMBERS.findall(low) for g in groups if g}
    return nums | {n for w, n in _ORDINALS.items() if re.search(rf"\b{w}\s+(?:source|link|result|reference)", low)}


def rejected_sources(text: str, order: Sequence[int]) -> list[int]:
    """Session numbers of the sources the feedback rejects, e.g. 'the second source is outdated' or
    'ignore [3]', numbered as the report read showed them: order[i] is the one shown as [i+1]."""
    low = text.lower()
    if not _rejects(low):
        return []
    return to_session(_named_numbers(low), order)  # a number no source was shown as: missing_sources


def missing_sources(text: str, order: Sequence[int]) -> list[int]:
    """The source numbers the feedback names that no source of the report was shown as ('ignore [40]'
    when there are 12), so that the user is told rather than ignored."""
    return sorted(n for n in _named_numbers(text.lower()) if not 1 <= n <= len(order))


def look_for(text: str) -> str:
    """What the feedback asks to look for: its clauses that reject no source, joined ("the second
    source is irrelevant, look for the default value" -> "look for the default value")."""
    return " ".join(c.strip() for c in _CLAUSES.split(text) if c.strip() and not _rejects(c))


def missing_note(missing: Sequence[int], order: Sequence[int]) -> str:
    """One line for the numbers feedback named that the report did not show."""
    names = ", ".join(f"[{n}]" for n in missing)
    have = f"[1] to [{len(order)}]" if order else "none"
    return f"feedback names {names}, but the report has no such source (its sources are {have}); nothing dropped for it"


def engine_text(record: Mapping[str, Any]) -> str:
    """Feedback as the engine reads it. The engine numbers sources as the session does, so the ones
    it rejected by the report's numbers are named by their session numbers too (words that add no
    search term)."""
    rejected = record.get("rejected") or []
    return record["text"] + (f" (that is, source {', '.join(f'[{n}]' for n in rejected)})" if rejected else "")


def feedback_terms(feedback: list[str]) -> list[str]:
    """The subject words of feedback: what its clauses that reject nothing ask for, without the words
    about the research itself. Searched beside the question; never the feedback as typed."""
    out: list[str] = []
    for text in feedback:
        for t in content_terms(look_for(text)):
            if t not in META_WORDS and t not in _NEGATIVE and not t.isdigit() and t not in out:
                out.append(t)
    return out
