"""Split long text into overlapping, sentence-aligned chunks for retrieval.

A chunk is about `target_words` words (default 220) of whole sentences; each chunk after the
first starts with the last ~`overlap_words` (default 40) words of sentences from the chunk
before, so a fact that straddles a boundary is still found whole in one chunk. Sentences longer
than `max_words` are cut into word windows. A short tail is merged into the previous chunk
rather than left as a tiny chunk that would rank on a handful of words.

`chunk_spans` gives the same chunks as runs of "pieces" (sentences, or windows of an over-long
sentence), so a caller can analyse each piece once although the overlap repeats it in two
chunks (the knowledge base does).

Standard library only (uses utils.text.paragraphs and split_sentences).
"""

from __future__ import annotations

from typing import NamedTuple

from ..text import paragraphs, split_sentences

PIECE_SEP = "\n\n"  # between the sentences of a chunk: headings, list items and paragraphs stay apart
TARGET_WORDS = 220
OVERLAP_WORDS = 40
MAX_WORDS = 320


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


def _pieces(text: str, max_words: int) -> tuple[list[str], list[int]]:
    """Sentences (single-spaced) and their word counts; over-long ones cut into max_words windows."""
    pieces: list[str] = []
    sizes: list[int] = []
    for sent in split_sentences(text):  # whitespace is already collapsed to single spaces
        if not sent:
            continue
        n = sent.count(" ") + 1
        if n <= max_words:
            pieces.append(sent)
            sizes.append(n)
            continue
        words = sent.split(" ")
        for i in range(0, n, max_words):
            part = words[i : i + max_words]
            pieces.append(" ".join(part))
            sizes.append(len(part))
    return pieces, sizes


def _check(target_words: int, overlap_words: int) -> None:
    if target_words < 1 or overlap_words < 0 or overlap_words >= target_words:
        raise ValueError("need target_words >= 1 and 0 <= overlap_words < target_words")


def chunk_spans(
    text: str, target_words: int = TARGET_WORDS, overlap_words: int = OVERLAP_WORDS, max_words: int = MAX_WORDS
) -> tuple[list[str], list[tuple[int, int]]]:
    """(pieces, spans): chunk i is PIECE_SEP.join(pieces[start:end]) for (start, end) = spans[i].

    The same chunks as `chunk_text`; a short text (<= target_words words) is one piece, one chunk.
    """
    _check(target_words, overlap_words)
    max_words = max(max_words, target_words)
    head = text.split(None, target_words)  # stops early: no need to split a long text just to count
    if len(head) <= target_words:  # one chunk: no need to find sentences, but keep its paragraphs
        paras = paragraphs(text)
        return ([PIECE_SEP.join(paras)], [(0, 1)]) if paras else ([], [])
    pieces, sizes = _pieces(text, max_words)
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
    return pieces, spans


def chunk_text(
    text: str, target_words: int = TARGET_WORDS, overlap_words: int = OVERLAP_WORDS, max_words: int = MAX_WORDS
) -> list[str]:
    """Chunks of whole sentences, ~target_words long, consecutive chunks sharing ~overlap_words."""
    pieces, spans = chunk_spans(text, target_words, overlap_words, max_words)
    return [PIECE_SEP.join(pieces[a:b]) for a, b in spans]
