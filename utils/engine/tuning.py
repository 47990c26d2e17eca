"""The offline engine's weights and thresholds, in one place, each with the reason it has its value.

Like trafilatura's settings.cfg: the algorithm lives in offline.py, passages.py, select.py and
verdict.py; the numbers they turn on live here. "Fitted" means chosen on the development halves
(even ids of docsqa-dev and hotpotqa-dev100) and checked on the odd halves (docs/design.md,
"Offline engine"); the confidence model's coefficients come from bench/calibrate.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class OfflineTuning:
    # --- reading a tool item
    MIN_CHARS: int = 25  # shorter "sentences" are captions, labels and list stubs, not statements
    MAX_CHARS: int = 800  # longer ones are run-together tables or lists: not quotable as one fact
    HEADING_MAX_WORDS: int = 12  # a short line without final punctuation heads what follows it
    BLOCK_PARAGRAPHS: int = 8  # what a heading-like line frames: an entry's description, not a chapter
    MAX_FACTS_PER_ITEM: int = 3  # one chunk or page rarely holds more than three answering sentences
    NAMED_EXTRA_FACTS: int = 2  # ...and a document the question names, two more
    MAX_FACTS_PER_STEP: int = 16  # bounds the facts the report and the loop reason over
    MIN_CRAWL_SCORE: float = 1.0  # a page is read when its title or snippet shares a question word or a lead's
    MAX_CRAWL_PER_STEP: int = 5  # pages read at once: enough for a bridge, few enough to stay on topic
    MIN_SCORE: float = 0.25  # a sentence covering less of the question is not kept as a fact
    NEAR_WORDS: int = 3  # a name within 3 words of a question word...
    NEAR_BONUS: float = 0.5  # ...counts 1.5 times per such word as a lead to follow
    KIN_PREFIX: int = 5  # word stems this long, one starting the other, are of one root ("paint", "painter")
    BRIDGE_FROM: int = 3  # the best facts whose named documents keep their opening sentence

    # --- weighing the question's words
    NAME_WEIGHT: float = 1.5  # a capitalised word or a number in the question names what is asked about
    FEEDBACK_WEIGHT: float = 0.5  # feedback steers the search but is not the question
    IMPLIED_WORD_WEIGHT: float = 0.5  # "maximum", weighed for a question asking for a limit without the word
    IDF_UNIT: float = 2.5  # the KB IDF at which a word keeps its weight (a word in ~8 % of chunks)
    IDF_FLOOR: float = 0.4  # a word in most chunks still counts a little (it may be the subject)
    IDF_CAP: float = 6.0  # beyond this a word is simply rare; rarer does not mean more relevant

    # --- scoring a sentence
    CONTEXT_WEIGHT: float = 0.5  # words of the heading / sentence above count half: they frame, not state
    FOCUS_WEIGHT: float = 0.5  # the step's own query (a follow-up search) counts half against the question
    JOIN_GAIN: float = 0.15  # the sentence before is quoted too when it adds this much of the question
    INTRODUCED_ITEMS: int = 4  # a line ending with a colon is quoted with up to this many items of its list
    ITEM_MAX_CHARS: int = 320  # a paragraph this short whose last short line holds the value is quoted whole
    FOLLOW_UP_PENALTY: float = 0.5  # a passage a follow-up search found opens the answer only if clearly better
    RANK_PRIOR: float = 0.2  # the KB's best chunk adds this to its sentences, the next half, ... (1 / (1 + rank))
    VALUE_BONUS: float = 0.2  # holding the kind of value asked for (a default, a number, a version)
    CODE_PENALTY: float = 0.3  # a passage all of code answers a question in prose that names no code less well
    SNIPPET_TRUST: float = 0.75  # search snippets are cut short: their wording is not the page's
    KB_TRUST_BASE: float = 0.6  # a KB passage counts 0.6 + 0.4 x the KB's own retrieval score

    # --- the report (select.py)
    LEAD_FACTS: int = 2  # the best-ranked passages that open the answer whatever the pair search finds
    LEAD_GAIN: float = 0.1  # ...and the next joins it only if it says this much more of the question
    LEAD_NEW: float = 0.8  # ...or if this share of its words are new (0.5-0.8 tie on the even halves: strictest)
    MAX_ANSWER_FACTS: int = 4  # an answer states at most this many passages
    VALUE_FIRST_QCOV: float = 0.35  # a fact this much about the question that holds the value asked for leads
    MEANING_WEIGHT: float = 0.5  # the sentence model's closeness (-0.1..1) beside coverage (0..1): fitted
    ANSWER_MEANING_WEIGHT: float = 3.0  # ...and in the answer's rank of the facts read, where the words already
    # picked each fact: closeness decides which of them answers (0.5 -> 3 on docsqa-dev even: 15 -> 18 of 37 right)
    MEANING_CANDIDATES: int = 5  # a passage's best sentences by words that the model re-ranks (~30 ms each)
    PAIR_SCORE_WEIGHT: float = 0.05  # the analyzer's own score of each fact breaks near-ties between pairs

    # --- confidence: a logistic model of the answer's features (passages.confidence_features), fitted
    # by bench/calibrate.py on the even halves of docsqa-dev and hotpotqa-dev100 (KB and web) for log loss.
    CONF_INTERCEPT: float = -0.495
    CONF_WEIGHTS: dict = field(
        default_factory=lambda: {
            "coverage": 1.383,
            "best": -0.394,
            "framed": 0.635,
            "support": -0.206,
            "wants_value": -2.195,
            "value_found": 0.775,
            "rare_missing": -1.553,
            "verdict": 1.221,
        }
    )
    # With a KB large enough for word rarity (bench/calibrate.py --kb, fitted on the KB runs' even halves:
    # docsqa-dev and hotpotqa-dev100 from the KB), two more features: how rare the question's words are
    # in the KB ("specific") and how many facts come as close as the best one ("crowd").
    CONF_KB_INTERCEPT: float = -0.799
    CONF_KB_WEIGHTS: dict = field(
        default_factory=lambda: {
            "coverage": 0.833,
            "best": 0.534,
            "framed": 0.361,
            "support": -0.624,
            "wants_value": -1.383,
            "value_found": 0.481,
            "rare_missing": 0.557,
            "verdict": 0.375,
            "specific": 1.808,
            "crowd": -1.409,
        }
    )
    CROWD_WINDOW: float = 0.1  # facts this close to the closest one (coverage + meaning) compete with it...
    CROWD_FULL: int = 10  # ...and ten such make the "crowd" feature 1
    CONF_MAX: float = 0.95  # an extractive engine is never certain
    SNIPPETS_ONLY_CAP: float = 0.6  # below any threshold that matters: snippets are cut before the answer
    UNREAD_BRIDGE_CAP: float = 0.6  # a page about a name the facts bring up is still unread
    NO_VERDICT_CAP: float = 0.6  # a yes/no question the answer says neither yes nor no to is not settled
    UNKNOWN_NAME_CAP: float = 0.25  # a name in code the question asks about is in nothing read: not found
    BRIDGE_NAMES: int = 2  # the names the best facts bring up that count as bridges
    RARE_FACTOR: float = 1.5  # a word weighing 1.5 x the question's mean is what the question is about


OFFLINE = OfflineTuning()
