"""What a new user sees at a terminal (pexpect): text from sources shown as text, and the ingest bar."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import ROOT, assert_no_network, cli_env
from terminal import spawn_sleuth

pexpect = pytest.importorskip("pexpect")

NOTE = (
    "Resetting the quillwort queue.\n\n"
    "If a <tray-name> is given, quillwort reset only clears the jobs waiting on the tray called <tray-name>.\n"
)
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def spawn(args, tmp_path):
    return spawn_sleuth(args, tmp_path, rows=50, columns=160, SLEUTH_TOOLS="kb", SLEUTH_ENGINE="offline")


def test_a_placeholder_from_a_source_shows_in_the_report_and_in_the_saved_markdown(tmp_path):
    from markdown_it import MarkdownIt

    note = tmp_path / "reset.txt"
    note.write_text(NOTE)
    env = cli_env(tmp_path)
    subprocess.run([sys.executable, str(ROOT / "main.py"), "kb", "ingest", str(note)], env=env, check=True)
    child = spawn(["What does quillwort reset do if a tray name is given?"], tmp_path)
    child.expect("Key sources")
    child.expect("Feedback")
    shown = ANSI.sub("", child.before)
    child.sendline("/save out.md")
    child.expect("saved out.md")
    child.expect("Feedback")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert "<tray-name>" in shown and "If a  is" not in shown
    saved = (tmp_path / "out.md").read_text()
    html = MarkdownIt().render(saved)  # what a Markdown viewer shows of the saved report
    assert "&lt;tray-name&gt;" in html
    assert_no_network(tmp_path)


def test_ingest_at_a_terminal_shows_a_bar_from_the_start(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(12):
        (docs / f"note{i}.md").write_text(f"# Note {i}\n\nQuillwort note number {i} about drums and pumps.\n")
    child = spawn(["kb", "ingest", str(docs)], tmp_path)
    child.expect("opening the knowledge base")  # the bar is up, with its count, before the store opens
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "0/12" in ANSI.sub("", child.before) or "12 added" in child.before
