"""Which facts the offline report states for a two-hop question (utils/engine/select.py) and its
yes/no verdicts (utils/engine/verdict.py), through the real loop on a small knowledge base of HTML
pages: the pair of documents that answers together is cited, names are matched whole (the longest
wins), one document per name, a document's opening sentence (or one opening with a pronoun) counts
as being about its title, the document a fact names keeps its opening sentence, and a yes/no
comparison of two named things is answered from both facts with both cited."""

from __future__ import annotations

import io
from pathlib import Path

from sleuth.flow import run_flow
from sleuth.utils.research.state import new_shared


def page(title: str, body: str) -> str:
    return (
        f"<html><head><title>{title}</title></head><body><nav><a href='/index.html'>Home</a></nav>"
        f"<article><h1>{title}</h1><p>{body}</p></article></body></html>"
    )


def ask(tmp_path: Path, pages: dict[str, str], question: str, steps: int = 8) -> tuple[dict, dict[str, int]]:
    from sleuth.utils.cli.ui import PlainUI
    from sleuth.utils.config import Settings, parse_tools
    from sleuth.utils.engine.offline import OfflineEngine
    from sleuth.utils.runtime import Runtime, Tools

    wiki = tmp_path / "wiki"
    wiki.mkdir(parents=True)
    for i, (title, body) in enumerate(pages.items()):
        (wiki / f"p{i}.html").write_text(page(title, body))
    s = Settings(
        engine="offline", data_dir=tmp_path / "data", tools=parse_tools("kb"), remember=False, max_iterations=steps
    )
    tools = Tools(s)
    tools.kb().ingest_paths([wiki])
    rt = Runtime(settings=s, engine=OfflineEngine(), ui=PlainUI(err=io.StringIO(), out=io.StringIO()), tools=tools)
    shared = new_shared(question, engine="offline")
    run_flow(rt, shared, "query")
    tools.close()
    return shared, {src.title: src.n for src in shared["sources"]}


def cites(shared: dict, n: int) -> bool:
    return f"[{n}]" in shared["answer"]


def test_a_name_inside_a_longer_title_is_not_a_mention_of_its_own(tmp_path):
    shared, n = ask(
        tmp_path,
        {
            "Hold Fast, Sail Home": '"Hold Fast, Sail Home" is a single by the band Quillfeather, released in 2003.',
            "Sail Home": '"Sail Home" is a ballad by the singer Dora Linde, released as a single in 2009.',
            "Quillfeather (band)": "Quillfeather is a rock band formed in Norland in 1983 by four school friends.",
            "Home Waters": "Home Waters is a single by Anna Sol about sailing, released in 2011.",
        },
        'When was the single "Hold Fast, Sail Home" by Quillfeather released?',
    )
    assert cites(shared, n["Hold Fast, Sail Home"]) and cites(shared, n["Quillfeather (band)"])
    assert not cites(shared, n["Sail Home"])  # its title is only part of the question's longer title
    assert "2003" in shared["answer"]
    assert shared["citations"]["unsupported"] == 0


def test_the_opening_sentence_is_about_the_title_and_one_document_per_name(tmp_path):
    shared, n = ask(
        tmp_path,
        {
            "Ada Brisk": "Adaline Maren Brisk (born 1950) is a Norlish sculptor and teacher.",
            "Ada Brisk (film)": "Ada Brisk is a 1990 documentary film about the sculptor Ada Brisk.",
            "Tom Vell": "Tom Vell (born 1960) is a Norlish poet and translator.",
            "Vell Street": "Vell Street is a street in Kessa named after a merchant.",
        },
        "Were Tom Vell and Ada Brisk from the same country?",
    )
    # the person's page never repeats "Ada Brisk", yet it is the page about her
    assert cites(shared, n["Ada Brisk"]) and cites(shared, n["Tom Vell"])
    assert not cites(shared, n["Ada Brisk (film)"])  # one document per name: the main one
    assert shared["answer"].count("Norlish") >= 2


def test_the_document_a_fact_names_is_the_second_half(tmp_path):
    shared, n = ask(
        tmp_path,
        {
            "Glass Harbor": "Glass Harbor is a 2004 mural painted by Oren Vale on a harbour wall.",
            "Oren Vale": "Oren Vale (born 1961) is an artist who was born and raised in Varnholm.",
            "Harbor Days": "Harbor Days is an art fair where the painter of each mural is born anew, they say.",
            "Glass Lake": "Glass Lake is a lake where a mural was once painted.",
        },
        "In which city was the painter of the mural Glass Harbor born?",
    )
    assert cites(shared, n["Glass Harbor"]) and cites(shared, n["Oren Vale"])
    assert "Varnholm" in shared["answer"]
    assert shared["citations"]["unsupported"] == 0


