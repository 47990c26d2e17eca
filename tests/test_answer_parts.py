"""What a question asks for, each part of it: an option written in quotes or brackets is the option a
"which option" question asks for, and a two-part question's answer holds what each part asks for."""

from __future__ import annotations

from sleuth.utils.engine.notes import Weighed
from sleuth.utils.engine.offline import answer_facts
from sleuth.utils.engine.passages import question_weights
from sleuth.utils.research.loopdata import Source

DOCS = [Source(1, "Writing letters", "/docs/letters.txt"), Source(2, "Options", "/docs/options.txt")]


def test_an_option_written_in_quotes_or_brackets_answers_which_option_to_use():
    # both sentences are about compressing the archive; the one that names the option does so in
    # brackets and in quotes, as manuals do: it opens the answer
    q = "Which option makes the archiver compress the archive it writes?"
    weights = question_weights(q)
    about = Weighed("The archiver can compress the archive it writes, which saves space.", 1, 0.9, qcov=0.8)
    for option in ('Give it the "-z" option to compress the archive.', "Compress the archive (-z) to save space."):
        names = Weighed(option, 2, 0.8, qcov=0.6)
        chosen, _ = answer_facts(q, [about, names], DOCS, weights)
        assert chosen[0] is names


def test_a_two_part_question_is_answered_with_the_command_as_well_as_the_default():
    # passages about signed letters outrank the one that gives the command (on a third page); an
    # option's entry gives the default: the answer holds the command as well as the default
    q = "How do I sign a letter from inside the mailer, and what signing scheme applies unless I pick one?"
    weights = question_weights(q)
    docs = DOCS + [Source(3, "Starting", "/docs/starting.txt"), Source(4, "Security", "/docs/security.txt")]
    texts = [
        (1, 0.45, "The mailer adds a stamp line to the letter by which it recognizes that the letter was signed."),
        (1, 0.5, "When the mailer reads a signed letter, it checks it with the scheme the letter was signed with."),
        (4, 0.44, "A signed letter is not safe from a user who can read the mailer's key folder."),
        (2, 0.6, "'signscheme' string (default \"ember7\"): Scheme used for signing when a letter is sent."),
        (3, 0.44, 'To start writing a new letter with a signature, use the "-g" argument to start the mailer.'),
    ]
    facts = [Weighed(text, n, 0.9 - 0.01 * i, qcov=qcov) for i, (n, qcov, text) in enumerate(texts)]
    chosen, _ = answer_facts(q, facts, docs, weights)
    said = " ".join(f.text for f in chosen)
    assert '"-g" argument' in said
    assert "ember7" in said
