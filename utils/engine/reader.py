"""The offline engine's reader: how well each candidate passage answers a question.

A `Reader` is given the question and candidate passages, each with its heading path (title ›
section › subsection, or the heading line it sits under), and scores each. The offline analyzer
re-ranks the best passages of every item by that score (offline._Reading.by_meaning), so it decides
which facts are kept and, through them, what the answer quotes. `default_reader` picks one:
  * `SimilarityReader` (the default): the sentence model's cosine of question and passage
    (semantic.py: all-MiniLM-L6-v2 in numpy); None without the model, and the words decide.
  * `ModelReader` and `LexicalReader` (SLEUTH_READER=model|lexical): logistic models over features of
    the (question, passage) pair, trained by bench/train_reader.py on public question/answer data
    (SQuAD, CC BY-SA 4.0) that none of the evaluation sets come from, shipped as reader_weights.json
    and checked by sha256 when loaded. The features are what any reader of English sees: how much of
    the question (its words weighed by rarity) the passage and its heading say, how far that is from
    the best passage beside it, whether its word pairs recur, what it holds (a figure, a year, a name,
    code, a negation) crossed with the kind of question (lexicon.py), and for the model reader the
    cosine and the element-wise product of the two vectors. They are not the default: on the
    development doc sets they chose the answering sentence less often than the cosine (docs/reader.md).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..text import content_terms, fold, stem, tokenize
from . import semantic
from .lexicon import NEGATIONS, QUESTION_KINDS
from .values import CODE, FIGURE, YEAR, capitalised, question_kind

WEIGHTS_FILE = Path(__file__).with_name("reader_weights.json")
# The sha256 of reader_weights.json as bench/train_reader.py wrote it: a file that differs is not loaded.
WEIGHTS_SHA256 = "78083be7d162942733fa5da92ef8f13102600cd9ebd0569f1763a30b700816ef"

IDF_CAP = 6.0  # a word rarer than this is simply rare: rarer does not mean more relevant
SHAPES = ("figure", "year", "name", "code", "negation")
KINDS = tuple(k for k, _ in QUESTION_KINDS) + ("other",)


@dataclass(frozen=True)
class Candidate:
    """A passage that may answer: the text that would be quoted, and what it sits under."""

    text: str
    heading: str = ""  # its heading path or the heading line above it ("" when none)


class Reader(Protocol):
    name: str

    def scores(
        self, question: str, candidates: Sequence[Candidate], idf: IdfLookup | None = None
    ) -> list[float] | None:
        """For each candidate, how well it answers the question (higher is better; the trained readers
        give a probability), or None when this reader cannot score here (the caller ranks by words)."""
        ...


IdfLookup = Callable[[str], float | None]  # a stemmed term -> its IDF in the collection read, or None


def _terms(text: str) -> list[str]:
    return [stem(t) for t in content_terms(text)]


def question_terms(question: str, idf: IdfLookup | None) -> dict[str, float]:
    """The question's stemmed content terms -> weight: its rarity in the collection, capped (1 each
    when no collection says how rare a word is)."""
    out: dict[str, float] = {}
    for t in _terms(question):
        v = idf(t) if idf else None
        out[t] = 1.0 if v is None else max(0.1, min(v, IDF_CAP)) / IDF_CAP
    return out


def _bigrams(terms: list[str]) -> set[tuple[str, str]]:
    return set(zip(terms, terms[1:], strict=False))


def shapes(text: str, question: str = "") -> dict[str, float]:
    """What a passage holds, whatever it says: a figure, a year, a name the question does not say, code,
    a negation."""
    qwords = set(tokenize(question))
    names = [m for m in capitalised(text) if m.lower() not in qwords]
    return {
        "figure": float(bool(FIGURE.search(text))),
        "year": float(bool(YEAR.search(text))),
        "name": float(bool(names)),
        "code": float(bool(CODE.search(text))),
        "negation": float(any(t in NEGATIONS for t in tokenize(text))),
    }


def lexical_features(question: str, cand: Candidate, weights: dict[str, float], kind: str) -> dict[str, float]:
    """The features every reader uses (names in `LEXICAL`)."""
    own = _terms(cand.text)
    head = _terms(cand.heading)
    own_set, head_set = set(own), set(head)
    total = sum(weights.values()) or 1.0
    cover = sum(v for t, v in weights.items() if t in own_set) / total
    framed = sum(v for t, v in weights.items() if t in own_set | head_set) / total
    qterms = list(weights)
    qb = _bigrams(_terms(question))
    bigram = len(qb & (_bigrams(own) | _bigrams(head + own))) / len(qb) if qb else 0.0
    rarest = max(weights, key=lambda t: (weights[t], t)) if weights else ""
    new = len(own_set - set(qterms)) / len(own_set) if own_set else 0.0
    x = {
        "bias": 1.0,
        "cover": cover,
        "framed": framed,
        "head_only": framed - cover,
        "bigram": bigram,
        "rare_missing": float(bool(rarest) and rarest not in own_set | head_set),
        "all_said": float(bool(weights) and cover >= 0.999),
        "new_words": new,
        "length": min(1.0, math.log1p(len(own)) / 4.0),
        "short": float(len(own) < 5),
    }
    sh = shapes(cand.text, question)
    for k in KINDS:
        on = float(kind == k)
        x[f"kind:{k}"] = on
        x[f"kind:{k}*cover"] = on * cover
        for s in SHAPES:
            x[f"kind:{k}*{s}"] = on * sh[s]
    for s in SHAPES:
        x[s] = sh[s]
    return x


LEXICAL = (*lexical_features("what is x", Candidate("x is y"), {"x": 1.0}, "what"), "cover_rel", "framed_rel")
MODEL = (*LEXICAL, "cos", "cos_rel")
DIMS = 384  # the sentence model's vector size


def model_text(cand: Candidate) -> str:
    """What the sentence model reads of a candidate: the passage under its heading's last part."""
    head = cand.heading.rsplit(" › ", 1)[-1].strip()
    return f"{head}: {cand.text}" if head and fold(head) not in fold(cand.text) else cand.text


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


