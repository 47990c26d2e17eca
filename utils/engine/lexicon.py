"""The English words the offline reader knows by name, kept apart from the algorithm (reader.py) as
trafilatura keeps its word lists apart from its extractor.

Only what a question's form says goes here: which kind of question it is. What a kind of question
prefers in a passage (a figure for "how many", a name for "who") is not written down: the reader
learns it from public question/answer data (bench/train_reader.py).
"""

from __future__ import annotations

# The kinds of question, by their opening words (after any "and"/"so"/"but"); the first that matches wins.
# Each kind is one feature the reader crosses with what a passage holds (a figure, a name, code, a date).
QUESTION_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("how_many", ("how many", "how much")),
    ("how_measure", ("how long", "how large", "how big", "how old", "how far", "how often", "how fast")),
    ("how", ("how",)),
    ("who", ("who", "whom", "whose")),
    ("when", ("when",)),
    ("where", ("where",)),
    ("why", ("why",)),
    ("which", ("which",)),
    ("what", ("what",)),
    ("yesno", ("is", "are", "was", "were", "do", "does", "did", "can", "could", "should", "will", "would", "has")),
)

# Words that say a sentence denies what it states: a passage that says what something does NOT do
# answers a yes/no question as well as one that says what it does.
NEGATIONS = frozenset({"not", "no", "never", "cannot", "nor", "without"})
