"""What the offline engine weighed of its facts is its own (its notes, saved with the session): a
session saved and read back weighs its facts as the run that found them did, so a resumed session
gives the report the run would have given."""

from __future__ import annotations

import json

from sleuth.utils.engine.offline import OfflineEngine
from sleuth.utils.engine.protocol import EngineContext
from sleuth.utils.registry import SEARCH_KB
from sleuth.utils.research.loopdata import Choice, Form, PendingStep, ToolItem, ToolOutcome, to_json
from sleuth.utils.research.state import keep_facts, new_shared, record_analysis, record_step, restored, saved_form

QUESTION = "How many times does the kettle boil water again after a cold refill?"
# one sentence under two headings: quoted twice in one step, framed (and rated) differently
GUIDE = """# Kettle guide

## Refilling

After a cold refill the kettle boils the water again up to 2 times before it switches off.

## Safety

The kettle switches off when it is lifted from its base.

## Boiling

After a cold refill the kettle boils the water again up to 2 times before it switches off.
"""
OTHER = "# Toaster guide\n\nThe toaster browns bread on both sides at once and switches off by itself."


def searched(shared, step: int, items: list[ToolItem]) -> float:
    """One KB step, analysed by the offline engine and kept in the store; its confidence."""
    pending = PendingStep(step, Choice(SEARCH_KB, QUESTION if step == 1 else f"{QUESTION} {step}"))
    shared["pending"] = pending
    record_step(shared, pending, ToolOutcome(True, items, "kb", retrieval_confidence=0.9), "kb")
    ctx = EngineContext.of(shared)
    analysis = OfflineEngine().analyze(ctx).data
    keep_facts(shared, analysis.facts, ctx.items, step)
    record_analysis(shared, analysis, step, "offline", False)
    return analysis.confidence_score


def kettle() -> list[ToolItem]:
    return [ToolItem("/docs/kettle.md", "Kettle guide", GUIDE, Form.KB, score=0.9, lead=True)]


def toaster() -> list[ToolItem]:
    return [ToolItem("/docs/toaster.md", "Toaster guide", OTHER, Form.KB, score=0.2, lead=True)]


def test_a_session_read_back_goes_on_as_the_run_that_found_its_facts():
    shared = new_shared(QUESTION)
    searched(shared, 1, kettle())
    before = OfflineEngine().report(EngineContext.of(shared)).data.text
    again = restored(json.loads(json.dumps(saved_form(shared), default=to_json)))
    assert [f.text for f in again["extracted_information"]] == [f.text for f in shared["extracted_information"]]
    assert OfflineEngine().report(EngineContext.of(again)).data.text == before
    assert "2 times" in before
    # the next step weighs the facts found before as the run did: the same confidence
    assert searched(again, 2, toaster()) == searched(shared, 2, toaster()) > 0.3
