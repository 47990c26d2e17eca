"""Text helpers: stemming, sentence splitting — and that they are safe from many threads."""

from __future__ import annotations

import threading
import unicodedata

from sleuth.utils.text import (
    analyze,
    fold,
    forget_stems,
    paragraph_sentences,
    paragraphs,
    split_sentences,
    stem,
    term_set,
    tokenize,
)


def test_stemming_matches_word_forms():
    assert stem("stopping") == stem("stop") == stem("stops")
    assert stem("decided") == stem("decides")
    assert term_set("How does Sleuth decide when to stop?") >= {stem("decided"), stem("stopping")}


def test_folding_drops_every_combining_mark_in_any_script():
    samples = ["Café crème", "naïve Ünïcödé", "שָׁלוֹם", "हिन्दी", "Ἀθῆναι", "Đakovo ǅ ﬁ", "ascii only"]
    for text in samples:  # the definition: NFKD, then every code point with a combining class dropped
        nfkd = unicodedata.normalize("NFKD", text)
        assert fold(text) == "".join(c for c in nfkd if not unicodedata.combining(c)).lower()
    assert fold("Café") == fold("cafe") == "cafe"


def test_tokens_are_letters_and_digits_the_same_in_ascii_and_unicode_text():
    assert tokenize("snake_case, C3PO's 2024-05!") == ["snake", "case", "c3po", "s", "2024", "05"]
    assert tokenize("snake_case, C3PO's 2024-05! é") == ["snake", "case", "c3po", "s", "2024", "05", "e"]
    assert analyze("The stopping of decided Cafés") == [stem("stopping"), stem("decided"), stem("cafes")]
    assert term_set("Stopping, stopped; café") == set(analyze("stopping stopped cafe"))


def test_sentences_keep_abbreviations_together():
    assert split_sentences("Dr. Smith went home. The U.S. army is big.\n\nNew paragraph") == [
        "Dr. Smith went home.",
        "The U.S. army is big.",
        "New paragraph",
    ]
    # a name's initial does not end a sentence (the rest of the name would start a bogus one)
    assert split_sentences("A book by Candice E. Jackson. It sold well near Gerald R. Ford airport.") == [
        "A book by Candice E. Jackson.",
        "It sold well near Gerald R. Ford airport.",
    ]


def test_a_paragraphs_sentences_are_those_split_sentences_finds_in_it():
    text = "Dr. Smith went home.  The U.S. army is big!\n\n- A list item. Its second sentence?\n(Quoted.) Then 3 more."
    for para in paragraphs(text):
        assert paragraph_sentences(para) == split_sentences(para)


def test_stemming_is_correct_from_many_threads():
    # Batch jobs stem concurrently; a shared Snowball stemmer object corrupts its results.
    words = [
        f"{base}{suffix}"
        for base in ("research", "decid", "nation", "govern", "portray", "walk")
        for suffix in ("ing", "ed", "s", "er", "ers", "ingly", "ation", "ations")
    ] * 50
    expected = {w: stem(w) for w in words}
    forget_stems()  # make every thread do the real work
    wrong = []

    def work():
        for w in words:
            if stem(w) != expected[w]:
                wrong.append(w)
            forget_stems()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []
