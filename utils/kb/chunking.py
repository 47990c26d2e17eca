"""Split long text into overlapping, sentence-aligned chunks for retrieval.

A chunk is about `target_words` words (default 220) of whole sentences; each chunk after the
first starts with the last ~`overlap_words` (default 40) words of sentences from the chunk
before, so a fact that straddles a boundary is still found whole in one chunk. Sentences longer
than `max_words` are cut into word windows. A short tail is merged into the previous chunk
rather than left as a tiny chunk that would rank on a handful of words.

`chunk_spans` gives the same chunks as runs of "pieces" (sentences, or windows of an over-long
sentence), so a caller can analyse each piece once although the overlap repeats it in two
chunks (the knowledge base does). A chunk keeps the text's paragraphs (`join_pieces`): a list
item's sentences stay one paragraph, as an option's entry is read whole.

`chunk_sections` does the same for a structured document (utils/kb/structure.py): within each
top-level section, each chunk labelled with its heading path. A fenced code block is one piece.

Standard library only (uses utils.text.paragraphs and split_sentences).
"""

from __future__ import annotations

from typing import NamedTuple

from ..text import FENCE, is_code, paragraph_sentences, paragraphs, split_sentences
from .structure import Section, is_heading

PIECE_SEP = "\n\n"  # between the paragraphs of a chunk: headings, list items and paragraphs stay apart
TARGET_WORDS = 220
OVERLAP_WORDS = 40
MAX_WORDS = 320
SMALL_WORDS = 20  # a top-level section this short (a title and a line) shares its chunk with the next


class ChunkSize(NamedTuple):
    target_words: int
    overlap_words: int
    max_words: int


DEFAULT_SIZE = ChunkSize(TARGET_WORDS, OVERLAP_WORDS, MAX_WORDS)
# Chunks sized to the embedding's window, so no chunk is truncated before it is embedded. MiniLM
# (all-MiniLM-L6-v2) reads 256 word pieces, which most 220-word chunks exceed (docs/measurements.md).
# A chunk is at most max(target, 2 x overlap + max) = 180 words here, typically ~140. The hash
# embedding has no window; Gemini's is 2,048 tokens.
CHUNK_SIZES = {"minilm": ChunkSize(140, 20, 140)}


def chunk_size_for(embedding: str) -> ChunkSize:
    return CHUNK_SIZES.get(embedding, DEFAULT_SIZE)


def max_chunk_words(size: ChunkSize) -> int:
    """The longest chunk `chunk_spans` can make with these sizes (in words)."""
    return max(size.target_words, 2 * size.overlap_words + max(size.max_words, size.target_words))


def _code_pieces(block: str, max_words: int) -> tuple[list[str], list[int]]:
    """A fenced code block is one piece; an over-long one is cut between lines, each part fenced again."""
    n = len(block.split())
    if n <= max_words:
        return [block], [n]
    lines = block.split("\n")
    opening, body = lines[0], lines[1:-1]
    pieces: list[str] = []
    sizes: list[int] = []
    part: list[str] = []
    words = 0
    for line in [*body, None]:
        w = len(line.split()) if line is not None else 0
        if part and (line is None or words + w > max_words):
            pieces.append("\n".join([opening, *part, FENCE]))
            sizes.append(max(1, words))
            part, words = [], 0
        if line is not None:
            part.append(line)
            words += w
    return pieces, sizes


class Piece(str):
    """A sentence of a chunk; `cont`: it goes on with the paragraph of the piece before it (a list
    item's or a paragraph's next sentence), so the chunk keeps the paragraph whole."""

    cont: bool

    def __new__(cls, text: str, cont: bool = False):
        piece = super().__new__(cls, text)
        piece.cont = cont
        return piece


def join_pieces(pieces: list[str]) -> str:
    """A chunk's text: its pieces, paragraphs apart (PIECE_SEP), a paragraph's sentences on one line."""
    return "".join((" " if getattr(p, "cont", False) else PIECE_SEP) + p if i else p for i, p in enumerate(pieces))


def _sentences(text: str, structured: bool = False) -> list[Piece]:
    """The text's sentences, each marked when it goes on with the paragraph of the one before; in a
    structured text a heading line is one, whatever its full stops."""
    out: list[Piece] = []
    for para in paragraphs(text):
        if structured and is_heading(para):
            sents = [para]
        else:  # a paragraph without a line break is single-spaced prose: no need to look for paragraphs in it
            sents = paragraph_sentences(para) if "\n" not in para else split_sentences(para)
        out += [Piece(s, i > 0) for i, s in enumerate(sents)]
    return out


def _pieces(text: str, max_words: int, structured: bool = False) -> tuple[list[str], list[int]]:
    """Sentences (single-spaced) and their word counts; over-long ones cut into max_words windows."""
    pieces: list[str] = []
    sizes: list[int] = []
    for sent in _sentences(text, structured):  # whitespace already collapsed
        if not sent:
            continue
        if is_code(sent):
            code, code_sizes = _code_pieces(sent, max_words)
            pieces += code
            sizes += code_sizes
            continue
        n = sent.count(" ") + 1
        if n <= max_words:
            pieces.append(sent)
            sizes.append(n)
            continue
        words = sent.split(" ")
        for i in range(0, n, max_words):
            part = words[i : i + max_words]
            pieces.append(Piece(" ".join(part), sent.cont or i > 0))
            sizes.append(len(part))
    return pieces, sizes


