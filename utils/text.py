"""Small text helpers shared by the offline engine and the knowledge base.

Pure functions, standard library only, so they are cheap to import anywhere.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

_WORD = re.compile(r"\w+", re.UNICODE)
# Sentence boundary: end punctuation followed by whitespace and an upper-case letter,
# digit or quote. Abbreviation handling is deliberately simple.
_SENT_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9\u00C0-\u024F])")
_ABBREV = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|vs|etc|e\.g|i\.e|U\.S|Inc|Ltd|Co|No|Vol|Gen|Col|Lt|Sgt|Mt)\.$")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t don which whose many much one two first also known called both either""".split()
)

QUESTION_WORDS = frozenset("what which who whom whose when where why how whether did does do is are was were".split())


def fold(text: str) -> str:
    """Lower-case and strip accents, so 'Café' and 'cafe' match."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c)).lower()


def tokenize(text: str) -> list[str]:
    """All word tokens, folded (lower-case, no accents)."""
    return _WORD.findall(fold(text))


def content_terms(text: str) -> list[str]:
    """Tokens that carry meaning: no stopwords, no 1-letter tokens; order kept, duplicates kept."""
    return [t for t in tokenize(text) if t not in STOPWORDS and len(t) > 1]


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences; keeps abbreviations like 'Dr.' attached."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n|\n(?=[-*•#])", text):
        para = " ".join(para.split())
        if not para:
            continue
        parts = _SENT_SPLIT.split(para)
        buf = ""
        for part in parts:
            buf = f"{buf} {part}".strip() if buf else part
            if _ABBREV.search(buf[-12:]):
                continue
            out.append(buf)
            buf = ""
        if buf:
            out.append(buf)
    return out


@lru_cache(maxsize=200_000)
def stem(token: str) -> str:
    """English Snowball (Porter 2) stem of a folded token, cached: 'stopping' -> 'stop',
    'decided' and 'decides' -> 'decid'. Non-ASCII words are left as they are."""
    if not token.isascii() or len(token) < 4:
        return token
    return _stemmer().stemWord(token)


_local = threading.local()


def _stemmer():
    """One Snowball stemmer per thread: a stemmer object keeps per-word state while it works."""
    st = getattr(_local, "stemmer", None)
    if st is None:
        import snowballstemmer

        st = _local.stemmer = snowballstemmer.stemmer("english")
    return st


def term_set(text: str) -> set[str]:
    """Stemmed content terms of a text, as a set."""
    return {stem(t) for t in content_terms(text)}


def normalize_query(q: str) -> str:
    """Normalization used for 'same query again' loop detection (case, punctuation, spacing)."""
    return " ".join(re.findall(r"\w+", fold(q or "")))
