"""`--tools wiki` end to end: the research reads a MediaWiki's pages through its API (a fake api.php
on 127.0.0.1) and cites their canonical URLs; the offline policy looks the question's names up."""

from __future__ import annotations

import json

import pytest
from fakewiki import FakeWiki

PAGES = {
    "Beacon of Tarvel": "The Beacon of Tarvel was a beacon tower built by the Skerrow League "
    "between 312 and 298 BC on the island of Skerrow.\n\nIt was one of the Five Marvels of the Old Coast.",
    "Skerrow": "Skerrow was a small island off the coast of Tarvel, Ostria.",
    "Giant of Orsk": "The Giant of Orsk was a statue of the sea god Varro, erected in 312 BC.",
}
QUESTION = "When was the Beacon of Tarvel built?"


@pytest.fixture
def fake():
    with FakeWiki(PAGES) as w:
        yield w


def test_research_with_the_wiki_cites_its_pages(cli, fake):
    proc = cli("--tools", "wiki", "--wiki-url", fake.api_url, "--json", QUESTION)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert "312 and 298 BC" in out["answer"]
    cited = [s for s in out["sources"] if s["cited"]]
    assert cited and cited[0]["url"] == fake.url_of("Beacon of Tarvel") and cited[0]["tool"] == "wiki"
    searched = [r["params"]["srsearch"] for r in fake.requests if r["params"].get("list") == "search"]
    assert searched[0] == "Beacon of Tarvel"  # the name the question asks about, not the sentence


def test_the_offline_policy_looks_an_entity_up_in_the_wiki_before_the_web(cli, fake, tmp_path):
    env = {"SLEUTH_WIKI_URL": fake.api_url}
    proc = cli("--tools", "duckduckgo,wiki", "--max-iterations", "1", "--json", QUESTION, env=env)
    assert proc.returncode == 0, proc.stderr
    session = json.loads(proc.stdout)["session_id"]
    shown = cli("sessions", "show", session, "--json")
    steps = [h["action"] for h in json.loads(shown.stdout)["research_history"]]
    assert steps == ["search_wiki"]


def test_a_wiki_that_cannot_be_reached_is_a_failed_step_and_the_research_goes_on(cli):
    proc = cli("--tools", "wiki", "--wiki-url", "http://127.0.0.1:9/w/api.php", "--json", QUESTION)
    assert proc.returncode == 1, proc.stderr  # the report is printed; every tool failed, and the status says so
    out = json.loads(proc.stdout)
    assert out["stop_reason"] and out["sources"] == []


def test_a_wiki_url_that_is_not_http_is_one_line_and_status_2(cli):
    proc = cli("--tools", "wiki", "--wiki-url", "en.wikipedia.org/w/api.php", QUESTION)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--wiki-url" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_the_names_a_question_asks_about():
    from sleuth.utils.engine.offline import question_names

    assert question_names("Were Rolf Amsel and Ned Marlow from the same country?") == [
        "Rolf Amsel",
        "Ned Marlow",
    ]
    assert question_names("Who wrote Dune?") == ["Dune"]
    assert question_names("what did i write about sourdough starters?") == []
