"""What the offline analyzer reads: a question's weighted terms and wanted value, and a document's
sentences with the context that says what each one is about.

A sentence in documentation rarely repeats its subject: "The default value is twenty million
bytes." sits under an option's entry ("--freelist-vol=<number> [default: 20000000]"), in a
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
from ..text import STOPWORDS, content_terms, fold, paragraphs, split_sentences, stem, term_set, without_marker
from .notes import Weighed
from .tuning import OFFLINE as T

_CAPS = re.compile(r"\b[A-Z][\w]+")
COMMON_CAPS = frozenset(  # capitalised at a sentence's start, not because they are names
    """the a an in on at he she it they this that these those his her its their there here when where none
    what which who how after before during while although however but and or if as by for from with
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()
)

# What a question asks for, and what a sentence that gives it holds. English question wording,
# not any one document set's: "unless I set one" and "out of the box" ask for a default.
# A question may ask for a default without the word: the clause that says so ("unless I change it",
# up to the next comma or the question's end) names no subject, so its words are not weighed as the
# question's; the word "default" is, as documentation states one with it.
_DEFAULT_CLAUSE = re.compile(
    r"\b(?:unless (?:i|you|we|it)\b|if (?:i|you|we) (?:don'?t|do not|never)\b|out of the box|otherwise|"
    r"when (?:not|no) \w+ (?:is )?(?:set|given|specified)|if (?:not|none) (?:set|given))[^,;?]*",
    re.I,
)
# "The longest line the editor can handle", "the most entries I can keep": a limit (what a thing can take),
# which documentation states as a maximum (or minimum). "The largest city" is not one.
_SUPERLATIVE = re.compile(
    r"\bthe (largest|longest|biggest|highest|greatest|smallest|shortest|lowest|fewest|most|least) "
    r"(?!(?:common|recent|popular|important|used|likely|useful|efficient|\w+ly)\b)\w+[^?.]*?"
    r"\b(?:can|could|will|may|accepts?|allows?|supports?|handles?|takes?)\b",
    re.I,
)
# "How long can a name be", "how large can headers get": the size a thing can take, a limit too.
_HOW_CAN = re.compile(
    r"\bhow (long|large|big|high|deep|wide|small|short|low) (?:can|could) [^?.,]*?\b(?:be|get|grow)\b", re.I
)
# "How long can a name be": the maximum length ("the longest delay" is not a length: only "how ... can")
_DIMENSION = {
    "long": "length",
    "short": "length",
    "large": "size",
    "big": "size",
    "small": "size",
    "high": "height",
    "low": "height",
    "deep": "depth",
    "wide": "width",
}
_LEAST = {"smallest", "shortest", "lowest", "fewest", "least", "small", "short", "low"}
_ASKS = [
    ("default", re.compile(rf"\b(?:defaults?|by default)\b|{_DEFAULT_CLAUSE.pattern}", re.I)),
    (
        "version",
        re.compile(
            r"\b(which|what|in which|since which|from which) (?:[\w.+\-]+ ){0,2}(?:version|release)s?\b|"
            r"\bsince when\b|\bwhen (?:was|were|did|is|does) .{0,80}\b(?:added|introduced|deprecated|removed|"
            r"changed|dropped|renamed|first (?:supported|available|appeared))\b",
            re.I,
        ),
    ),
    (
        "year",
        re.compile(
            r"\b(when (?:was|were|did|is|does)|(?:what|which) (?:years?|decade|date|day)|what time period|released)\b",
            re.I,
        ),
    ),
    (
        "number",
        re.compile(
            r"\b(how (?:many|much|long|large|big|far|old|tall|high|deep|often|fast|slow|small)|population|"
            r"number of|maximum|minimum|max(?:imum)? (?:size|length|number)|limit|at what point|up to what|"
            rf"{_SUPERLATIVE.pattern[2:]}|"
            r"what (?:temperature|size|percentage|speed|rate|age|height|length|width|weight|amount|port|limit))\b",
            re.I,
        ),
    ),
    (
        "code",
        re.compile(
            r"\b(which|what) (?:(?!(?:does|do|did|can|could|should|would|will)\b)\w+ ){0,2}"
            r"(?:option|flag|switch|command|function|method|setting|variable|parameter|"
            r"key|keyword|argument|property|event|module|class|macro|directive|tool|mode|format|file)s?\b|"
            r"\bhow (?:do|can|would|should) (?:i|you|we)\b",
            re.I,
        ),
    ),
]
_YEAR = re.compile(r"\b(1[5-9][0-9]{2}|20[0-9]{2})\b")
_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2},? \d{4}\b|"
    r"\b\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{4}\b",
    re.I,
)
_RELEASE = re.compile(r"\bv\d+\.\d+(?:\.\d+)*\b")
_VERSION = re.compile(r"\b[vV]?\d+\.\d+(?:\.\d+)*\b|\b(?:version|release|v)\s?\d+\b")
# A figure, with its unit if it has one; a short unit runs on ("30s", "1min", "200ms", "4k").
_NUMBER = re.compile(
    r"\b\d[\d,.]*\s*(?:[kmgt]i?b|bytes?|kb|mb|gb|%|percent|seconds?|ms|minutes?|hours?|days?|times|characters?|"
    r"(?<=\d)(?:s|sec|min|h|d|us|ns|[kmgt])|"
    r"chars?|lines?|entries|items|rows|columns|bits?)?\b|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|twenty|thirty|forty|fifty|sixty|hundred|thousand|million|billion)\b",
    re.I,
)
_DEFAULT = re.compile(r"\bdefaults?\b|\bby default\b|\[default:", re.I)
_CODE = re.compile(
    r"(?:^|[\s\"'(])--?[a-zA-Z][\w\-]*(?:=\S*)?|\b\w+(?:\.\w+)*\(\)|`[^`]+`|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w*\b|"
    r"(?:^|\s):[a-z]\w*"
)
_HEADING_END = re.compile(r"[.!?:;,]$")


