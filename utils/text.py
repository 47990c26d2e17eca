"""Small text helpers shared by the offline engine and the knowledge base.

The one folder (`fold`), tokeniser (`tokenize`) and analyser (`analyze`: stemmed content terms):
the KB's lexical index, its hash embedding and the offline engine all read text through them, with
fast paths for ASCII text. Pure functions, standard library only (plus snowballstemmer, imported on
first use), so they are cheap to import anywhere.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache

_WORD = re.compile(r"[^\W_]+")  # letters and digits
# Sentence boundary: end punctuation followed by whitespace and an upper-case letter,
# digit or quote. Abbreviation handling is deliberately simple.
_SENT_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9\u00C0-\u024F])")
# Abbreviations, and a name's initial ("Gerald R. Ford", "Candice E. Jackson"), do not end a sentence.
_ABBREV = re.compile(
    r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|vs|etc|e\.g|i\.e|U\.S|Inc|Ltd|Co|No|Vol|Gen|Col|Lt|Sgt|Mt)|(?<![\w.])[A-Z])\.$"
)

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


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """Text that UTF-8 can hold: a lone surrogate becomes U+FFFD. That is how Python reads bytes that
    are not UTF-8 in an argument, on stdin or in a file name, and what a "\\ud800" in JSON (a batch
    line, a search API's answer) becomes. Used where a question or feedback enters the session, in
    every file write and in what the knowledge base stores."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def composed(text: str) -> str:
    """Text in Unicode's composed form (NFC): an accented letter written as a letter plus a combining
    accent becomes one character, as most text, queries and search indexes have it. The one place
    where what is read (a page, a plain-text or PDF document, a file the knowledge base ingests) is
    put in that form."""
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def fold(text: str) -> str:
    """Lower-case and strip accents, so 'Café' and 'cafe' match: NFKD, then every combining mark dropped."""
    if text.isascii():  # nothing to decompose: the common case, ~20x faster
        return text.lower()
    text = unicodedata.normalize("NFKD", text)
    bmp, astral = _combining()
    text = bmp.sub("", text)
    if _ASTRAL.search(text):
        text = astral.sub("", text)
    return text.lower()


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@lru_cache(maxsize=1)
def _combining() -> tuple[re.Pattern, re.Pattern]:
    """Character classes of every code point with a non-zero combining class (what NFKD splits off
    accented letters), built once from the Unicode database (they lie in planes 0, 1 and 14): one for
    the Basic Multilingual Plane, which re compiles to a fast bitmap, one for the rest."""
    points = [c for plane in (0, 1, 14) for c in range(plane << 16, (plane + 1) << 16) if unicodedata.combining(chr(c))]
    ranges: list[list[int]] = []
    for c in points:
        if ranges and ranges[-1][1] == c - 1 and (c & 0xFFFF):
            ranges[-1][1] = c
        else:
            ranges.append([c, c])

    def char_class(rs: list[list[int]]) -> re.Pattern:
        return re.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in rs) + "]" if rs else "(?!)")

    return char_class([r for r in ranges if r[0] < 0x10000]), char_class([r for r in ranges if r[0] >= 0x10000])


# ASCII fast path of the tokenizer: bytes other than [a-z0-9] become spaces (bytes.translate is a C table
# lookup, ~1.5x faster than the regex; the same tokens as _WORD on lower-cased ASCII text).
_ASCII_SEPARATORS = bytes(b if chr(b) in "abcdefghijklmnopqrstuvwxyz0123456789" else 32 for b in range(256))


def tokenize(text: str) -> list[str]:
    """Word tokens, folded (lower-case, no accents): runs of letters and digits, stopwords kept. '_' and
    punctuation separate, as in SQLite FTS5's unicode61 tokenizer, so each KB index term is one FTS5 token."""
    if text.isascii():
        return text.lower().encode("ascii").translate(_ASCII_SEPARATORS).decode("ascii").split()
    return _WORD.findall(fold(text))


def content_terms(text: str) -> list[str]:
    """Tokens that carry meaning: no stopwords, no 1-letter tokens; order kept, duplicates kept."""
    return [t for t in tokenize(text) if t not in STOPWORDS and len(t) > 1]


# Tokens whose index term is kept at hand: a language's common words come first and fill it (~45 MB at
# most); a corpus's long tail (a million chunks bring millions of names and made-up words) is stemmed
# each time it is met (stem's cache is bounded the same way), so the map does not grow with the corpus.
TERM_MAP_SIZE = 200_000


class _TermMap(dict):
    """token -> index term ('' for stopwords and 1-letter tokens); filled on first sight."""

    def __missing__(self, tok: str) -> str:
        term = "" if len(tok) < 2 or tok in STOPWORDS else stem(tok)
        if len(self) < TERM_MAP_SIZE:
            self[tok] = term
        return term


_terms = _TermMap()


def analyze(text: str) -> list[str]:
    """Index terms of a text: its content terms, stemmed, in order (duplicates kept). The KB's lexical
    index, its hash embedding and the offline engine's term sets all read text this way."""
    return list(filter(None, map(_terms.__getitem__, tokenize(text))))


