"""Follow-up searches look for what the question still lacks: a word of the question that nothing
read about its subject holds, searched with the subject. A name the notes bring up that does not
lead on from the question is not searched for, and when what was read holds every word of the
question the research stops instead of inventing searches."""

from __future__ import annotations

from conftest import ingest_notes

# A made-up tool's notes: besides what they say of the tool, they name other things in capitals.
NOTES = {
    "sync.md": "# Tallowby sync\n\nTallowby syncs every note as often as every ten minutes.\n",
    "about.md": "# Tallowby\n\nTallowby was written at Ferngate Studio by Orla Penhallow.\n\n"
    "Tallowby runs on Harlow OS and on Pemberton Linux.\n",
}


def _searches(cli, question: str) -> list[str]:
    """The knowledge-base searches of a research run over the notes, as its report's journey lists them."""
    # a threshold no answer reaches: every step is the engine's decision, not a confident stop
    proc = cli("--tools", "kb", "--confidence", "0.99", question)
    assert proc.returncode == 0, proc.stderr
    journey = proc.stdout.split("## Research journey", 1)[1].split("\n## ", 1)[0]
    return [line.split("“", 1)[1].split("”", 1)[0] for line in journey.splitlines() if "knowledge base “" in line]


def test_the_follow_up_search_holds_the_word_the_notes_lack_with_the_subject(cli, tmp_path):
    ingest_notes(tmp_path, cli, NOTES)
    searches = _searches(cli, "Does Tallowby encrypt synced notes?")
    follow_ups = searches[1:]
    assert follow_ups, searches
    # nothing read says "encrypt": the next search asks for it about the tool asked about...
    assert "encrypt" in follow_ups[0] and "Tallowby" in follow_ups[0]
    # ...and no search chases a name the notes happen to write
    assert not [s for s in searches if any(name in s for name in ("Ferngate", "Orla", "Harlow", "Pemberton"))]


def test_when_the_notes_hold_every_word_of_the_question_no_name_is_searched(cli, tmp_path):
    ingest_notes(tmp_path, cli, NOTES)
    searches = _searches(cli, "How often does Tallowby sync notes?")
    assert searches == ["How often does Tallowby sync notes?"]
