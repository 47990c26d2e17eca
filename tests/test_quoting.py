"""What an answer quotes reads on its own and comes from what was read: a sentence that does not name
its subject is quoted under the heading that does; a search snippet that only repeats the question's
words is not quoted; a word capitalised because a sentence starts there is not a lead to search for.
Every example is made up."""

from __future__ import annotations

import json
from pathlib import Path

from sleuth.utils.engine.notes import Weighed
from sleuth.utils.engine.offline import OfflineEngine, salient_entities
from sleuth.utils.engine.protocol import EngineContext
from sleuth.utils.research.loopdata import Choice, PendingStep, Source, ToolItem
from sleuth.utils.text import term_set


def _kept(question: str, item: ToolItem, action: str = "search_kb") -> list[str]:
    ctx = EngineContext(
        question,
        step=PendingStep(1, Choice(action, question), [item]),
        sources=[Source(item.source, item.title, item.url)],
    )
    return [f.text for f in OfflineEngine().analyze(ctx).data.facts]


def _manual(name: str, title: str, text: str) -> ToolItem:
    """A page of a made-up manual, found in the knowledge base."""
    return ToolItem(url=f"/docs/{name}", title=title, text=text, form="kb", source=1, score=1.0)


def test_an_entrys_sentence_is_quoted_under_the_term_it_describes():
    # "The default value is 40." alone does not say what it is the default of: its entry's term does
    text = (
        "# Spooler settings\n\n## queue.depth\n\nThe default value is 40, enough for most print servers.\n\n"
        "## queue.age\n\nThe default value is 7 days."
    )
    item = _manual("settings.md", "Spooler settings", text)
    kept = _kept("Which value does queue.depth take by default?", item)
    assert "queue.depth: The default value is 40, enough for most print servers." in kept


def test_a_later_sentence_of_an_entry_is_quoted_under_its_term_too():
    # the entry's second sentence says what the option does, and says it of "this option"
    text = (
        "# Spooler options\n\n--retry-gap=<s>\n\nWait this long between two tries of a job. Giving this "
        "option turns on the slow-close mode for every queue.\n\n--quiet\n\nPrint nothing but errors."
    )
    item = _manual("options.md", "Spooler options", text)
    kept = _kept("Does a retry gap turn on the slow-close mode?", item)
    assert "--retry-gap=<s>: Giving this option turns on the slow-close mode for every queue." in kept


def test_a_sentence_that_names_its_subject_is_quoted_as_written():
    text = "# Spooler settings\n\n## queue.depth\n\nThe queue.depth setting holds at most 40 jobs by default."
    item = _manual("settings.md", "Spooler settings", text)
    kept = _kept("How many jobs does queue.depth hold by default?", item)
    assert "The queue.depth setting holds at most 40 jobs by default." in kept


def test_a_search_snippet_in_the_questions_own_words_is_not_quoted():
    q = "How many jobs can the Orvin spooler hold in its queue?"
    echo = ToolItem(
        url="https://example.org/forum/42",
        title="Orvin spooler queue",
        text="Orvin spooler queue. How many jobs can the Orvin spooler hold in its queue?",
        form="snippet",
        source=1,
    )
    assert _kept(q, echo, action="duckduckgo") == []
    told = ToolItem(
        url="https://example.org/manual",
        title="Orvin spooler manual",
        text="Orvin spooler manual. The Orvin spooler holds up to 40 jobs in its queue.",
        form="snippet",
        source=1,
    )
    assert any("40 jobs" in k for k in _kept(q, told, action="duckduckgo"))


def test_a_word_capitalised_because_a_sentence_starts_there_is_not_a_lead():
    # "See" and "Note" open sentences; the facts write them in lower case too: words, not names
    facts = [
        Weighed(
            "See the retry table for the limits. Note that the spooler was written by Mara Quell.",
            1,
            1.0,
            qcov=0.6,
        ),
        Weighed("Users see a note in the log when the spooler stops a job.", 2, 0.8, qcov=0.3),
    ]
    leads = salient_entities(facts, term_set("Who wrote the print spooler?"))
    assert "Mara Quell" in leads
    assert "See" not in leads and "Note" not in leads


def test_the_readmes_own_question_is_answered_with_the_stopping_rule_first(cli):
    # the README's demo: its own docs in the KB; the passage that opens the answer says when a run stops,
    # not the Python API's signature (which mentions research and stopping too)
    root = Path(__file__).resolve().parents[1]
    assert cli("kb", "ingest", str(root / "README.md"), str(root / "docs")).returncode == 0
    proc = cli("--json", "--tools", "kb", "How does Sleuth decide when to stop researching?")
    assert proc.returncode == 0, proc.stderr
    opening = json.loads(proc.stdout)["answer"].split("[")[0]
    assert "stop" in opening.lower()
    assert "sleuth.research(" not in opening
