"""Text helpers: stemming, sentence splitting — and that they are safe from many threads."""

from __future__ import annotations

import threading

from utils.text import split_sentences, stem, term_set


def test_stemming_matches_word_forms():
    assert stem("stopping") == stem("stop") == stem("stops")
    assert stem("decided") == stem("decides")
    assert term_set("How does Sleuth decide when to stop?") >= {stem("decided"), stem("stopping")}


def test_sentences_keep_abbreviations_together():
    assert split_sentences("Dr. Smith went home. The U.S. army is big.\n\nNew paragraph") == [
        "Dr. Smith went home.",
        "The U.S. army is big.",
        "New paragraph",
    ]


def test_stemming_is_correct_from_many_threads():
    # Batch jobs stem concurrently; a shared Snowball stemmer object corrupts its results.
    words = [
        f"{base}{suffix}"
        for base in ("research", "decid", "nation", "govern", "portray", "walk")
        for suffix in ("ing", "ed", "s", "er", "ers", "ingly", "ation", "ations")
    ] * 50
    expected = {w: stem(w) for w in words}
    stem.cache_clear()  # make every thread do the real work
    wrong = []

    def work():
        for w in words:
            if stem(w) != expected[w]:
                wrong.append(w)
            stem.cache_clear()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []
