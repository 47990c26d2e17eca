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


def test_an_old_session_saved_mid_step_resumes_with_its_step_and_facts_read_the_new_way(cli, tmp_path):
    """Before the loop's data had types, an item's and a fact's form was saved as `kind`; such a file,
    saved while a step was in flight, still resumes, and its facts keep saying what they were read from."""
    data = _data_dir(tmp_path)
    path = data / "sessions" / f"{SID}.json"
    saved = json.loads(path.read_text())
    item = {"title": "Notes", "url": "notes/a.md", "text": "The threshold is 0.7.", "kind": "kb", "source": 1}
    saved["pending"] = {"action": "search_kb", "query_or_url": "threshold", "reasoning": "", "step": 9}
    saved["pending"].update(remapped_from=None, items=[item], tool_used="kb")
    saved["status"] = "interrupted"
    path.write_text(json.dumps(saved))
    as_json = json.loads(cli("sessions", "show", SID, "--json", data_dir=data).stdout)
    assert as_json["pending"]["items"][0]["form"] == "kb" and as_json["pending"]["step"] == 9
    kinds = {f.get("kind") for f in saved["extracted_information"]}
    assert {f["form"] for f in as_json["extracted_information"]} == kinds and "kind" not in as_json[
        "extracted_information"
    ][0]
    note = tmp_path / "stopping.md"
    note.write_text("# Stopping\n\nResearch stops when the confidence threshold of 0.7 is reached.\n")
    assert cli("kb", "ingest", str(note), data_dir=data).returncode == 0  # --tools kb needs something to search
    proc = cli("--resume", SID, "--tools", "kb", "--json", data_dir=data)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"]


def test_an_old_sessions_sources_and_facts_show_as_saved_with_defaults_for_what_it_lacks(cli, tmp_path):
    """Sources and facts are typed in memory; the JSON a session shows (and saves) keeps their keys and
    values, fills in what an older file lacks and leaves out what this version does not know."""
    data = _data_dir(tmp_path)
    path = data / "sessions" / f"{SID}.json"
    saved = json.loads(path.read_text())
    path.write_text(json.dumps({**saved, "sources": [{**s, "colour": "red"} for s in saved["sources"]]}))
    as_json = json.loads(cli("sessions", "show", SID, "--json", data_dir=data).stdout)
    assert as_json["sources"] == [{**s, "excerpt": ""} for s in saved["sources"]]  # saved before excerpts
    fact = ("text", "source", "score", "step", "form")  # what a fact is; the offline engine's notes go with it
    facts = [{("form" if k == "kind" else k): v for k, v in f.items()} for f in saved["extracted_information"]]
    assert as_json["extracted_information"] == [{k: v for k, v in f.items() if k in fact} for f in facts]
    notes = as_json["engine_notes"]["offline"]["facts"]
    assert [n["qcov"] for ns in notes.values() for n in ns] == [f["qcov"] for f in facts if "qcov" in f]
