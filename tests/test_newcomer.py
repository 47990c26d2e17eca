"""What tripped a new user, each through the command line: global options with every command, help,
typos, session ids, -q, the web that cannot be reached, the exit status when every tool failed, and
the extensions read."""

from __future__ import annotations

import json
import re

import pytest
from conftest import QUILLWORT_NOTES as NOTES
from conftest import ROOT, ingest_notes

# -- 6. Global settings are accepted by every command


def test_global_settings_are_accepted_by_every_command(tmp_path, cli):
    ingest_notes(tmp_path, cli, NOTES)
    alias = ["--engine", "offline", "--tools", "kb", "--confidence", "0.8", "--max-iterations", "3", "--no-cache"]
    for command in (["kb", "stats"], ["kb", "search", "drum gap"], ["kb", "list"], ["sessions", "list"]):
        proc = cli(*alias, *command)
        assert proc.returncode == 0, (command, proc.stderr)
        after = cli(*command, "--model", "m", "--time-limit", "60", "--allow-private-hosts")
        assert after.returncode == 0, (command, after.stderr)
    assert "--engine" not in cli("kb", "stats", "--help").stdout  # left out of the command's own help
    refused = cli("kb", "stats", "-o", "x.md")  # an option of one command only is still refused
    assert refused.returncode == 2 and "does not use -o" in refused.stderr


# -- 10. The small things


def test_help_lists_every_kb_and_sessions_command(cli):
    top = cli("--help").stdout
    for word in ("ingest", "search", "list", "remove", "forget", "stats", "reset"):
        assert re.search(rf"kb .*\b{word}\b", top), word
    for word in ("list", "show", "export", "delete", "prune"):
        assert re.search(rf"sessions .*\b{word}\b", top), word


def test_batch_help_is_the_batch_help(cli):
    proc = cli("batch", "--help")
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage:") and "batch" in proc.stdout.splitlines()[0]
    assert "--jobs" in proc.stdout and "--resume" not in proc.stdout and "commands (" not in proc.stdout


@pytest.mark.parametrize(
    ("words", "hint"), [(["kb", "serach", "drum gap"], "search"), (["sesions", "list"], "sessions")]
)
def test_a_mistyped_command_word_gets_a_suggestion_and_is_never_researched(tmp_path, cli, words, hint):
    proc = cli(*words)
    assert proc.returncode == 2
    assert f"did you mean {hint}?" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "data" / "sessions").exists()


def test_a_question_whose_first_word_is_one_letter_off_a_command_is_researched(cli):
    proc = cli("--tools", "duckduckgo", "match", "results", "today")  # a word, not a slip of `batch`
    assert "did you mean" not in proc.stderr and "researching: match results today" in proc.stderr


def test_the_random_part_of_a_session_id_finds_it(tmp_path, cli):
    ingest_notes(tmp_path, cli, NOTES)
    proc = cli("--json", "--engine", "offline", "--tools", "kb", "--max-iterations", "1", "What drives the drums?")
    sid = json.loads(proc.stdout)["session_id"]
    shown = cli("sessions", "show", sid.rsplit("-", 1)[1][:5])
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("# What drives the drums?")


def test_quiet_prints_no_engine_line(tmp_path, cli):
    ingest_notes(tmp_path, cli, NOTES)
    proc = cli("-q", "--tools", "kb", "--max-iterations", "1", "What drives the drums?")
    assert proc.returncode == 0 and proc.stdout
    assert proc.stderr == ""


def test_no_web_retries_once_the_web_cannot_be_reached_and_the_exit_status_says_so(tmp_path, cli):
    proc = cli("--json", "--engine", "offline", "--tools", "duckduckgo,crawl,wiki", "Who wrote the novel Dune?")
    assert proc.returncode == 1, proc.stderr  # every tool failed: not a success
    assert proc.stderr.count("the web could not be reached") == 1
    sid = json.loads(proc.stdout)["session_id"]
    history = json.loads((tmp_path / "data" / "sessions" / f"{sid}.json").read_text())["research_history"]
    down = [i for i, h in enumerate(history) if h["errors"] and all(e["kind"] == "network" for e in h["errors"])]
    assert down == [len(history) - 1], history  # the step that found the web down was the last one
    assert not any(h["ok"] for h in history)


def test_every_extension_read_is_listed_in_help_and_readme(cli):
    from sleuth.utils.kb.readers import FILE_TYPES

    help_text = " ".join(cli("kb", "ingest", "--help").stdout.split())
    readme = (ROOT / "README.md").read_text()
    for ext in FILE_TYPES:
        assert re.search(rf"(?<![\w.]){re.escape(ext)}(?![\w.])", help_text), ext
        assert f"`{ext}`" in readme or f" {ext} " in readme, ext
    assert "is not read" not in readme