_PARTS = re.compile(
    r",\s+and\s+(?=(?:which|what|how|when|where|who|whom|whose|why|does|do|did|is|are|was|were|can|could|"
    r"should|will|would)\b)",
    re.I,
)


def question_parts(question: str) -> list[str]:
    """The questions a two-part question asks ("Which port does it listen on by default, and which
    variable changes it?": two), each to search for on its own; [] for a question of one part."""
    parts = [p.strip(" ?") for p in _PARTS.split(question)]
    return parts if len(parts) > 1 and all(len(content_terms(p)) >= 2 for p in parts) else []


def code_names(question: str) -> list[str]:
    """The names in code a question asks about ("--env-file", "fs.watch()", "max_connections"), as
    documentation writes them: an option without its value, a call without its brackets."""
    out = []
    for m in _CODE.finditer(question):
        name = m.group(0).strip().strip("`").split("=")[0].removesuffix("()")
        if len(name) > 2 and not name.startswith(":"):  # ":set": an editor command's name is a common word
            out.append(name)
    return out


def limit_word(question: str) -> str:
    """The words documentation states a limit with ("maximum", or "minimum"), for a question that asks
    for one with a superlative ("the longest line the editor can handle") or with "how long can ... be"
    ("maximum length": the size asked about is named too); else ""."""
    limit = _SUPERLATIVE.search(question) or _HOW_CAN.search(question)
    if not limit or asks_for(question) not in ("number", "default"):
        return ""
    word = "minimum" if limit.group(1).lower() in _LEAST else "maximum"
    size = _DIMENSION.get(limit.group(1).lower()) if limit.re is _HOW_CAN else None
    return f"{word} {size}" if size else word


def asks_for(question: str) -> str | None:
    """The kind of value a question asks for ("default", "version", "year", "number", "code"), if any."""
    for kind, pattern in _ASKS:
        if pattern.search(question):
            return kind
    return None


def holds(kind: str | None, text: str, question: str = "") -> bool:
    """Whether `text` holds a value of that kind that the question does not already state."""
    if not kind:
        return False
    q = fold(question)
    if kind == "default":
        return bool(_DEFAULT.search(text)) and _has_value(text, q)
    if kind == "version":  # a version number, or the date of a release
        return any(fold(m.group(0)) not in q for m in (*_VERSION.finditer(text), *_DATE.finditer(text)))
    if kind == "year":  # a date, a year, or the release a thing came with ("added: v17.0.0")
        return any(
            fold(m.group(0)) not in q for m in (*_DATE.finditer(text), *_YEAR.finditer(text), *_RELEASE.finditer(text))
        )
    if kind == "number":  # a figure: a name in code is not an amount
        return _has_value(text, q, _NUMBER)
    if kind == "code":
        return any(fold(m.group(0).strip()) not in q for m in _CODE.finditer(text))
    return False


def _has_value(text: str, q: str, *kinds: re.Pattern) -> bool:
    for m in (x for kind in kinds or (_NUMBER, _CODE) for x in kind.finditer(text)):
        v = fold(m.group(0).strip())
        if v and v not in q and not _YEAR.fullmatch(v):
            return True
    return False


