"""Messages and reports that say what happened and what to do (issue 25, points 3-5), as a user
sees them: subprocesses of `python main.py` under the network guard."""

from __future__ import annotations

import json
import re

QUESTION = "How often is a sourdough starter fed?"


def kb_of_three_notes(cli, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Starter feeding\n\nA sourdough starter is fed flour and water every day.\n")
    (notes / "b.md").write_text("# Starter care\n\nA sourdough starter kept in the fridge is fed once a week.\n")
    (notes / "c.md").write_text(
        "# Starter history\n\nSourdough starter was carried by gold miners, who fed it daily.\n"
    )
    assert cli("kb", "ingest", str(notes)).returncode == 0


def key_sources(report: str) -> list[int]:
    return [int(n) for n in re.findall(r"^- \[(\d+)\]", report.split("## Key sources", 1)[1], re.M)]


def test_a_rejected_source_leaves_key_sources_and_they_are_in_numeric_order(cli, tmp_path):
    kb_of_three_notes(cli, tmp_path)
    first = cli("--tools", "kb", "--json", QUESTION)
    sid = json.loads(first.stdout)["session_id"]
    report = cli("sessions", "export", sid).stdout
    listed = key_sources(report)
    assert listed == sorted(listed) and len(listed) == 3
    rejected = next(n for n in listed if f"[{n}]" not in report.split("## Research journey")[0])  # listed, not cited
    again = cli("--tools", "kb", "--resume", sid, "--feedback", f"ignore [{rejected}]")
    assert again.returncode == 0, again.stderr
    after = key_sources(again.stdout)
    assert rejected not in after and after == sorted(after) and after
    assert "numbers not listed are sources found but not used" in again.stdout
