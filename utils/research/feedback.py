"""What feedback says, with one owner: which sources it rejects, and which of its words are about
the subject rather than about the research itself."""

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
    thanks thank good bad ok okay""".split()
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


def rejected_sources(text: str, order: Sequence[int]) -> list[int]:
    """Session numbers of the sources the feedback rejects, e.g. 'the second source is outdated' or
    'ignore [3]', numbered as the report read showed them: order[i] is the one shown as [i+1]."""
    low = text.lower()
    if not any(w in low for w in _NEGATIVE):
        return []
    nums = {int(g) for groups in re.findall(r"\[(\d+)\]|source\s*#?\s*(\d+)", low) for g in groups if g}
    nums |= {n for w, n in _ORDINALS.items() if re.search(rf"\b{w}\s+(?:source|link|result|reference)", low)}
    return to_session(nums, order)  # a number no source was shown as is ignored


def engine_text(record: Mapping[str, Any]) -> str:
    """Feedback as the engine reads it. The engine numbers sources as the session does, so the ones
    it rejected by the report's numbers are named by their session numbers too (words that add no
    search term)."""
    rejected = record.get("rejected") or []
    return record["text"] + (f" (that is, source {', '.join(f'[{n}]' for n in rejected)})" if rejected else "")


def feedback_terms(feedback: list[str]) -> list[str]:
    out: list[str] = []
    for text in feedback:
        for t in content_terms(text):
            if t not in META_WORDS and not t.isdigit() and t not in out:
                out.append(t)
    return out
