"""Leads to follow: after reading, the research looks up the name that leads to the answer (the second
hop of a two-hop question), not a name on a page that merely shares more of the question's words,
and never a fragment of text taken for a name; the answer cites the document that lead goes to."""

from __future__ import annotations

from sleuth.utils.engine.notes import Weighed
from sleuth.utils.engine.offline import OfflineEngine, salient_entities
from sleuth.utils.engine.protocol import EngineContext
from sleuth.utils.research.loopdata import Choice, PendingStep, Source, ToolItem
from sleuth.utils.text import term_set

QUESTION = "When was the painter of the mural Harbour Lights born?"
FILM = "\n\n".join(
    [
        "Harbour Lights is a 2014 mural of a lighthouse keeper on a northern island.",
        "Harbour Lights was the first mural made on the island, in the winter of that year.",
        "The mural Harbour Lights was born of a short story the island's lighthouse keeper wrote.",
        "Harbour Lights won the fair's prize for the best mural of the year.",
        "Harbour Lights was designed and painted by Mara Quist, with lettering by Leo Brandt.",
    ]
)
OTHER = (
    "Great Eastern Murals, the studio whose painter was born in Varnholm, restored the mural in 2015. "
    "Critics praised the mural that year."
)


def test_the_follow_up_looks_up_the_name_the_page_the_question_names_gives():
    # the mural's page names its painter in its fifth-best sentence; another page shares more of the
    # question's words ("painter was born") around another name: the next search is for the painter
    pages = [
        ToolItem("http://127.0.0.1:9/wiki/Harbour_Lights_mural", "Harbour Lights (mural)", FILM, "page", lead=True),
        ToolItem("http://127.0.0.1:9/wiki/Elm_Bay_news", "Elm Bay news", OTHER, "page", lead=True),
    ]
    sources = [Source(n, it.title, it.url) for n, it in enumerate(pages, 1)]
    for n, it in enumerate(pages, 1):
        it.source = n
    engine = OfflineEngine()
    read = EngineContext(QUESTION, step=PendingStep(1, Choice("crawl_url", ""), pages), sources=sources)
    found = engine.analyze(read).data
    assert any("painted by Mara Quist" in f.text for f in found.facts)
    searched = [{"action": "search_duckduckgo", "query_or_url": QUESTION, "ok": True}]
    ctx = EngineContext(
        QUESTION,
        actions=["search_duckduckgo", "send_to_hitl"],
        history=searched,
        facts=found.facts,
        notes=found.notes,  # what the engine weighed of each fact
        visited_urls=[it.url for it in pages],
        sources=sources,
    )
    got = engine.decide(ctx).data
    assert got.action == "search_duckduckgo"
    assert got.query_or_url.startswith("Mara Quist")


def test_a_lead_is_a_whole_name_not_a_run_of_capitalised_words():
    question = "Which hotel was the album by Ivo Brandt recorded in?"
    facts = [
        Weighed("The Jam Sessions is an album by Mara\n  Quell and Ivo Brandt recorded in 1969.", 1, 1.0, qcov=0.6),
        Weighed("The album came out on December 1, 1969 in Harwick, Norland. It sold well.", 2, 1.0, qcov=0.6),
        Weighed("Since 2006, the tapes have been kept by Falcon Records.", 3, 1.0, qcov=0.5),
        Weighed("The tapes were sold to Studio 88. In 1981 the hotel closed.", 5, 1.0, qcov=0.5),
        Weighed("The album was recorded at the hotel of Hajime Kinda", 4, 1.0, qcov=0.6, form="snippet"),
    ]
    leads = salient_entities(facts, term_set(question), limit=10)
    assert "Mara Quell" in leads and "Falcon Records" in leads and "Studio 88" in leads
    # not two names joined by "and", a date, two sentences, a sentence's first word, or a name cut short
    assert not [lead for lead in leads if "Brandt" in lead or "December" in lead or "." in lead or "Since" in lead]
    assert not [lead for lead in leads if lead.startswith("Hajime")]


def test_the_answer_cites_the_document_named_by_the_sentence_that_answers_not_by_any_sentence():
    # the canal's page names the lake it was dug for in the sentence that answers the first half of
    # the question, and a newer canal in a sentence that does not: the lake's page, which says what
    # else feeds it, is the second half of the answer
    question = "Which river feeds the lake that the Orvin Canal was first dug to drain?"
    canal = (
        "The Orvin Canal is a waterway built by the Orvin Board for carrying grain to the coast.\n\n"
        "The canal was first dug to drain Lake Tarrow on the Orvin plain.\n\n"
        "It has since been replaced by the Quay Canal."
    )
    lake = "Lake Tarrow is a shallow lake on the Orvin plain. It is fed by the Sedge river and by spring rain."
    newer = "The Quay Canal is a waterway that can drain every lake on the lower Orvin plain."
    docs = [("orvin-canal.md", "Orvin Canal", canal), ("tarrow.md", "Lake Tarrow", lake)]
    docs.append(("quay-canal.md", "Quay Canal", newer))
    items = [
        ToolItem(f"/docs/{name}", title, text, "kb", lead=True, source=n)
        for n, (name, title, text) in enumerate(docs, 1)
    ]
    sources = [Source(it.source, it.title, it.url, kind="internal", excerpt=it.text) for it in items]
    engine = OfflineEngine()
    read = EngineContext(question, step=PendingStep(1, Choice("search_kb", question), items), sources=sources)
    found = engine.analyze(read).data
    ctx = EngineContext(question, facts=found.facts, notes=found.notes, sources=sources, confidence=0.8)
    answer = engine.report(ctx).data.text
    assert "Sedge river and by spring rain. [2]" in answer