def test_a_yes_no_comparison_is_answered_from_both_facts_and_cites_both(tmp_path):
    pages = {
        "Ada Brisk": "Adaline Maren Brisk (born 1950) is a Norlish sculptor and teacher.",
        "Tom Vell": "Tom Vell (born 1960) is a Norlish poet and translator.",
        "Rui Osk": "Rui Osk (born 1955) is a Vestian painter who lives in Lorn.",
        "Vell Street": "Vell Street is a street in Kessa named after a merchant.",
    }
    shared, n = ask(tmp_path / "a", pages, "Were Tom Vell and Ada Brisk from the same country?")
    assert shared["answer"].startswith("Yes.")
    assert cites(shared, n["Tom Vell"]) and cites(shared, n["Ada Brisk"])
    assert shared["citations"]["unsupported"] == 0

    shared, n = ask(tmp_path / "b", pages, "Were Rui Osk and Ada Brisk from the same country?")
    assert shared["answer"].startswith("No.")
    assert "Vestian" in shared["answer"] and "Norlish" in shared["answer"]
    assert cites(shared, n["Rui Osk"]) and cites(shared, n["Ada Brisk"])
    assert shared["citations"]["unsupported"] == 0


def test_a_comparison_of_two_people_is_not_settled_by_a_film_of_the_same_name(tmp_path):
    # the film's page repeats the question's words and ranks first, but it is not the person; the
    # question does not ask about a film, so the person's page is what the verdict compares
    pages = {
        "Ada Brisk": "Adaline Maren Brisk (born 1950) is a Norlish sculptor and teacher.",
        "Ada Brisk (film)": "Ada Brisk is a 1990 Ostrish documentary film by Tom Vell about the sculptor Ada Brisk.",
        "Tom Vell": "Tom Vell (born 1960) is an Ostrish film maker and poet.",
    }
    shared, n = ask(tmp_path, pages, "Were Tom Vell and Ada Brisk from the same country?")
    assert shared["answer"].startswith("No.")
    assert "Norlish" in shared["answer"] and "Ostrish" in shared["answer"]
    assert cites(shared, n["Ada Brisk"]) and cites(shared, n["Tom Vell"])


def test_a_yes_no_question_about_a_named_property_checks_both_things(tmp_path):
    pages = {
        "Kestrel Field": "Kestrel Field is a regional airport two miles west of Dunmore, Vestia.",
        "Ostwick Airport": "Ostwick Airport is a commercial airport near Grand Harbor, Norland.",
        "Norland airports": "Many airports in Norland lie near lakes.",
    }
    shared, n = ask(tmp_path / "a", pages, "Are Kestrel Field and Ostwick Airport both in Norland?")
    assert shared["answer"].startswith("No.")
    assert cites(shared, n["Ostwick Airport"]) and cites(shared, n["Kestrel Field"])
    assert shared["citations"]["unsupported"] == 0
    # a question that is not a yes/no question gets no verdict
    shared, _ = ask(tmp_path / "b", pages, "Which land is Ostwick Airport in?")
    assert not shared["answer"].startswith(("Yes", "No"))
    assert "Norland" in shared["answer"]


def test_a_sentence_opening_with_a_pronoun_is_about_the_pages_subject(tmp_path):
    shared, n = ask(
        tmp_path,
        {
            "Sam Orrin": "Sam Orrin is a singer from Kessa. He sang the song Blue River in 2012. "
            "He was working as a welder at Velt Yards in Marrow.",
            "Velt Yards": "Velt Yards is a Norlish shipyard based in Daskov.",
            "Blue River (song)": "Blue River is a song sung by Sam Orrin and Ana Bell.",
            "Dockwise": "Dockwise, based in Lorn, is a shipyard where many welders worked.",
        },
        "Which city is home to the shipyard where Sam Orrin was working as a welder?",
    )
    assert cites(shared, n["Sam Orrin"]) and cites(shared, n["Velt Yards"])
    assert "Daskov" in shared["answer"]
    assert shared["citations"]["unsupported"] == 0


def test_the_document_the_best_fact_names_keeps_its_opening_sentence(tmp_path):
    shared, n = ask(
        tmp_path,
        {
            "Orla Dunne": "Orla Dunne was beaten by the Greys during the Varn Uprising.",
            # found by the question's words, but its opening sentence shares none of them
            "Varn Uprising": "Fighting in Varn lasted from 1931 until March 1936. The revolt left ruins.",
            "Greys (club)": "Greys is a rowing club whose fans are known as the Greys.",
        },
        "When did the revolt in which the Greys beat Orla Dunne come to an end?",
        steps=1,  # one knowledge-base search: no second query about the uprising
    )
    assert cites(shared, n["Orla Dunne"]) and cites(shared, n["Varn Uprising"])
    assert "March 1936" in shared["answer"]
    assert shared["citations"]["unsupported"] == 0


def test_an_answer_in_one_document_does_not_drag_in_a_second(tmp_path):
    shared, n = ask(
        tmp_path,
        {
            "Kettle": "An electric kettle boils a litre of water in about three minutes.",
            "Tea": "Tea is brewed with boiling water, often from an electric kettle.",
            "Lakes": "Lakes hold fresh water.",
        },
        "How long does an electric kettle take to boil a litre of water?",
    )
    assert cites(shared, n["Kettle"]) and "three minutes" in shared["answer"]
    assert not cites(shared, n["Tea"])  # it adds nothing the first fact does not say
