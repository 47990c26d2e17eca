"""The interactive session driven for real through a pseudo-terminal (pexpect)."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import ROOT, assert_no_network, cli_env, web_env
from terminal import spawn_sleuth

pexpect = pytest.importorskip("pexpect")


def spawn(args, tmp_path, web, columns=120):
    return spawn_sleuth(args, tmp_path, columns=columns, **web_env(web))


def test_ask_research_feedback_second_report_sources_save_quit(tmp_path, web):
    child = spawn([], tmp_path, web)
    child.expect("Question: ")
    child.sendline("Were Rolf Amsel and Ned Marlow from the same country?")
    child.expect("researching")
    child.expect("web search")  # live progress: what is being asked
    child.expect("Answer")  # the Markdown report
    child.expect("Key sources")
    child.expect("Feedback")
    child.sendline("/sources")
    child.expect(r"\[1\] ")
    child.expect("Feedback")
    child.sendline("look into Ned Marlow's birthplace")
    child.expect("step")  # the loop restarts
    child.expect("Answer")  # the second report
    child.expect("feedback:")  # ...whose journey shows the feedback
    child.expect("Feedback")
    child.sendline("/save out.md")
    child.expect("saved out.md")
    child.expect("Feedback")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "out.md").read_text().startswith("# Were Rolf Amsel")
    sessions = list((tmp_path / "data" / "sessions").glob("*.json"))
    data = json.loads(sessions[0].read_text())
    assert data["status"] == "done" and len(data["reports"]) == 2
    assert_no_network(tmp_path)


def test_narrow_terminal_still_completes(tmp_path, web):
    child = spawn(["Who is Rolf Amsel?"], tmp_path, web, columns=30)
    child.expect("Answer")
    child.expect("Feedback")
    child.sendline("")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def spawn_kb(args, tmp_path):
    """Sleuth in a terminal, answering from a knowledge base of one note (no web)."""
    import subprocess

    env = cli_env(tmp_path, SLEUTH_TOOLS="kb")
    if not (tmp_path / "data" / "kb").exists():
        note = tmp_path / "starter.md"
        note.write_text("# Sourdough\n\nA sourdough starter is fed flour and water every day to stay active.\n")
        subprocess.run([sys.executable, str(ROOT / "main.py"), "kb", "ingest", str(note)], env=env, check=True)
    return spawn_sleuth(args, tmp_path, SLEUTH_TOOLS="kb")


def test_the_session_id_is_shown_and_the_way_back_is_said_on_leaving(tmp_path):
    child = spawn_kb(["How often is a sourdough starter fed?"], tmp_path)
    child.expect(r"session (\d{8}-\d{6}-[0-9a-f]+)")
    sid = child.match.group(1)
    child.expect("Feedback")
    child.sendline("/help")
    child.expect("/sources")  # /help lists the commands
    child.expect("/save FILE.md")
    child.expect("ignore \\[3\\]")
    child.expect("Feedback")
    child.sendline("")
    child.expect(f"reopen it with: .*main.py --resume {sid}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert_no_network(tmp_path)


def test_resuming_a_finished_session_shows_its_report_before_the_prompt(tmp_path):
    first = spawn_kb(["How often is a sourdough starter fed?"], tmp_path)
    first.expect(r"session (\d{8}-\d{6}-[0-9a-f]+)")
    sid = first.match.group(1)
    first.expect("Feedback")
    first.sendline("/quit")
    first.expect(pexpect.EOF)
    first.close()
    child = spawn_kb(["--resume", sid], tmp_path)
    child.expect("How often is a sourdough starter fed")  # the report's title...
    child.expect("Key sources")  # ...and the report itself
    child.expect("Feedback")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_the_live_panel_names_the_search_backend_being_asked(tmp_path):
    child = spawn_sleuth(["Who wrote Dune?"], tmp_path, SLEUTH_TOOLS="duckduckgo", SEARXNG_URL="http://127.0.0.1:1")
    child.expect(r"web search \(SearXNG\)")
    child.expect("Feedback")
    child.sendline("")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1  # no network here: every tool failed


def test_sources_at_the_prompt_number_the_sources_as_the_report_just_read(tmp_path):
    import re
    import subprocess

    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in {
        "a": "# Starter feeding\n\nA sourdough starter is fed flour and water every day.\n",
        "b": "# Starter care\n\nA sourdough starter kept in the fridge is fed once a week.\n",
        "c": "# Starter history\n\nSourdough starter was carried by gold miners, who fed it daily.\n",
    }.items():
        (notes / f"{name}.md").write_text(text)
    env = cli_env(tmp_path, SLEUTH_TOOLS="kb")
    subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "kb", "ingest", str(notes)], env=env, check=True, capture_output=True
    )

    def numbered(text: str) -> dict[int, str]:
        return {
            int(n): t for n, t in re.findall(r"\[(\d)\] (Starter \w+)", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text))
        }

    child = spawn_kb(["How often is a sourdough starter fed?"], tmp_path)
    child.expect("Key sources")
    child.expect("Feedback")
    first = numbered(child.before)
    child.sendline("ignore [2]")  # the second source of the report just read
    child.expect("Key sources")
    child.expect("Feedback")
    second = numbered(child.before)
    assert first[2] not in second.values() and list(second) == [1, 2]  # gone, and no gap where it stood
    child.sendline("/sources")
    child.expect("Feedback")
    listing = child.before.split("found but not in the report:")
    assert numbered(listing[0]) == second and numbered(listing[1]) == {3: first[2]}
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert_no_network(tmp_path)
