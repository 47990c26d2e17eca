"""`kb search` (and MCP `kb_search`) scores mean the same whatever the number of hits: a few good
hits among many chunks are not all 1.000."""

from __future__ import annotations

import json

from conftest import ingest_notes

NOTES = {
    "press.md": "# Quillwort press\n\nThe Quillwort press squeezes fibre mats between two heated drums.\n\n"
    "## Settings\n\nThe default drum gap of the Quillwort press is 4 millimetres.\n",
    "drums.md": "# Quillwort drums\n\nThe Quillwort press drums are cast in bronze and heated by steam.\n",
    "pump.md": "# Quillwort pump\n\nThe brine pump of the Quillwort press runs at level 7 by default.\n",
}


def test_kb_search_scores_are_not_all_one_with_few_hits(tmp_path, cli):
    filler = {f"garden{i}.md": f"# Garden {i}\n\nTomatoes in bed {i} want water and sun.\n" for i in range(40)}
    ingest_notes(tmp_path, cli, {**NOTES, **filler})  # a few hits among many chunks
    proc = cli("kb", "search", "Quillwort drum gap", "--json")
    hits = json.loads(proc.stdout)["hits"]
    scores = [h["score"] for h in hits]
    assert len(hits) >= 2 and all(0 <= s < 1 for s in scores), scores
    assert scores[0] > scores[1], scores  # the best hit stands out
    text = cli("kb", "search", "Quillwort drum gap").stdout
    assert "1.000" not in text
