"""What kind of value a question asks for, and what a passage holds: a figure, a year, a version,
a name in code, a capitalised name. The one owner of these shapes for the offline engine
(passages.py, select.py, offline.py) and the trained reader's features (reader.py).

The shapes are written as characters, not words: a figure is digits, a version is dotted digits, a
name in code is an option's dashes, a call's brackets, an identifier's underscore or inner capital, a
literal is one word in double quotes.
The words a question names a kind of value with are in lexicon.VALUE_WORDS.
"""

from __future__ import annotations

import re

from ..text import STOPWORDS, fold, tokenize
from .lexicon import (
    AUXILIARIES,
    DEFAULT_CLAUSES,
    DIMENSIONS,
    NUMBER_WORDS,
    PERSONS,
    QUESTION_KINDS,
    SUPERLATIVES,
    VALUE_WORDS,
)

FIGURE = re.compile(r"\b\d[\d,.]*\w*")  # "25000000", "1,024", "30s", "4.5"
YEAR = re.compile(r"\b(?:1[5-9]\d\d|20\d\d)\b")
VERSION = re.compile(r"\b[vV]?\d+\.\d+(?:\.\d+)*\b")  # "3.11", "v4.2.1"
CODE = re.compile(
    r"(?:^|[\s\"'(])--?[a-zA-Z][\w\-]*(?:=\S*)?|\b\w+(?:\.\w+)*\(\)|`[^`]+`|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w*\b"
)
QUOTED = re.compile(r"[\"“][^\"“”\s]{1,40}[\"”]")  # a literal value in double quotes: "utf-8", “auto”
CAPITALISED = re.compile(r"(?<![\w'’.-])[A-Z][\w'’\-]*")

_MEASURES = {"how_many", "how_measure"}
_DEFAULT_WORDS = dict(VALUE_WORDS)["default"]


def question_kind(question: str) -> str:
    """What kind of question this is, by its opening words (lexicon.QUESTION_KINDS), or "other"; "how"
    and a word that is not a function word ("how long", "how fast") asks for a measure."""
    toks = tokenize(question)
    for i in range(min(4, len(toks))):
        for kind, openers in QUESTION_KINDS:
            for op in openers:
                words = op.split()
                if toks[i : i + len(words)] == words and (kind != "yesno" or i == 0):
                    if kind == "how" and toks[i + 1 : i + 2] and toks[i + 1] not in STOPWORDS | PERSONS:
                        return "how_measure"  # "how long", "how often": a measure, not a manner
                    return kind
    return "other"


def asks_for(question: str) -> str | None:
    """The kind of value a question asks for ("default", "when", "number", "code"), if any: a default
    when it says so or has a default clause (lexicon.DEFAULT_CLAUSES); else the first kind whose word it
    uses (lexicon.VALUE_WORDS: a kind of thing to name after "which"/"what"); else by how it opens: a
    measure or a limit, a date, or how to do a thing oneself."""
    toks = tokenize(question)
    words = set(toks)
    if words & _DEFAULT_WORDS or default_clause(toks) is not None:
        return "default"
    for kind, names in VALUE_WORDS[1:]:
        hits = [i for i, t in enumerate(toks) if t in names or t.removesuffix("s") in names]  # "which tools"
        if hits and (kind != "code" or any(_after_which(toks, i) for i in hits)):
            return kind
    opening = question_kind(question)
    if opening in _MEASURES or limit_word(question):
        return "number"
    if toks[:1] == ["how"] and toks[1:2] and toks[1] in AUXILIARIES and toks[2:3] and toks[2] in PERSONS:
        return "code"  # "how do I ...": a command or an option does it
    return "when" if opening == "when" else None


def _after_which(toks: list[str], i: int) -> bool:
    """Whether the word at `i` is what "which"/"what" asks for: at most two words after it ("which
    two options", not "what does the option do")."""
    return any(toks[j] in ("which", "what") for j in range(max(0, i - 3), i)) and not any(
        t in AUXILIARIES for t in toks[max(0, i - 3) : i]
    )


def default_clause(toks: list[str]) -> int | None:
    """Where a default clause (lexicon.DEFAULT_CLAUSES) starts among a question's tokens, or None."""
    text = " " + " ".join(toks) + " "
    for clause in DEFAULT_CLAUSES:
        at = text.find(f" {clause} ")
        if at != -1:
            return text[:at].count(" ")
    return None


def clause_words(question: str) -> set[str]:
    """The words of a question's default clause from its opening word to the next comma ("unless I pick
    one", "out of the box"): they say when, not what the question is about."""
    out: set[str] = set()
    for part in question.split(","):
        toks = tokenize(part)
        start = default_clause(toks)
        if start is not None:
            out |= set(toks[start:])
    return out


def limit_word(question: str) -> str:
    """The words documentation states a limit with, for a question that asks for one with a
    superlative and "can" ("the longest name it can take": "maximum length") or as "how long can ...
    be" (lexicon.SUPERLATIVES, DIMENSIONS); else ""."""
    toks = tokenize(question)
    for i, t in enumerate(toks):
        if t in SUPERLATIVES and {"can", "could"} & set(toks[i + 1 :]):
            return SUPERLATIVES[t]
        if t == "how" and toks[i + 1 : i + 2] and toks[i + 1] in DIMENSIONS and toks[i + 2 : i + 3] == ["can"]:
            return DIMENSIONS[toks[i + 1]]
    return ""


def holds(kind: str | None, text: str, question: str = "") -> bool:
    """Whether `text` holds a value of that kind that the question does not already state."""
    if not kind:
        return False
    q = fold(question)

    def new(pattern: re.Pattern) -> bool:
        return any(fold(m.group(0).strip().strip('"“”')) not in q for m in pattern.finditer(text))

    if kind == "default":  # a default is stated with the word, and a value: a figure, code or a quoted literal
        return not _DEFAULT_WORDS.isdisjoint(tokenize(text)) and (figure(text, q) or new(CODE) or new(QUOTED))
    if kind == "when":
        return new(VERSION) or new(YEAR)
    if kind == "number":
        return figure(text, q)
    return new(CODE)


def figure(text: str, q: str = "") -> bool:
    """Whether a text states a figure (in digits, not a year, or in words) that `q` does not."""
    if any(not YEAR.fullmatch(m.group(0)) and fold(m.group(0)) not in q for m in FIGURE.finditer(text)):
        return True
    return any(t in NUMBER_WORDS and t not in q.split() for t in tokenize(text))


def code_share(text: str) -> float:
    """How much of a text is names in code (options, calls, identifiers, `quoted code`), 0..1."""
    return min(1.0, sum(len(m.group(0).strip()) for m in CODE.finditer(text)) / max(1, len(text)))


def code_names(question: str) -> list[str]:
    """The names in code a question asks about ("--dry-run", "os.walk()", "max_depth"), as
    documentation writes them: an option without its value, a call without its brackets."""
    out = []
    for m in CODE.finditer(question):
        name = m.group(0).strip().strip("`").split("=")[0].removesuffix("()")
        if len(name) > 2:
            out.append(name)
    return out


def capitalised(text: str) -> list[str]:
    """The words a text writes with a capital, but not where a sentence starts."""
    return [m.group(0) for m in CAPITALISED.finditer(text) if not _sentence_start(text, m.start())]


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return not before or before.endswith((".", "!", "?", ":", '"', "\u201c"))
