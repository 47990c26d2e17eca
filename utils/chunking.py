"""Split long text into overlapping, sentence-aligned chunks for retrieval.

A chunk is about `target_words` words (default 220) of whole sentences; each chunk after the
first starts with the last ~`overlap_words` (default 40) words of sentences from the chunk
before, so a fact that straddles a boundary is still found whole in one chunk. Sentences longer
than `max_words` are cut into word windows. A short tail is merged into the previous chunk
rather than left as a tiny chunk that would rank on a handful of words.

Standard library only (uses utils.text.split_sentences).
"""

from __future__ import annotations

from utils.text import split_sentences

TARGET_WORDS = 220
OVERLAP_WORDS = 40
MAX_WORDS = 320


def _pieces(text: str, max_words: int) -> list[list[str]]:
    """Sentences as word lists; over-long sentences (tables, run-ons) cut into max_words windows."""
    out: list[list[str]] = []
    for sent in split_sentences(text):
        words = sent.split()
        for i in range(0, len(words), max_words):
            out.append(words[i:i + max_words])
    return out


def chunk_text(text: str, target_words: int = TARGET_WORDS, overlap_words: int = OVERLAP_WORDS,
               max_words: int = MAX_WORDS) -> list[str]:
    """Chunks of whole sentences, ~target_words long, consecutive chunks sharing ~overlap_words."""
    if target_words < 1 or overlap_words < 0 or overlap_words >= target_words:
        raise ValueError("need target_words >= 1 and 0 <= overlap_words < target_words")
    max_words = max(max_words, target_words)
    words = text.split()
    if len(words) <= target_words:  # one chunk: no need to find sentences
        return [" ".join(words)] if words else []
    sents = _pieces(text, max_words)
    chunks: list[list[list[str]]] = []
    cur: list[list[str]] = []  # sentences of the chunk being built
    carried = 0  # how many leading sentences of `cur` are overlap from the previous chunk
    size = 0
    for sent in sents:
        if len(cur) > carried and size + len(sent) > target_words:
            chunks.append(cur)
            # Carry whole trailing sentences worth ~overlap_words (never more than 2x) forward.
            carry: list[list[str]] = []
            n = 0
            for prev in reversed(cur):
                if n >= overlap_words or n + len(prev) > 2 * overlap_words:
                    break
                carry.insert(0, prev)
                n += len(prev)
            cur, carried, size = carry, len(carry), n
        cur.append(sent)
        size += len(sent)
    if len(cur) > carried:
        fresh = cur[carried:]
        fresh_words = sum(map(len, fresh))
        if chunks and fresh_words < target_words // 4 and sum(map(len, chunks[-1])) + fresh_words <= max_words:
            chunks[-1].extend(fresh)  # a short tail joins the previous chunk
        else:
            chunks.append(cur)
    return [" ".join(" ".join(s) for s in chunk) for chunk in chunks]