# A short form a document defines: "{lhs} means left-hand-side", "WAL stands for write-ahead log",
# "Write-Ahead Logging (WAL)". A passage that writes the short form says what the long one does.
_MEANS = re.compile(
    r"(?:^|[.:;]\s+)[{<`'\"]?([A-Za-z][\w-]{0,11})[}>`'\"]?\s+"
    r"(?:means|stands for|is short for|is an abbreviation (?:for|of))\s+"
    r"(?:the\s+)?[\"'`]?([A-Za-z][\w -]{2,40}?)(?=[\"'`]?(?:[.,;:)]|\s*$))"
)
_SPELLED = re.compile(r"\b([A-Za-z][\w-]+(?:\s+[A-Za-z][\w-]+){1,4})\s+\(([A-Z][A-Z0-9]{1,7})s?\)")


def short_forms(texts: list[str], weights: dict[str, float]) -> dict[str, set[str]]:
    """Short forms the texts define whose long form holds words of the question (weights) that the
    short one does not: folded token -> the long form's terms."""
    found: dict[str, set[str]] = {}
    for text in texts:
        # "{lhs} means ...", "WAL stands for ...": a short form is marked or in capitals ("This means" is not one)
        pairs = [
            (m.group(1), m.group(2))
            for m in _MEANS.finditer(text)
            if (m.start(1) and text[m.start(1) - 1] in "{<`'\"") or (m.group(1).isupper() and len(m.group(1)) > 1)
        ]
        for long, short in _SPELLED.findall(text):
            words = [w for w in re.split(r"[\s-]+", long) if w]
            n = len(short)  # "Write-Ahead Logging (WAL)": the last words whose initials spell it
            if len(words) >= n and "".join(w[0] for w in words[-n:]).lower() == short.lower():
                pairs.append((short, " ".join(words[-n:])))
        for short, long in pairs:
            key = fold(short)
            terms = term_set(long) - term_set(short)
            if key not in STOPWORDS and key not in weights and stem(key) not in weights and terms & set(weights):
                found.setdefault(key, set()).update(terms)
    return found


def with_short_forms(text: str, forms: dict[str, set[str]]) -> set[str]:
    """A text's terms with the long forms of the short forms (short_forms) it writes."""
    out = term_set(text)
    for tok in set(re.findall(r"[A-Za-z][\w-]*", text)):
        out |= forms.get(fold(tok), set())
    return out


def coverage(terms: set[str], weights: dict[str, float]) -> float:
    """The weighted share of the question's terms that `terms` holds (0..1)."""
    total = sum(weights.values())
    return sum(v for k, v in weights.items() if k in terms) / total if total else 0.0


def question_weights(query: str, extra: Sequence[str] = (), idf: dict[str, float] | None = None) -> dict[str, float]:
    """Stemmed question terms -> weight: names and numbers weigh more, feedback terms less, and (with
    the knowledge base's IDF) a word common to the whole collection less than a rare one."""
    w: dict[str, float] = {}
    caps = {stem(fold(m)) for m in _CAPS.findall(query)} - {stem(s) for s in COMMON_CAPS}
    if not _DEFAULT.search(query) and _DEFAULT_CLAUSE.search(query):
        query = _DEFAULT_CLAUSE.sub(" ", query) + " default"
    for t in content_terms(query):
        s = stem(t)
        w[s] = T.NAME_WEIGHT if (s in caps or t.isdigit()) else 1.0
    for implied in limit_word(query).split():  # implied, not said: it weighs less than the question's own words
        w.setdefault(stem(implied), T.LIMIT_WORD_WEIGHT)
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


_ITEM_MARK = re.compile(r"^(?:[|*•+]|-(?=\s|$))")  # a table row or a list item; "--all", "-F format" are terms


def _is_heading(para: str) -> bool:
    words = para.split()
    return 0 < len(words) <= T.HEADING_MAX_WORDS and not _HEADING_END.search(para) and not _ITEM_MARK.match(para)


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
                out.append(Passage(s, len(out), own, ctx, code, heading, "" if code else before, item=item, then=then))
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


_ENUMERATION = re.compile(r"^(?:[A-Z]|\d+)(?:\.\d+)*\.\s+(?=\S)")  # "8.2.12. ", "E.2. ", "1. "


def plain_heading(line: str) -> str:
    """A heading-like line without the rules that underline it ("Release 3.18.0 ~~~~~~~"), the
    marks that make it one ("## fs.rm(path)") or its section number ("8.2.12. Resource
    Requirements": the number places the section, it is not a figure the section gives)."""
    return _ENUMERATION.sub("", _UNDERLINE.sub(" ", line).strip().lstrip("#").strip())


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
