"""Any MediaWiki as a source: the wiki client against a fake api.php on 127.0.0.1 that speaks the
real response format (continue, a missing page, an error object, maxlag with Retry-After, a wiki
without TextExtracts)."""

from __future__ import annotations

import pytest
from fakewiki import FakeWiki

from sleuth.utils.errors import BackendError
from sleuth.utils.web import wiki
from sleuth.utils.web.cache import Cache
from sleuth.utils.web.wiki import WikiClient

PAGES = {
    "Beacon of Tarvel": "The Beacon of Tarvel was built between 312 and 298 BC on the island of "
    "Skerrow.\n\nIt was one of the Five Marvels of the Old Coast.",
    "Skerrow": "Skerrow is a former island in Tarvel, Ostria, home of the Beacon.",
    "Giant of Orsk": "The Giant of Orsk was a statue of the sea god Varro, erected in 312 BC.",
}


@pytest.fixture
def fake():
    with FakeWiki(PAGES) as w:
        yield w


def test_search_then_read_each_pages_text_following_continue(fake):
    client = WikiClient(fake.api_url)
    pages, problems = client.search_and_read("Beacon Tarvel Skerrow", k=2)
    assert [p.title for p in pages] == ["Beacon of Tarvel", "Skerrow"] and problems == []
    assert pages[0].text.startswith("The Beacon of Tarvel was built between 312")
    assert pages[0].url == fake.url_of("Beacon of Tarvel")  # the canonical URL, not api.php
    reads = [r for r in fake.requests if "titles" in r["params"]]
    assert [r["params"].get("excontinue") for r in reads] == [None, "1"]  # one extract a request, then continue


def test_every_request_is_polite(fake):
    WikiClient(fake.api_url).search_and_read("Giant", k=1)
    for r in fake.requests:
        assert r["params"]["maxlag"] == "5" and r["params"]["format"] == "json"
        assert r["user_agent"].startswith("Sleuth/") and "research agent" in r["user_agent"]


def test_a_missing_page_is_reported_not_guessed(fake):
    pages, problems = WikiClient(fake.api_url).pages(["Skerrow", "Atlantis"])
    assert [p.title for p in pages] == ["Skerrow"]
    assert problems == [("Atlantis", "no such page")]


def test_an_error_object_is_a_backend_error_naming_its_code(fake):
    with pytest.raises(BackendError, match="missingparam") as caught:
        WikiClient(fake.api_url).search("   ")
    assert caught.value.kind == "error"


def test_maxlag_is_retried_after_the_servers_retry_after_then_given_up(fake):
    waits: list[float] = []
    client = WikiClient(fake.api_url, sleep=waits.append)
    fake.maxlag_errors = 2
    assert client.search("Giant") == ["Giant of Orsk"]
    assert waits == [0.0, 0.0]  # the fake says Retry-After: 0
    fake.maxlag_errors = 10
    with pytest.raises(BackendError) as caught:
        client.search("Skerrow")
    assert caught.value.kind == "rate_limited" and len(waits) == 4


def test_a_wiki_without_textextracts_is_read_through_parse():
    with FakeWiki(PAGES, extracts=False) as fake:
        pages, problems = WikiClient(fake.api_url).pages(["Beacon of Tarvel"])
        assert problems == []
        (page,) = pages
        assert page.via == "parse" and "Five Marvels" in page.text and "312 and 298 BC" in page.text
        assert page.url == fake.url_of("Beacon of Tarvel")


def test_results_are_cached_so_a_repeat_sends_nothing(fake, tmp_path):
    cache = Cache(tmp_path / "cache", ttl=3600)
    WikiClient(fake.api_url, cache=cache).search_and_read("Giant", k=1)
    sent = len(fake.requests)
    pages, _ = WikiClient(fake.api_url, cache=cache).search_and_read("Giant", k=1)
    assert pages[0].title == "Giant of Orsk" and len(fake.requests) == sent


def test_one_request_at_a_time_per_host(fake):
    first, second = WikiClient(fake.api_url), WikiClient(fake.api_url)
    lock = wiki._host_lock(fake.api_url)
    fake.lock_probe = lock.locked
    first.search("Skerrow")
    second.search("Giant")
    assert [r["locked"] for r in fake.requests] == [True, True]  # every request is sent holding the host's lock
    assert first._lock is second._lock is lock  # which every client of that host shares


def test_a_url_that_is_not_http_is_a_config_error():
    with pytest.raises(BackendError, match="http"):
        WikiClient("en.wikipedia.org/w/api.php")


def test_a_page_the_wiki_gives_no_address_for_is_cited_through_index_php():
    client = WikiClient("http://127.0.0.1:9/w/api.php")
    assert client.page_url("Beacon of Tarvel") == "http://127.0.0.1:9/w/index.php?title=Beacon_of_Tarvel"
