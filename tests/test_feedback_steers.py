"""Feedback steers the research — what to drop, what to look for — and is never searched as typed
nor stored as knowledge; a source number that does not exist is said."""

from __future__ import annotations

import json

NOTES = {
    "press.md": "# Quillwort press\n\nThe Quillwort press squeezes fibre mats between two heated drums.\n\n"
    "## Settings\n\nThe default value of the drum gap is 4 millimetres; the brine pump runs at level 7.\n",
    "drums.md": "# Quillwort drums\n\nThe Quillwort press drums are cast in bronze and polished by hand.\n",
    "history.md": "# Quillwort history\n\nThe first Quillwort press was built in a harbour workshop.\n",
}
QUESTION = "How does the Quillwort press squeeze fibre mats?"


def setup(tmp_path, cli) -> str:
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text)
    assert cli("kb", "ingest", str(notes)).returncode == 0
    first = cli("--json", "--engine", "offline", "--tools", "kb", "--max-iterations", "2", QUESTION)
    assert first.returncode == 0, first.stderr
    return json.loads(first.stdout)["session_id"]


def test_feedback_is_read_for_what_to_drop_and_what_to_look_for(tmp_path, cli):
    sid = setup(tmp_path, cli)
    text = "the second source is irrelevant, look for the default value"
    again = cli("--json", "--resume", sid, "--feedback", text)
    assert again.returncode == 0, again.stderr
    saved = json.loads((tmp_path / "data" / "sessions" / f"{sid}.json").read_text())
    asked = [h["query_or_url"].lower() for h in saved["research_history"]]
    new = asked[saved["feedback_history"][-1]["after_iteration"] :]
    assert new and any("default value" in q for q in new), asked
    assert not any("irrelevant" in q or "second" in q for q in asked), asked
    assert saved["feedback_history"][-1]["rejected"]  # the second source is dropped
    # feedback is not knowledge: not a document, not a search hit
    listed = [json.loads(line) for line in cli("kb", "list", "--json").stdout.splitlines()]
    assert listed and all(d["kind"] == "file" for d in listed)
    hits = json.loads(cli("kb", "search", "irrelevant default value", "--json").stdout)["hits"]
    assert all(h["source_type"] == "file" for h in hits)


def test_a_source_number_that_does_not_exist_is_said(tmp_path, cli):
    sid = setup(tmp_path, cli)
    again = cli("--json", "--resume", sid, "--feedback", "ignore [40]")
    assert again.returncode == 0, again.stderr
    assert "[40]" in again.stderr and "no such source" in again.stderr


def test_feedback_stored_by_an_older_version_is_left_out_and_can_be_forgotten(tmp_path, cli):
    from sleuth.utils.config import load_settings
    from sleuth.utils.kb.store import KnowledgeBase

    sid = setup(tmp_path, cli)
    import argparse

    settings = load_settings(argparse.Namespace(data_dir=str(tmp_path / "data")), env={})
    kb = KnowledgeBase.for_settings(settings)  # what versions before this one stored for each feedback
    kb.add_document(
        source=f"feedback:{sid}:1",
        title="Feedback on: Quillwort",
        text="ignore [2] and [3], the drum gap default value is wrong",
        source_type="feedback",
        session_id=sid,
    )
    kb.close()
    hits = json.loads(cli("kb", "search", "drum gap default value", "--json").stdout)["hits"]
    assert hits and all(not h["source"].startswith("feedback:") for h in hits)
    gone = cli("kb", "forget", "--feedback", "--yes")
    assert gone.returncode == 0, gone.stderr
    assert "forgot" in gone.stdout and f"feedback:{sid}:1" in gone.stdout
    assert all(json.loads(x)["kind"] == "file" for x in cli("kb", "list", "--json").stdout.splitlines())
