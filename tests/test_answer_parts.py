"""What a question asks for, each part of it: an option written in quotes or brackets is the option a
"which option" question asks for."""

from __future__ import annotations

from sleuth.utils.engine.offline import answer_facts
from sleuth.utils.engine.passages import question_weights
from sleuth.utils.research.loopdata import Fact, Source

DOCS = [Source(1, "Editing files", "/docs/editing.txt"), Source(2, "Options", "/docs/options.txt")]


def test_an_option_written_in_quotes_or_brackets_answers_which_option_to_use():
    # both sentences are about compressing the archive; the one that names the option does so in
    # brackets and in quotes, as manuals do: it opens the answer
    q = "Which option makes the archiver compress the archive it writes?"
    weights = question_weights(q)
    about = Fact("The archiver can compress the archive it writes, which saves space.", 1, 0.9, qcov=0.8)
    for option in ('Give it the "-z" option to compress the archive.', "Compress the archive (-z) to save space."):
        names = Fact(option, 2, 0.8, qcov=0.6)
        chosen, _ = answer_facts(q, [about, names], DOCS, weights)
        assert chosen[0] is names
