"""A KB step follows the links of the HTML documents it found, the way a crawl follows a page's
links: the second half of a two-hop question is reached even when it shares no word with it."""

from __future__ import annotations

import io
from pathlib import Path

from sleuth.flow import run_flow
from sleuth.utils.kb.links import linked_sources
from sleuth.utils.research.state import new_shared

QUESTION = "Which city is home to the person who founded the Alpha Lantern film studio?"


def page(title: str, body: str, links: list[str] = ()) -> str:
    anchors = "".join(f'<a href="{h}">{h}</a> ' for h in links)
    return (
        f"<html><head><title>{title}</title></head><body><nav><a href='/index.html'>Home</a></nav>"
        f"<article><h1>{title}</h1><p>{body}</p><p>{anchors}</p></article></body></html>"
    )


def write_site(root: Path) -> Path:
    wiki = root / "site" / "wiki"
    wiki.mkdir(parents=True)
    (root / "site" / "index.html").write_text(page("Home", "The front page."))
    (wiki / "Alpha_Lantern.html").write_text(
        page(
            "Alpha Lantern",
            "Alpha Lantern is a film studio founded in 1977 by the painter Mira Kestrel.",
            ["/wiki/Mira_Kestrel.html", "Beta_Reel.html", "https://example.org/elsewhere", "/wiki/Missing.html"],
        )
    )
    (wiki / "Mira_Kestrel.html").write_text(
        page("Mira Kestrel", "Mira Kestrel is a Portuguese painter; she lives and works in Lisbon.")
    )
    (wiki / "Beta_Reel.html").write_text(page("Beta Reel", "Beta Reel is a film studio founded by a city council."))
    for i in range(14):  # film studios that match the question's words better than the painter does
        (wiki / f"Studio_{i}.html").write_text(
            page(f"Studio {i}", f"Studio {i} is a film studio founded in the city of Town{i}; it is home to films.")
        )
    return wiki


def test_links_of_an_ingested_page_lead_to_ingested_documents_only(tmp_path):
    wiki = write_site(tmp_path)
    known = {str(p.resolve()) for p in wiki.glob("*.html")}
    got = linked_sources(str((wiki / "Alpha_Lantern.html").resolve()), known.__contains__)
    # the root-relative link resolves against the site copy's root; other sites and missing files are skipped
    assert [Path(s).name for s in got] == ["Mira_Kestrel.html", "Beta_Reel.html"]
    assert linked_sources(str(tmp_path / "notes.md"), known.__contains__) == []


def test_a_kb_step_reaches_the_linked_page_and_the_report_cites_both_halves(tmp_path):
    from sleuth.utils.cli.ui import PlainUI
    from sleuth.utils.config import Settings, parse_tools
    from sleuth.utils.engine.offline import OfflineEngine
    from sleuth.utils.runtime import Runtime, Tools

    wiki = write_site(tmp_path)
    s = Settings(engine="offline", data_dir=tmp_path / "data", tools=parse_tools("kb"), remember=False)
    tools = Tools(s)
    tools.kb().ingest_paths([wiki])
    direct = {Path(h.source).name for h in tools.kb().search(QUESTION, k=10)}
    assert "Mira_Kestrel.html" not in direct  # a query alone does not find the second half

    rt = Runtime(settings=s, engine=OfflineEngine(), ui=PlainUI(err=io.StringIO(), out=io.StringIO()), tools=tools)
    shared = new_shared(QUESTION, engine="offline")
    run_flow(rt, shared, "query")
    tools.close()
    by_name = {Path(src.url).name: src.n for src in shared["sources"]}
    assert "Mira_Kestrel.html" in by_name
    assert shared["research_history"][0]["action"] == "search_kb"
    answer = shared["answer"]
    assert "Lisbon" in answer
    assert f"[{by_name['Mira_Kestrel.html']}]" in answer and f"[{by_name['Alpha_Lantern.html']}]" in answer
    assert shared["citations"]["unsupported"] == 0


def test_a_linked_page_counts_as_named_only_when_its_title_stands_as_words(tmp_path):
    from sleuth.utils.config import Settings, parse_tools
    from sleuth.utils.kb.links import follow
    from sleuth.utils.runtime import Tools

    wiki = tmp_path / "site" / "wiki"
    wiki.mkdir(parents=True)
    (wiki / "Ember_Hall.html").write_text(
        page("Ember Hall", "Ember Hall was built of used stone by Tom Vale.", ["Ed_Stone.html", "Tom_Vale.html"])
    )
    (wiki / "Ed_Stone.html").write_text(page("Ed Stone", "Ed Stone was a Vestian stage painter."))
    (wiki / "Tom_Vale.html").write_text(page("Tom Vale", "Tom Vale was a carpenter from Oslo."))
    s = Settings(engine="offline", data_dir=tmp_path / "data", tools=parse_tools("kb"), remember=False)
    tools = Tools(s)
    kb = tools.kb()
    kb.ingest_paths([wiki])
    question = "Who built Ember Hall?"
    hits = [h for h in kb.search(question, k=5) if Path(h.source).name == "Ember_Hall.html"]
    # "ed stone" is inside "used stone", but only Tom Vale is named by the sentence that links to both
    followed = [Path(c.source).name for c in follow(kb, hits, question, keep=1)]
    tools.close()
    assert followed == ["Tom_Vale.html"]