def _check(target_words: int, overlap_words: int) -> None:
    if target_words < 1 or overlap_words < 0 or overlap_words >= target_words:
        raise ValueError("need target_words >= 1 and 0 <= overlap_words < target_words")


def chunk_spans(
    text: str, target_words: int = TARGET_WORDS, overlap_words: int = OVERLAP_WORDS, max_words: int = MAX_WORDS
) -> tuple[list[str], list[tuple[int, int]]]:
    """(pieces, spans): chunk i is join_pieces(pieces[start:end]) for (start, end) = spans[i].

    The same chunks as `chunk_text`; a short text (<= target_words words) is one piece, one chunk.
    """
    _check(target_words, overlap_words)
    max_words = max(max_words, target_words)
    head = text.split(None, target_words)  # stops early: no need to split a long text just to count
    if len(head) <= target_words:  # one chunk: no need to find sentences, but keep its paragraphs
        paras = paragraphs(text)
        return ([PIECE_SEP.join(paras)], [(0, 1)]) if paras else ([], [])
    pieces, sizes = _pieces(text, max_words)
    return pieces, _spans(sizes, target_words, overlap_words, max_words)


def _spans(sizes: list[int], target_words: int, overlap_words: int, max_words: int) -> list[tuple[int, int]]:
    """Chunks as (start, end) runs of pieces of these word counts."""
    spans: list[tuple[int, int]] = []
    start = 0  # first piece of the chunk being built
    carried = 0  # how many of its leading pieces are overlap from the previous chunk
    size = 0
    for i, n in enumerate(sizes):
        if i - start > carried and size + n > target_words:
            spans.append((start, i))
            # Carry whole trailing sentences worth ~overlap_words (never more than 2x) forward.
            j, got = i, 0
            while j > start:
                prev = sizes[j - 1]
                if got >= overlap_words or got + prev > 2 * overlap_words:
                    break
                j -= 1
                got += prev
            start, carried, size = j, i - j, got
        size += n
    end = len(sizes)
    if end - start > carried:
        fresh_words = sum(sizes[start + carried : end])
        if (
            spans
            and fresh_words < target_words // 4
            and sum(sizes[spans[-1][0] : spans[-1][1]]) + fresh_words <= max_words
        ):
            spans[-1] = (spans[-1][0], end)  # a short tail joins the previous chunk
        else:
            spans.append((start, end))
    return spans


def chunk_sections(
    sections: list[Section],
    target_words: int = TARGET_WORDS,
    overlap_words: int = OVERLAP_WORDS,
    max_words: int = MAX_WORDS,
) -> tuple[list[str], list[tuple[int, int]], list[str]]:
    """(pieces, spans, labels) for a structured document: chunks as in `chunk_spans`, cut within each
    top-level section (a chunk never holds the end of one and the start of the next; consecutive small
    ones share a chunk while together they stay under a quarter of `target_words`, and a section of
    fewer than SMALL_WORDS words, a heading alone, joins the next), each chunk labelled with the
    heading path of its first new piece that is not a heading line."""
    _check(target_words, overlap_words)
    if len(sections) == 1:  # one section: the chunks of its text as it is
        texts, text_spans = chunk_spans(sections[0].text, target_words, overlap_words, max_words)
        return texts, text_spans, [sections[0].label] * len(text_spans)
    max_words = max(max_words, target_words)
    groups: list[list[Section]] = []
    words: list[int] = []
    for sec in sections:
        n = len(sec.text.split())
        if groups and (groups[-1][-1].top == sec.top or words[-1] + n <= target_words // 4 or words[-1] < SMALL_WORDS):
            groups[-1].append(sec)
            words[-1] += n
        else:
            groups.append([sec])
            words.append(n)
    pieces: list[str] = []
    spans: list[tuple[int, int]] = []
    labels: list[str] = []
    for group in groups:
        base = len(pieces)
        owner: list[str] = []
        sizes: list[int] = []
        heads: list[bool] = []
        for sec in group:
            p, p_sizes = _pieces(sec.text, max_words, structured=True)
            pieces += p
            sizes += p_sizes
            owner += [sec.label] * len(p)
            heads += [is_heading(x) for x in p]
        prev_end = 0
        for a, b in _spans(sizes, target_words, overlap_words, max_words):
            spans.append((base + a, base + b))
            fresh = range(min(max(a, prev_end), b - 1), b)  # the pieces not carried over
            labels.append(owner[next((k for k in fresh if not heads[k]), fresh[0])])
            prev_end = b
    return pieces, spans, labels


def chunk_text(
    text: str, target_words: int = TARGET_WORDS, overlap_words: int = OVERLAP_WORDS, max_words: int = MAX_WORDS
) -> list[str]:
    """Chunks of whole sentences, ~target_words long, consecutive chunks sharing ~overlap_words."""
    pieces, spans = chunk_spans(text, target_words, overlap_words, max_words)
    return [join_pieces(pieces[a:b]) for a, b in spans]
