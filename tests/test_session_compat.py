"""A session saved by Sleuth 0.1.0 (before the package layout) still loads, shows and resumes.
The fixture was written by that version: a KB question, then one feedback round."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "session-v0.1.0.json"
SID = json.loads(FIXTURE.read_text())["session_id"]


def _data_dir(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    (data / "sessions").mkdir(parents=True)
    shutil.copy(FIXTURE, data / "sessions" / f"{SID}.json")
    return data


def test_an_old_session_is_listed_and_shown_as_it_was_saved(cli, tmp_path):
    data = _data_dir(tmp_path)
    saved = json.loads(FIXTURE.read_text())
    listed = cli("sessions", "list", data_dir=data)
    assert listed.returncode == 0 and SID in listed.stdout and "stall" in listed.stdout
    shown = cli("sessions", "show", SID, data_dir=data)
    assert shown.returncode == 0 and shown.stdout == saved["final_answer"]
    as_json = cli("sessions", "show", SID, "--json", data_dir=data)
    assert json.loads(as_json.stdout)["reports"] == saved["reports"]


def test_an_old_session_takes_feedback_and_researches_again(cli, tmp_path):
    data = _data_dir(tmp_path)
    note = tmp_path / "stopping.md"
    note.write_text("# Stopping\n\nResearch stops when the confidence threshold of 0.7 is reached.\n")
    assert cli("kb", "ingest", str(note), data_dir=data).returncode == 0  # --tools kb needs something to search
    proc = cli(
        "--resume", SID, "--feedback", "what is the confidence threshold?", "--tools", "kb", "--json", data_dir=data
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["session_id"] == SID and out["answer"]
    after = json.loads((data / "sessions" / f"{SID}.json").read_text())
    assert len(after["reports"]) == 3 and after["feedback_history"][-1]["text"] == "what is the confidence threshold?"


def test_a_trimmed_session_file_is_completed_with_defaults():
    from sleuth.utils.research.state import restored

    shared = restored({"session_id": "s1", "original_query": "Q?", "sources": None, "elapsed_ms": 12.5})
    assert shared["session_id"] == "s1" and shared["original_query"] == "Q?"
    assert shared["sources"] == [] and shared["token_usage"]["total"] == 0  # null and missing: defaults
    assert shared["elapsed_ms"] == 12.5  # a number is a number
