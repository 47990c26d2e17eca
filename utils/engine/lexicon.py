"""The English words the offline engine knows by name, kept apart from the algorithm as trafilatura
keeps its word lists apart from its extractor. Everything else it knows of English is the stopword
list (utils/text.py) and what the sentence model and the reader learned from public data.

Only what a question's form says, and the few function words that tell a name from a word,
go here. What a kind of question prefers in a passage is not written down as a rule per question
shape: a question asks for a kind of value (values.py) when it names the kind ("default",
"version", "option") or opens as a measure does ("how many").
"""

from __future__ import annotations

# The kinds of question, by their opening words (after any "and"/"so"/"but"); the first that matches wins.
# Each kind is one feature the trained reader crosses with what a passage holds (a figure, a name, code, a date).
# "how" followed by a word that is not a function word ("how long", "how often") asks for a measure
# (values.question_kind: "how_measure"); "how do I", "how to" ask how.
QUESTION_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("how_many", ("how many", "how much")),
    ("how", ("how",)),
    ("who", ("who", "whom", "whose")),
    ("when", ("when",)),
    ("where", ("where",)),
    ("why", ("why",)),
    ("which", ("which",)),
    ("what", ("what",)),
    ("yesno", ("is", "are", "was", "were", "do", "does", "did", "can", "could", "should", "will", "would", "has")),
)

# Auxiliary verbs: a question opening with one is answered yes or no (the yes/no kind above, and "have").
AUXILIARIES = frozenset({*QUESTION_KINDS[-1][1], "have", "had"})

# The kind of value a question asks for, by a word it uses for the kind: the name of the value
# ("default", "version") or of the thing documentation lists values of ("option", "command"), the
# latter after "which"/"what" ("which option ..."). A question opening as a measure (how_many,
# how_measure) asks for a number; "when" for a date or release.
VALUE_WORDS: tuple[tuple[str, frozenset[str]], ...] = (
    ("default", frozenset({"default", "defaults"})),
    ("when", frozenset({"version", "release", "year"})),
    ("number", frozenset({"maximum", "minimum", "limit", "size", "number"})),
    ("code", frozenset({"option", "flag", "command", "variable", "setting", "function", "parameter", "tool"})),
)

# A clause that asks for what holds when nothing is set ("unless I set it", "out of the box"): the
# question asks for a default, and the clause's words are not its subject.
DEFAULT_CLAUSES = ("unless", "otherwise", "out of the box")

# A limit asked with a superlative and "can" ("the longest name it can take") or as "how long can ...
# be": documentation states it as a maximum or a minimum of a dimension.
SUPERLATIVES = {
    "longest": "maximum length",
    "largest": "maximum size",
    "biggest": "maximum size",
    "highest": "maximum",
    "most": "maximum",
    "shortest": "minimum length",
    "smallest": "minimum size",
    "lowest": "minimum",
    "fewest": "minimum",
    "least": "minimum",
}
DIMENSIONS = {"long": "maximum length", "large": "maximum size", "big": "maximum size", "high": "maximum"}

# Figures written as words ("two copies", "five seconds").
NUMBER_WORDS = frozenset(
    {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "hundred", "thousand", "million"}
)

# Who a question asks for: "how do I ...", "how can you ..." asks how to do a thing, which documentation
# answers with a command or an option (values.asks_for: "code").
PERSONS = frozenset({"i", "you", "we"})

# Words that say a sentence denies what it states: a passage that says what something does NOT do
# answers a yes/no question as well as one that says what it does.
NEGATIONS = frozenset({"not", "no", "never", "cannot", "nor", "without"})

# A sentence opening with one of these is about what the text before it (its document's title, the
# heading it sits under) names.
REFERS_BACK = frozenset({"he", "she", "it", "they", "his", "her", "its", "their", "this", "these"})

# Capitalised, but not a name: month names start dates ("March 3"), and a sentence may open with these.
NOT_NAMES = frozenset(
    {"january", "february", "march", "april", "june", "july", "august", "september", "october", "november"}
    | {"december", "since", "following", "according", "despite", "none"}
)

# Words that tie two things a yes/no question compares ("both", "the same"), not a property of either.
LINKING = frozenset({"same", "both", "either", "also", "neither"})
