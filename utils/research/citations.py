"""Verified citations: every `[n]` in an answer is checked against the stored text of source n.

Pure functions, no I/O. The answer is cut into cited claims (the text a citation marker closes,
within its sentence); each claim is checked against the text Sleuth kept of every source it cites
(the source's `excerpt`, title and snippet; for sessions saved before excerpts existed, the facts
taken from that source). A citation is supported when the source contains every number and every
name of the claim and most of its other content words. Each `[n]` gets a verdict and the short
quote of the source that best supports the claim; an unsupported one is shown as `[n?]`.

The policy for LLM engines lives here too (`verified_report`): a report with unsupported or
impossible citations is written once more with the problems quoted, then flagged.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from ..text import STOPWORDS, content_terms, split_sentences, stem, tokenize, without_marker
from .loopdata import Fact, Source

EXCERPT_CHARS = 6000  # text kept per source from one tool result (what an LLM analyzer is shown)
EXCERPT_MAX = 9000  # per source in all, with the extracted sentences appended beyond the first window
QUOTE_CHARS = 180
MIN_COVERAGE = 0.5  # share of a claim's other content words the source must contain
PARTIAL_COVERAGE = 0.3  # one of several sources cited together must carry at least this much

_MARKER = re.compile(r"\[(\d{1,3})\]")
_GROUP = re.compile(r"(?:\s*\[\d{1,3}\])+")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_MARKUP = re.compile(r"[*_`#>|]+")
# Capitalised words that are not names when they open a sentence or stand alone.
_NOT_NAMES = frozenset(
    """the a an in on at he she it they this that these those his her its their there here when where
    what which who how after before during while although however but and or if as by for from with
    yes no both neither none not according also then thus so""".split()
)


# ---------------------------------------------------------------- source text


def merge_excerpt(old: str, new: str, limit: int = EXCERPT_MAX) -> str:
    """`old` with the part of `new` it does not already hold appended, within `limit` characters."""
    old, new = old or "", (new or "").strip()
    if not new or new in old:
        return old
    room = limit - len(old) - (3 if old else 0)
    if room < 40:
        return old
    return f"{old}\n…\n{new[:room]}" if old else new[:room]


def source_text(source: Source, facts: Sequence[Fact] = ()) -> str:
    """What Sleuth kept of a source: title, snippet and excerpt; facts only when no excerpt was
    kept (sessions saved before excerpts existed)."""
    parts = [source.title or "", source.snippet or "", source.excerpt or ""]
    if not source.excerpt:
        parts += [f.text for f in facts if f.source == source.n]
    return "\n\n".join(p for p in parts if p)


# ---------------------------------------------------------------- claims


@dataclass
class Claim:
    text: str  # the words the marker group closes (markup removed)
    markers: list[tuple[int, int, int]]  # (n, start, end) of each [n] in the answer


def _norm(text: str) -> str:
    """Both sides alike: no thousands separators, underscores as spaces, accents dropped (case kept)."""
    text = unicodedata.normalize("NFKD", _THOUSANDS.sub("", text).replace("_", " "))
    return "".join(c for c in text if not unicodedata.combining(c))


def cited_claims(answer: str) -> list[Claim]:
    """Each run of citation markers with the claim it closes: the text since the previous marker
    run, within the sentence the run ends (a run right after a full stop closes that sentence)."""
    claims: list[Claim] = []
    prev_end = 0
    for g in _GROUP.finditer(answer):
        segment = answer[prev_end : g.start()]
        sents = split_sentences(_MARKUP.sub(" ", segment))
        text = sents[-1] if sents else ""
        if len(content_terms(text)) < 2 and len(sents) > 1:
            text = " ".join(sents[-2:])
        markers = [(int(m.group(1)), g.start() + m.start(), g.start() + m.end()) for m in _MARKER.finditer(g.group(0))]
        claims.append(Claim(text=text.strip(" .;:,-"), markers=markers))
        prev_end = g.end()
    return claims


def _names_and_numbers(claim: str) -> tuple[set[str], set[str]]:
    names, numbers = set(), set()
    for sent in split_sentences(_norm(claim)) or [claim]:
        for i, m in enumerate(re.finditer(r"\w[\w'’]*", sent)):
            w = m.group(0)
            for tok in tokenize(w):
                if any(c.isdigit() for c in tok):
                    numbers.add(tok)
                elif i > 0 and w[0].isupper() and tok not in STOPWORDS and tok not in _NOT_NAMES and len(tok) > 1:
                    names.add(tok)  # a sentence's first word counts as an ordinary word
    return names, numbers


# ---------------------------------------------------------------- verdicts


@dataclass
class _Text:
    raw: set[str]
    stems: set[str]
    sentences: list[str]


def _index(source: Source, facts: Sequence[Fact]) -> _Text:
    text = source_text(source, facts)
    toks = tokenize(_norm(text))
    body = text[len(source.title or "") :] if text.startswith(source.title or "\0") else text
    return _Text(set(toks), {stem(t) for t in toks}, split_sentences(body))


@dataclass
class Score:
    coverage: float  # of the claim's other content words
    names_missing: list[str]
    numbers_missing: list[str]
    share: float  # of all the claim's names, numbers and words

    @property
    def ok(self) -> bool:
        return not self.names_missing and not self.numbers_missing and self.coverage >= MIN_COVERAGE


def _score(claim: str, texts: list[_Text]) -> Score:
    names, numbers = _names_and_numbers(claim)
    raw = set().union(*(t.raw for t in texts)) if texts else set()
    stems = set().union(*(t.stems for t in texts)) if texts else set()
    other = {stem(t) for t in content_terms(_norm(claim)) if t not in _NOT_NAMES} - {stem(n) for n in names | numbers}
    cov = sum(1 for t in other if t in stems) / len(other) if other else 1.0
    names_missing = sorted(n for n in names if n not in raw and stem(n) not in stems)
    numbers_missing = sorted(n for n in numbers if n not in raw)
    items = len(names) + len(numbers) + len(other)
    found = sum(1 for t in other if t in stems) + len(names) + len(numbers) - len(names_missing) - len(numbers_missing)
    return Score(cov, names_missing, numbers_missing, found / items if items else 1.0)


def _quote(claim: str, text: _Text) -> str:
    want = {stem(t) for t in content_terms(_norm(claim))}
    best, best_s = "", 0.0
    for sent in text.sentences:
        got = {stem(t) for t in content_terms(_norm(sent))}
        s = len(want & got) - 0.001 * len(got)
        if s > best_s:
            best, best_s = sent, s
    best = without_marker(" ".join(best.split()))
    return best if len(best) <= QUOTE_CHARS else best[: QUOTE_CHARS - 1].rsplit(" ", 1)[0] + "…"


@dataclass
class Check:
    n: int
    claim: str
    supported: bool
    impossible: bool = False  # the number names no source
    quote: str = ""  # the source's sentence that best supports the claim
    reason: str = ""  # why it is not supported
    start: int = 0  # position of the marker in the answer
    end: int = 0


@dataclass
class Verification:
    checks: list[Check] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.checks)

    @property
    def supported(self) -> int:
        return sum(c.supported for c in self.checks)

    @property
    def problems(self) -> list[Check]:
        return [c for c in self.checks if not c.supported]

    def counts(self) -> dict:
        return {"total": self.total, "supported": self.supported, "unsupported": self.total - self.supported}


def verify(answer: str, sources: Sequence[Source], facts: Sequence[Fact] = ()) -> Verification:
    """A verdict for every [n] in `answer` against the stored text of source n."""
    by_n = {s.n: s for s in sources}
    cache: dict[int, _Text] = {}

    def text(n: int) -> _Text:
        if n not in cache:
            cache[n] = _index(by_n[n], facts)
        return cache[n]

    out = Verification()
    for claim in cited_claims(answer or ""):
        known = [n for n, _, _ in claim.markers if n in by_n]
        together = _score(claim.text, [text(n) for n in dict.fromkeys(known)])
        for n, start, end in claim.markers:
            if n not in by_n:
                out.checks.append(
                    Check(n, claim.text, False, True, reason=f"there is no source [{n}]", start=start, end=end)
                )
                continue
            alone = _score(claim.text, [text(n)])
            ok = alone.ok or (together.ok and len(known) > 1 and alone.share >= PARTIAL_COVERAGE)
            reason = ""
            if not ok:
                why = []
                if alone.names_missing:
                    why.append("names " + ", ".join(alone.names_missing[:4]))
                if alone.numbers_missing:
                    why.append("numbers " + ", ".join(alone.numbers_missing[:4]))
                if alone.coverage < MIN_COVERAGE:
                    why.append(f"most of its words ({alone.coverage:.0%} found)")
                reason = f"source [{n}] does not contain " + "; ".join(why)
            out.checks.append(Check(n, claim.text, ok, False, _quote(claim.text, text(n)), reason, start, end))
    return out


def flag(answer: str, v: Verification) -> str:
    """The answer with every unsupported or impossible [n] shown as [n?]."""
    out, pos = [], 0
    for c in sorted(v.problems, key=lambda c: c.start):
        out += [answer[pos : c.start], f"[{c.n}?]"]
        pos = c.end
    return "".join(out) + answer[pos:]


def problems_text(v: Verification, limit: int = 8) -> str:
    """The problems, quoted, for the engine writing the report again."""
    lines = []
    for c in v.problems[:limit]:
        claim = c.claim if len(c.claim) <= 200 else c.claim[:197] + "..."
        lines.append(f'- "{claim}" [{c.n}]: {c.reason}')
    return "\n".join(lines)


def summary(v: Verification, regenerated: bool = False) -> dict:
    """What the shared store keeps: the counts, and per citation its verdict and quote."""
    return {
        **v.counts(),
        "regenerated": regenerated,
        "checks": [
            {"n": c.n, "supported": c.supported, "quote": c.quote, "claim": c.claim[:300], "reason": c.reason}
            for c in v.checks
        ],
    }


# ---------------------------------------------------------------- the policy


class _HasText(Protocol):
    @property
    def text(self) -> str: ...


class Written(Protocol):
    """A report an engine wrote (engine/protocol.py: EngineResult[Answer])."""

    @property
    def data(self) -> _HasText: ...

    @property
    def engine(self) -> str: ...


W = TypeVar("W", bound=Written)


@dataclass
class VerifiedReport(Generic[W]):
    answer: str  # flagged: unsupported citations shown as [n?]
    verification: Verification
    results: list[W]  # every report written (one, or two when the report was written again)

    @property
    def regenerated(self) -> bool:
        return len(self.results) > 1


def verified_report(
    write: Callable[[str, bool], W], sources: Sequence[Source], facts: Sequence[Fact]
) -> VerifiedReport[W]:
    """Write the report with `write(citation_problems, first)`, verify its citations against the
    sources, and when an LLM (not the extractive offline engine) wrote it with problems, write it once
    more with the problems quoted; whatever is still unsupported is flagged."""
    result = write("", True)
    results = [result]
    answer = result.data.text
    v = verify(answer, sources, facts)
    if v.problems and result.engine != "offline":
        result = write(problems_text(v), False)
        results.append(result)
        answer = result.data.text
        v = verify(answer, sources, facts)
    return VerifiedReport(flag(answer, v), v, results)
