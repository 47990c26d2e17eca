"""Short forms a document set defines: a question in the long words ("left-hand side") is answered by
the passage that writes the short form ("lhs") the documents say it stands for."""

from __future__ import annotations

import json
import re

from sleuth.utils.engine.passages import question_weights, short_forms

NOTATION = """# Notation

## Key bindings

{lhs} means left-hand side. {rhs} means right-hand side.
A binding maps the keys of its left-hand side to the keys of its right-hand side.
"""

LIMITS = """# Limits

## Sizes

Maximum line length 65536 characters.
Maximum lhs of a binding 50 characters.
Maximum number of open windows 200.
"""

WINDOWS = """# Windows

## Layout

The left-hand side of the screen shows the file tree, and the right-hand side shows the editor.
A binding can move the cursor to the left-hand side of the screen.
The sign column on the left-hand side of a window can be 2 to 9 characters wide.
A binding shown on the left-hand side of the status line can be as long as 12 characters.
"""


def test_a_question_in_the_long_words_is_answered_by_the_passage_with_the_short_form(cli, tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in {"notation.md": NOTATION, "limits.md": LIMITS, "windows.md": WINDOWS}.items():
        (folder / name).write_text(text, encoding="utf-8")
    assert cli("kb", "ingest", str(folder)).returncode == 0
    proc = cli("--json", "--tools", "kb", "How long can the left-hand side of a binding be?")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    opening = data["answer"].split("[")[0]
    assert "Maximum lhs of a binding 50 characters." in opening
    by_n = {s["n"]: s["url"] for s in data["sources"]}
    first = re.search(r"\[(\d+)\]", data["answer"]).group(1)
    assert by_n[int(first)].endswith("limits.md")


def test_a_short_form_counts_only_where_the_documents_spell_it_out():
    weights = question_weights("Which process writes the write-ahead log to disk?")
    texts = [
        "The Write-Ahead Log (WAL) records every change before the data files do.",
        "The server process (PID 1) starts the others.",  # a bracket that is not a short form
        "{n} means a count.",  # a short form whose long words the question does not use
        "This means the log is written to disk first.",  # not a short form: a word
    ]
    assert short_forms(texts, weights) == {"wal": {"write", "ahead", "log"}}