class _Weights:
    """The shipped weights: one logistic model per reader, read once and checked by sha256."""

    _lock = threading.Lock()
    _loaded: dict | None | bool = None

    @classmethod
    def get(cls) -> dict | None:
        with cls._lock:
            if cls._loaded is None:
                cls._loaded = False
                try:
                    raw = WEIGHTS_FILE.read_bytes()
                    if hashlib.sha256(raw).hexdigest() == WEIGHTS_SHA256:
                        cls._loaded = json.loads(raw)
                except OSError:
                    pass
            return cls._loaded if isinstance(cls._loaded, dict) else None


def relative(rows: list[dict[str, float]], names: tuple[str, ...] = ("cover", "framed")) -> None:
    """Add to each candidate's features how far it is from the best of its pool on each named feature:
    a passage is read beside the other passages of its document, as a reader compares them."""
    for n in names:
        best = max((r[n] for r in rows), default=0.0)
        for r in rows:
            r[f"{n}_rel"] = r[n] - best


class LexicalReader:
    """The reader without the sentence model: a logistic model of the lexical features."""

    name = "lexical"

    def __init__(self, weights: dict[str, float] | None = None):
        shipped = _Weights.get()
        self.w = weights if weights is not None else (shipped or {}).get("lexical", {})

    def features(self, question: str, candidates: Sequence[Candidate], idf: IdfLookup | None) -> list[dict[str, float]]:
        qw = question_terms(question, idf)
        kind = question_kind(question)
        rows = [lexical_features(question, c, qw, kind) for c in candidates]
        relative(rows)
        return rows

    def scores(self, question: str, candidates: Sequence[Candidate], idf: IdfLookup | None = None) -> list[float]:
        rows = self.features(question, candidates, idf)
        return [round(_sigmoid(sum(self.w.get(k, 0.0) * v for k, v in x.items())), 4) for x in rows]


class ModelReader(LexicalReader):
    """The reader with the sentence model: the lexical features, the cosine of question and passage
    (and how far it is from its pool's best), and their element-wise product."""

    name = "model"

    def __init__(self, weights: dict | None = None):
        shipped = _Weights.get()
        w = weights if weights is not None else (shipped or {}).get("model", {})
        super().__init__(w.get("features", {}))
        self.prod_w = w.get("prod", [0.0] * DIMS)

    def read(self, question: str, candidates: Sequence[Candidate], idf: IdfLookup | None):
        """(each candidate's features, each candidate's element-wise product with the question)."""
        vecs = semantic.vectors([question, *[model_text(c) for c in candidates]])
        if vecs is None:
            raise LookupError("the sentence model is not available")
        rows = super().features(question, candidates, idf)
        for r, v in zip(rows, vecs[1:], strict=True):
            r["cos"] = float(vecs[0] @ v)
        relative(rows, ("cos",))
        return rows, [vecs[0] * v for v in vecs[1:]]

    def scores(self, question: str, candidates: Sequence[Candidate], idf: IdfLookup | None = None) -> list[float]:
        if not candidates:
            return []
        try:
            rows, products = self.read(question, candidates, idf)
        except LookupError:  # the model went away: words alone
            return LexicalReader().scores(question, candidates, idf)
        import numpy as np

        prod_w = np.asarray(self.prod_w, dtype=np.float32)
        out = []
        for x, qv in zip(rows, products, strict=True):
            z = sum(self.w.get(k, 0.0) * v for k, v in x.items()) + float(qv @ prod_w)
            out.append(round(_sigmoid(z), 4))
        return out


class SimilarityReader:
    """The sentence model's cosine of question and passage (-0.1 unrelated .. 1 same meaning), as the
    offline engine has ranked passages since semantic.py came: the default (see default_reader)."""

    name = "similarity"

    def scores(
        self, question: str, candidates: Sequence[Candidate], idf: IdfLookup | None = None
    ) -> list[float] | None:
        return semantic.similarity(question, [model_text(c) for c in candidates])


def default_reader() -> Reader:
    """The reader SLEUTH_READER names: `similarity` (the default: measured best on the development doc
    sets, see docs/reader.md), or a trained one, `model` or `lexical` (the model reader falls back to
    the lexical one without the sentence model). Trained readers need the shipped weights."""
    choice = os.environ.get("SLEUTH_READER", "").strip().lower() or "similarity"
    if choice not in ("model", "lexical") or _Weights.get() is None:
        return SimilarityReader()
    no_model = os.environ.get("SLEUTH_NO_MODEL", "") not in ("", "0") or semantic.vectors([]) is None
    return LexicalReader() if choice == "lexical" or no_model else ModelReader()
