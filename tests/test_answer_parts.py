"""What a question asks for, each part of it: an option written in quotes or brackets is the option a
"which option" question asks for, and a two-part question's answer holds what each part asks for."""

from __future__ import annotations

from sleuth.utils.engine.notes import Weighed
from sleuth.utils.engine.offline import answer_facts
from sleuth.utils.engine.passages import question_weights
from sleuth.utils.research.loopdata import Source

DOCS = [Source(1, "Editing files", "/docs/editing.txt"), Source(2, "Options", "/docs/options.txt")]


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
    # passages about encrypted files outrank the one that gives the command (on a third page); an
    # option's entry gives the default: the answer holds the command as well as the default
    q = "How do I encrypt a file from inside the editor, and which encryption method does it use unless I change it?"
    weights = question_weights(q)
    docs = DOCS + [Source(3, "Starting", "/docs/starting.txt"), Source(4, "Security", "/docs/security.txt")]
    texts = [
        (1, 0.45, "The editor adds a magic string to the file by which it recognizes that the file was encrypted."),
        (1, 0.5, "When the editor reads an encrypted file, it uses the method the file was written with."),
        (4, 0.44, "An encrypted file is not safe from a user who can read the editor's memory."),
        (2, 0.6, "'cryptmethod' string (default \"blowfish2\"): Method used for encryption when a file is written."),
        (3, 0.44, 'To start editing a new file with encryption, use the "-x" argument to start the editor.'),
    ]
    facts = [Weighed(text, n, 0.9 - 0.01 * i, qcov=qcov) for i, (n, qcov, text) in enumerate(texts)]
    chosen, _ = answer_facts(q, facts, docs, weights)
    said = " ".join(f.text for f in chosen)
    assert '"-x" argument' in said
    assert "blowfish2" in said
