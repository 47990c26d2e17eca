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
            "Shut Up, Make Love": '"Shut Up, Make Love" is a single by the rock band Quillfeather, released in 2000.',
            "Make Love": '"Make Love" is a ballad by the singer Dora Linde, released as a single in 2009.',
            "Quillfeather (band)": "Quillfeather is a rock band formed in Ohio in 1983 by four school friends.",
            "Love Letters": "Love Letters is a single by Anna Sol about love, released in 2011.",
        },
        'When was the single "Shut Up, Make Love" by Quillfeather released?',
    )
    assert cites(shared, n["Shut Up, Make Love"]) and cites(shared, n["Quillfeather (band)"])
    assert not cites(shared, n["Make Love"])  # its title is only part of the question's longer title
    assert "2000" in shared["answer"]
    assert shared["citations"]["unsupported"] == 0


def test_the_opening_sentence_is_about_the_title_and_one_document_per_name(tmp_path):
    shared, n = ask(
        tmp_path,
        {
            "Ada Brisk": "Adaline Maren Brisk (born 1950) is a Canadian sculptor and teacher.",
            "Ada Brisk (film)": "Ada Brisk is a 1990 documentary film about the sculptor Ada Brisk.",
            "Tom Vell": "Tom Vell (born 1960) is a Canadian poet and translator.",
            "Vell Street": "Vell Street is a street in Halifax named after a merchant.",
        },
        "Were Tom Vell and Ada Brisk of the same nationality?",
    )
    # the person's page never repeats "Ada Brisk", yet it is the page about her
    assert cites(shared, n["Ada Brisk"]) and cites(shared, n["Tom Vell"])
    assert not cites(shared, n["Ada Brisk (film)"])  # one document per name: the main one
    assert shared["answer"].count("Canadian") >= 2


def test_the_document_a_fact_names_is_the_second_half(tmp_path):
    shared, n = ask(
        tmp_path,
        {
            "Glass Harbor": "Glass Harbor is a 2004 drama film directed by Oren Vale and shot on a lake.",
            "Oren Vale": "Oren Vale (born 1961) is a film maker who was born and raised in Tallinn.",
            "Harbor Days": "Harbor Days is a film festival where the director of each film is born anew, they say.",
            "Glass Lake": "Glass Lake is a lake where a drama film was once directed.",
        },
        "In which city was the director of the film Glass Harbor born?",
    )
    assert cites(shared, n["Glass Harbor"]) and cites(shared, n["Oren Vale"])
    assert "Tallinn" in shared["answer"]
    assert shared["citations"]["unsupported"] == 0


def test_a_yes_no_comparison_is_answered_from_both_facts_and_cites_both(tmp_path):
    pages = {
        "Ada Brisk": "Adaline Maren Brisk (born 1950) is a Canadian sculptor and teacher.",
        "Tom Vell": "Tom Vell (born 1960) is a Canadian poet and translator.",
        "Rui Osk": "Rui Osk (born 1955) is a Brazilian painter who lives in Recife.",
        "Vell Street": "Vell Street is a street in Halifax named after a merchant.",
    }
    shared, n = ask(tmp_path / "a", pages, "Were Tom Vell and Ada Brisk of the same nationality?")
    assert shared["answer"].startswith("Yes.")
    assert cites(shared, n["Tom Vell"]) and cites(shared, n["Ada Brisk"])
    assert shared["citations"]["unsupported"] == 0

    shared, n = ask(tmp_path / "b", pages, "Were Rui Osk and Ada Brisk of the same nationality?")
    assert shared["answer"].startswith("No.")
    assert "Brazilian" in shared["answer"] and "Canadian" in shared["answer"]
    assert cites(shared, n["Rui Osk"]) and cites(shared, n["Ada Brisk"])
    assert shared["citations"]["unsupported"] == 0


def test_a_comparison_of_two_people_is_not_settled_by_a_film_of_the_same_name(tmp_path):
    # the film's page repeats the question's words and ranks first, but it is not the person; the
    # question does not ask about a film, so the person's page is what the verdict compares
    pages = {
        "Ada Brisk": "Adaline Maren Brisk (born 1950) is a Canadian sculptor and teacher.",
        "Ada Brisk (film)": "Ada Brisk is a 1990 American documentary film by Tom Vell about the sculptor Ada Brisk.",
        "Tom Vell": "Tom Vell (born 1960) is an American film director and poet.",
    }
    shared, n = ask(tmp_path, pages, "Were Tom Vell and Ada Brisk of the same nationality?")
    assert shared["answer"].startswith("No.")
    assert "Canadian" in shared["answer"] and "American" in shared["answer"]
    assert cites(shared, n["Ada Brisk"]) and cites(shared, n["Tom Vell"])


def test_a_yes_no_question_about_a_named_property_checks_both_things(tmp_path):
    pages = {
        "Kestrel Field": "Kestrel Field is a regional airport two miles west of Dunmore, Nevada.",
        "Ostwick Airport": "Ostwick Airport is a commercial airport near Grand Harbor, Michigan.",
        "Michigan airports": "Many airports in Michigan are located near lakes.",
    }
    shared, n = ask(tmp_path / "a", pages, "Are both Kestrel Field and Ostwick Airport located in Michigan?")
    assert shared["answer"].startswith("No.")
    assert cites(shared, n["Ostwick Airport"]) and cites(shared, n["Kestrel Field"])
    assert shared["citations"]["unsupported"] == 0
    # a question that is not a yes/no question gets no verdict
    shared, _ = ask(tmp_path / "b", pages, "Which state is Ostwick Airport located in?")
    assert not shared["answer"].startswith(("Yes", "No"))
    assert "Michigan" in shared["answer"]


def test_a_sentence_opening_with_a_pronoun_is_about_the_pages_subject(tmp_path):
    shared, n = ask(
        tmp_path,
        {
            "Sam Orrin": "Sam Orrin is a singer from Kerala. He sang the song Blue River in 2012. "
            "He was working as a software engineer at Velt Systems in Kochi.",
            "Velt Systems": "Velt Systems is an Indian technology company headquartered in Pune.",
            "Blue River (song)": "Blue River is a song sung by Sam Orrin and Ana Bell.",
            "Cloudwise": "Cloudwise, headquartered in Austin, is a software company where many engineers worked.",
        },
        "Where is the company that Sam Orrin worked for as a software engineer headquartered?",
    )
    assert cites(shared, n["Sam Orrin"]) and cites(shared, n["Velt Systems"])
    assert "Pune" in shared["answer"]
    assert shared["citations"]["unsupported"] == 0


def test_the_document_the_best_fact_names_keeps_its_opening_sentence(tmp_path):
    shared, n = ask(
        tmp_path,
        {
            "Orla Dunne": "Orla Dunne was defeated by the Reds in the course of the Varn Uprising.",
            # found by the question's words, but its opening sentence shares none of them
            "Varn Uprising": "Fighting in Varn lasted from 1917 until October 1922. The war left ruins.",
            "Reds (club)": "Reds is a football club whose fans are known as the Reds.",
        },
        "Orla Dunne was defeated by the Reds in a civil war that ended when?",
        steps=1,  # one knowledge-base search: no second query about the uprising
    )
    assert cites(shared, n["Orla Dunne"]) and cites(shared, n["Varn Uprising"])
    assert "October 1922" in shared["answer"]
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
