"""What kind of value a question asks for, and what a passage holds: a figure, a year, a version,
a name in code, a capitalised name. The one owner of these shapes for the offline engine
(passages.py, select.py, offline.py) and the trained reader's features (reader.py).

The shapes are written as characters, not words: a figure is digits, a version is dotted digits, a
name in code is an option's dashes, a call's brackets, an identifier's underscore or inner capital.
The words a question names a kind of value with are in lexicon.VALUE_WORDS.
"""

from __future__ import annotations

import re

from ..text import fold, tokenize
from .lexicon import AUXILIARIES, PERSONS, QUESTION_KINDS, VALUE_WORDS

FIGURE = re.compile(r"\b\d[\d,.]*\w*")  # "25000000", "1,024", "30s", "4.5"
YEAR = re.compile(r"\b(?:1[5-9]\d\d|20\d\d)\b")
VERSION = re.compile(r"\b[vV]?\d+\.\d+(?:\.\d+)*\b")  # "3.11", "v4.2.1"
CODE = re.compile(
    r"(?:^|[\s\"'(])--?[a-zA-Z][\w\-]*(?:=\S*)?|\b\w+(?:\.\w+)*\(\)|`[^`]+`|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w*\b"
)
CAPITALISED = re.compile(r"(?<![\w'’.-])[A-Z][\w'’\-]*")

_MEASURES = {"how_many", "how_measure"}
_DEFAULT_WORDS = dict(VALUE_WORDS)["default"] - {"unless"}  # documentation states one with the word


def question_kind(question: str) -> str:
    """What kind of question this is, by its opening words (lexicon.QUESTION_KINDS), or "other"."""
    toks = tokenize(question)
    for i in range(min(4, len(toks))):
        for kind, openers in QUESTION_KINDS:
            for op in openers:
                words = op.split()
                if toks[i : i + len(words)] == words and (kind != "yesno" or i == 0):
                    return kind
    return "other"


def asks_for(question: str) -> str | None:
    """The kind of value a question asks for ("default", "when", "number", "code"), if any: the first
    kind whose word it uses (lexicon.VALUE_WORDS), else by how it opens: a measure, a date, or how to
    do a thing oneself."""
    words = set(tokenize(question))
    for kind, names in VALUE_WORDS:
        if words & names:
            return kind
    opening = question_kind(question)
    toks = tokenize(question)
    if toks[:1] == ["how"] and toks[1:2] and toks[1] in AUXILIARIES and toks[2:3] and toks[2] in PERSONS:
        return "code"  # "how do I ...": a command or an option does it
    return "number" if opening in _MEASURES else "when" if opening == "when" else None


def holds(kind: str | None, text: str, question: str = "") -> bool:
    """Whether `text` holds a value of that kind that the question does not already state."""
    if not kind:
        return False
    q = fold(question)

    def new(pattern: re.Pattern) -> bool:
        return any(fold(m.group(0).strip()) not in q for m in pattern.finditer(text))

    if kind == "default":  # a default is stated with the word, and a value
        return not _DEFAULT_WORDS.isdisjoint(tokenize(text)) and (new(FIGURE) or new(CODE))
    if kind == "when":
        return new(VERSION) or new(YEAR)
    if kind == "number":
        return any(not YEAR.fullmatch(m.group(0)) and fold(m.group(0)) not in q for m in FIGURE.finditer(text))
    return new(CODE)


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