# A paragraph ends at a blank line, and before a line that starts a list item, a heading or a table
# row: a note's table is rows, not one sentence run together from its cells.
_PARA_BREAK = re.compile(r"\n\s*\n|\n(?=[-*•#|])")


FENCE = "```"
_FENCED = re.compile(r"^[ \t]*```[^\n`]*\n.*?^[ \t]*```[ \t]*$", re.M | re.S)


def _plain_paragraphs(text: str) -> list[str]:
    return [p for p in (" ".join(part.split()) for part in _PARA_BREAK.split(text)) if p]


def paragraphs(text: str) -> list[str]:
    """The text's paragraphs (list items, headings and table rows each one of their own), single-spaced.
    A fenced code block (```...``` on lines of their own) is one paragraph, kept with its lines."""
    if FENCE not in text:
        return _plain_paragraphs(text)
    out: list[str] = []
    at = 0
    for m in _FENCED.finditer(text):
        out += _plain_paragraphs(text[at : m.start()])
        lines = [ln.rstrip() for ln in m.group(0).strip("\n").split("\n")]
        out.append("\n".join([lines[0].strip(), *lines[1:-1], FENCE]))
        at = m.end()
    out += _plain_paragraphs(text[at:])  # an unclosed fence is not code
    return out


def is_code(paragraph: str) -> bool:
    """Whether a paragraph (or a chunk's piece) is a fenced code block."""
    return paragraph.startswith(FENCE) and paragraph.endswith(FENCE) and "\n" in paragraph


_LIST_MARKER = re.compile(r"^[-*•+]\s+")


def without_marker(sentence: str) -> str:
    """A list item's sentence without its bullet ("- ", "* ", "• "), which is not part of what it says:
    the one rule for an answer's facts and a source's quoted passage."""
    return _LIST_MARKER.sub("", sentence, count=1)


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences; keeps abbreviations like 'Dr.' attached."""
    out: list[str] = []
    for para in paragraphs(text):
        if is_code(para):  # a code block is one piece, never cut into "sentences"
            out.append(para)
            continue
        out += paragraph_sentences(para)
    return out


def paragraph_sentences(para: str) -> list[str]:
    """The sentences of one paragraph as `paragraphs` gives it (single-spaced, not code): what
    split_sentences makes of it, without looking for paragraphs again."""
    out: list[str] = []
    buf = ""
    for part in _SENT_SPLIT.split(para):
        buf = f"{buf} {part}".strip() if buf else part
        if _ABBREV.search(buf[-12:]):
            continue
        out.append(buf)
        buf = ""
    if buf:
        out.append(buf)
    return out


# Stems kept at hand: the first 200,000 words met, which are a language's common words, and then no
# more. A cache that evicts (lru_cache) keeps making new entries on a corpus whose names and made-up
# words never end, and each lands among what a write batch freed, so the process's memory crept up
# with the corpus.
STEM_CACHE_SIZE = 200_000
_stems: dict[str, str] = {}


def stem(token: str) -> str:
    """English Snowball (Porter 2) stem of a folded token, cached: 'stopping' -> 'stop',
    'decided' and 'decides' -> 'decid'. Non-ASCII words are left as they are."""
    got = _stems.get(token)
    if got is None:
        got = token if not token.isascii() or len(token) < 4 else _stemmer().stemWord(token)
        if len(_stems) < STEM_CACHE_SIZE:
            _stems[token] = got
    return got


def forget_stems() -> None:
    """Empty the stem cache (a test that needs every call to stem for real)."""
    _stems.clear()


_local = threading.local()


def _stemmer():
    """One Snowball stemmer per thread: a stemmer object keeps per-word state while it works."""
    st = getattr(_local, "stemmer", None)
    if st is None:
        import snowballstemmer

        st = _local.stemmer = snowballstemmer.stemmer("english")
        if hasattr(st, "maxCacheSize"):  # PyStemmer: its own word cache costs more than it saves, stem's is enough
            st.maxCacheSize = 0
    return st


def term_set(text: str) -> set[str]:
    """Stemmed content terms of a text, as a set."""
    return set(analyze(text))


_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*")


def bare_title(title: str) -> str:
    """A title without its qualifier in brackets: "Ivo Brandt (novel)" -> "Ivo Brandt"."""
    return _QUALIFIER.sub(" ", title or "").strip()


def qualifier(title: str) -> str:
    """A title's qualifier in brackets, without them: "Ivo Brandt (novel)" -> "novel"; "" if none."""
    m = _QUALIFIER.search(title or "")
    return m.group(0).strip(" ()[]") if m else ""


def has_qualifier(title: str) -> bool:
    """Whether a title carries a qualifier in brackets ("Ivo Brandt (novel)"): it names one sense of a name."""
    return bool(_QUALIFIER.search(title or ""))


def normalize_query(q: str) -> str:
    """Normalization used for 'same query again' loop detection (case, punctuation, spacing)."""
    return " ".join(re.findall(r"\w+", fold(q or "")))
