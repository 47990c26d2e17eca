"""Search backends against fake DuckDuckGo and Custom Search servers on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from datetime import datetime

import pytest

from sleuth.utils.web.cache import Cache
from sleuth.utils.web.search import SearchClient, SearchOutcome, SearchResult, normalize_url
from tests.webfixtures import LocalServer, cse_error, cse_json, ddg_html, send

DDG_RESULTS = [
    ("Agents survey", "https://www.example.com/survey?utm_source=ddg", "A survey of <b>LLM agents</b>."),
    ("PocketFlow", "https://pocketflow.example/docs/", "A 100-line framework."),
    ("Third", "https://third.example/page", "More."),
]
CSE_RESULTS = [
    ("Google one", "https://g.example/one", "Snippet one"),
    ("Google two", "https://g.example/two", "Snippet two"),
]


class Backends:
    """A fake DuckDuckGo HTML endpoint and a fake Custom Search endpoint whose answers tests set."""

    def __init__(self):
        self.ddg_status = 200
        self.ddg_results = list(DDG_RESULTS)
        self.ddg_body: str | None = None
        self.cse_status = 200
        self.cse_results = list(CSE_RESULTS)
        self.cse_body: dict | None = None
        self.cse_hang = threading.Event()
        self.cse_should_hang = False
        self.queries: list[str] = []
        self.server = LocalServer({"/html/": self._ddg, "/customsearch/v1": self._cse})

    def _ddg(self, req):
        body = self.ddg_body if self.ddg_body is not None else ddg_html(self.ddg_results)
        send(req, self.ddg_status, body if self.ddg_status in (200, 202) else "blocked", "text/html")

    def _cse(self, req):
        self.queries.append(req.query)
        if self.cse_should_hang:
            self.cse_hang.wait(5)
            return
        body = self.cse_body if self.cse_body is not None else cse_json(self.cse_results)
        send(req, self.cse_status, json.dumps(body), "application/json")

    def client(self, google: bool = True, **kw) -> SearchClient:
        s = self.server
        opts = dict(ddg_url=s.url("/html/"), timeout=3.0)
        if google:
            opts.update(google_api_key="test-key", google_cse_id="test-cx", google_endpoint=s.base)
        opts.update(kw)
        return SearchClient(**opts)

    @property
    def ddg_hits(self) -> int:
        return self.server.count("/html/")

    @property
    def cse_hits(self) -> int:
        return self.server.count("/customsearch/v1")


@pytest.fixture
def backends():
    e = Backends()
    with e.server:
        yield e
        e.cse_hang.set()


# -- normalize_url -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("HTTPS://WWW.Example.COM/Path/", "https://example.com/Path"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443", "https://example.com/"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("https://example.com/a#section-2", "https://example.com/a"),
        ("https://example.com/", "https://example.com/"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com/a?utm_source=x&utm_medium=y&b=2&a=1&gclid=z&fbclid=q", "https://example.com/a?a=1&b=2"),
        (
            "https://example.com/a?ref=hn&mc_cid=1&mc_eid=2&igshid=3&yclid=4&msclkid=5&_hsenc=6&_hsmi=7&id=9",
            "https://example.com/a?id=9",
        ),
        ("https://example.com/a?UTM_Campaign=x", "https://example.com/a"),
        ("  https://example.com/a  ", "https://example.com/a"),
        ("https://[2001:DB8::1]:443/x/", "https://[2001:db8::1]/x"),
        ("https://example.com//a//b/", "https://example.com/a/b"),
    ],
)
def test_normalize_url(raw, expected):
    assert normalize_url(raw) == expected


@pytest.mark.parametrize(
    "junk",
    [
        "",
        "   ",
        "not a url",
        "mailto:someone@example.com",
        "http://[::1",
        "http://",
        "https://example.com:99999/",
        "javascript:alert(1)",
        None,
        42,
        "\x00\x01",
    ],
)
def test_normalize_url_never_raises(junk):
    out = normalize_url(junk)
    assert isinstance(out, str)
    if isinstance(junk, str) and "://" not in junk:
        assert out == junk.strip()


def test_normalize_url_makes_variants_equal():
    variants = ["https://www.example.com/a/?utm_source=x", "https://example.com/a", "HTTPS://EXAMPLE.COM:443/a#top"]
    assert len({normalize_url(v) for v in variants}) == 1


# -- DuckDuckGo ---------------------------------------------------------------------------------


def test_duckduckgo_results_are_parsed(backends):
    out = backends.client(google=False).search("duckduckgo", "llm agents")
    assert isinstance(out, SearchOutcome)
    assert out.tool_used == "duckduckgo" and not out.fallback_used and not out.from_cache
    assert out.errors == []
    assert [r.title for r in out.results] == ["Agents survey", "PocketFlow", "Third"]
    first = out.results[0]
    assert isinstance(first, SearchResult)
    assert first.url == "https://www.example.com/survey?utm_source=ddg"
    assert first.snippet == "A survey of LLM agents."
    assert (first.rank, first.backend, first.query) == (1, "duckduckgo", "llm agents")
    assert datetime.fromisoformat(first.time.replace("Z", "+00:00")).tzinfo is not None
    d = out.to_dict()
    assert json.loads(json.dumps(d))["results"][1]["rank"] == 2
    assert backends.ddg_hits == 1 and backends.cse_hits == 0


def test_duckduckgo_redirect_links_are_unwrapped(backends):
    backends.ddg_results = [
        ("Wrapped", "//duckduckgo.com/l/?uddg=https%3A%2F%2Freal.example%2Fpage%3Fa%3D1&amp;rut=abc", "s"),
        ("Plain", "https://plain.example/", "s"),
    ]
    out = backends.client(google=False).search("duckduckgo", "q")
    assert [r.url for r in out.results] == ["https://real.example/page?a=1", "https://plain.example/"]


def test_duckduckgo_429_is_rate_limited_and_google_takes_over(backends):
    backends.ddg_status = 429
    client = backends.client()
    out = client.search("duckduckgo", "llm agents")
    assert out.tool_used == "google_cse" and out.fallback_used
    assert [r.backend for r in out.results] == ["google_cse", "google_cse"]
    assert {"backend": "duckduckgo", "kind": "rate_limited"}.items() <= out.errors[0].items()
    assert backends.ddg_hits == 1
    # the cool-down is shared: the next search (another query, another thread) skips DuckDuckGo
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("out", client.search("duckduckgo", "other query")))
    t.start()
    t.join()
    again = box["out"]
    assert backends.ddg_hits == 1
    assert again.errors[0]["kind"] == "rate_limited" and "cooling down" in again.errors[0]["message"]
    assert again.tool_used == "google_cse"
    assert client.cooling_down("duckduckgo") > 0


def test_duckduckgo_bot_check_page_counts_as_rate_limited(backends):
    backends.ddg_status = 202
    backends.ddg_body = (
        "<html><body><div class='anomaly-modal'>Unfortunately, bots use DuckDuckGo too.</div></body></html>"
    )
    out = backends.client(google=False).search("duckduckgo", "q")
    assert out.results == [] and out.tool_used is None
    assert out.errors[0]["kind"] == "rate_limited"


def test_empty_duckduckgo_page_is_no_results_not_rate_limited(backends):
    backends.ddg_results = []
    out = backends.client(google=False).search("duckduckgo", "zxqv")
    assert out.results == []
    assert [e["kind"] for e in out.errors] == ["no_results"]


# -- Google Custom Search ------------------------------------------------------------------------


def test_google_results_are_parsed_without_network_discovery(backends):
    out = backends.client().search("google", "llm agents")
    assert out.tool_used == "google_cse" and not out.fallback_used
    assert [(r.title, r.url, r.snippet, r.rank) for r in out.results] == [
        ("Google one", "https://g.example/one", "Snippet one", 1),
        ("Google two", "https://g.example/two", "Snippet two", 2),
    ]
    assert backends.ddg_hits == 0
    assert "q=llm+agents" in backends.queries[0] and "cx=test-cx" in backends.queries[0]
    assert "key=test-key" in backends.queries[0]


@pytest.mark.parametrize(
    "status, body, kind",
    [
        (403, cse_error(403, "forbidden", "This project does not have access to Custom Search JSON API."), "auth"),
        (400, cse_error(400, "badRequest", "API key not valid."), "auth"),
        (500, cse_error(500, "backendError", "Backend Error"), "error"),
        (429, cse_error(429, "rateLimitExceeded", "Quota exceeded for quota metric 'Queries'."), "rate_limited"),
        (403, cse_error(403, "dailyLimitExceeded", "Daily Limit Exceeded"), "rate_limited"),
    ],
)
def test_google_errors_fall_back_to_duckduckgo(backends, status, body, kind):
    backends.cse_status, backends.cse_body = status, body
    out = backends.client().search("google", "llm agents")
    assert out.errors[0]["backend"] == "google_cse" and out.errors[0]["kind"] == kind
    assert str(status) in out.errors[0]["message"]
    assert out.tool_used == "duckduckgo" and out.fallback_used
    assert len(out.results) == 3


def test_google_timeout_is_reported_and_falls_back(backends):
    backends.cse_should_hang = True
    out = backends.client(timeout=0.3).search("google", "q")
    assert out.errors[0] == {"backend": "google_cse", "kind": "timeout", "message": out.errors[0]["message"]}
    assert out.tool_used == "duckduckgo"


def test_google_is_offered_only_when_configured(backends):
    assert backends.client(google=False).available_backends() == ["duckduckgo"]
    assert backends.client().available_backends() == ["duckduckgo", "google_cse"]
    assert backends.client(google_cse_id="").available_backends() == ["duckduckgo"]
    out = backends.client(google=False).search("google", "q")
    assert out.errors[0]["kind"] == "config"
    assert out.tool_used == "duckduckgo" and out.fallback_used and len(out.results) == 3
    assert backends.cse_hits == 0


# -- fallback, merging, failure ------------------------------------------------------------------


def test_fewer_than_two_results_triggers_fallback_and_merge_dedups(backends):
    # Google finds one page; DuckDuckGo finds the same page (with www and tracking) plus others.
    backends.cse_results = [("Survey", "https://example.com/survey", "g")]
    out = backends.client().search("google", "llm agents")
    urls = [r.url for r in out.results]
    assert urls == ["https://example.com/survey", "https://pocketflow.example/docs/", "https://third.example/page"]
    assert [r.rank for r in out.results] == [1, 2, 3]
    assert [r.backend for r in out.results] == ["google_cse", "duckduckgo", "duckduckgo"]
    assert out.tool_used == "google_cse" and out.fallback_used
    assert out.errors[0]["kind"] == "no_results" and out.errors[0]["backend"] == "google_cse"


def test_results_are_capped_and_duplicates_within_an_engine_removed(backends):
    backends.ddg_results = [(f"R{i}", f"https://r.example/{i % 5}/", "s") for i in range(12)]
    out = backends.client(google=False, max_results=4).search("duckduckgo", "q")
    assert [r.url for r in out.results] == [f"https://r.example/{i}/" for i in range(4)]


def test_every_result_a_page_of_results_holds_is_kept_up_to_twenty(backends):
    # The page a research question needs is often the engine's 9th or 10th result.
    backends.ddg_results = [(f"R{i}", f"https://r.example/{i}/", "s") for i in range(25)]
    out = backends.client(google=False).search("duckduckgo", "q")
    assert [r.url for r in out.results] == [f"https://r.example/{i}/" for i in range(20)]


def test_all_backends_failing_is_an_empty_outcome(backends):
    backends.ddg_status = 500
    backends.cse_status, backends.cse_body = 500, cse_error(500, "backendError", "Backend Error")
    out = backends.client().search("duckduckgo", "q")
    assert out.results == [] and out.tool_used is None and not out.fallback_used
    assert [(e["backend"], e["kind"]) for e in out.errors] == [("duckduckgo", "error"), ("google_cse", "error")]


def test_unreachable_engine_is_a_network_error(backends):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/html/"
    out = SearchClient(ddg_url=dead, timeout=2).search("duckduckgo", "q")
    assert out.results == []
    assert out.errors[0]["backend"] == "duckduckgo" and out.errors[0]["kind"] in ("network", "timeout")


def test_bad_input_is_reported_not_raised(backends):
    out = backends.client().search("duckduckgo", "   ")
    assert out.results == [] and out.errors[0]["kind"] == "config"
    out = backends.client(google=False).search("bing", "q")
    assert out.errors[0]["kind"] == "config" and out.tool_used == "duckduckgo"


# -- cache -----------------------------------------------------------------------------------------


def test_cache_hit_makes_no_request(backends, data_dir):
    cache = Cache(data_dir / "cache")
    first = backends.client(cache=cache).search("duckduckgo", "LLM  agents")
    assert not first.from_cache and backends.ddg_hits == 1
    # a new client (e.g. the next run) with the same cache; query spacing/case does not matter
    second = backends.client(cache=cache).search("duckduckgo", "llm agents")
    assert second.from_cache and backends.ddg_hits == 1
    assert [r.url for r in second.results] == [r.url for r in first.results]
    assert second.results[0].time == first.results[0].time  # when it was really fetched


def test_empty_results_are_not_cached(backends, data_dir):
    cache = Cache(data_dir / "cache")
    backends.ddg_results = []
    backends.client(google=False, cache=cache).search("duckduckgo", "q")
    backends.client(google=False, cache=cache).search("duckduckgo", "q")
    assert backends.ddg_hits == 2


def test_expired_cache_entry_searches_again(backends, data_dir):
    now = [1000.0]
    cache = Cache(data_dir / "cache", ttl=60, clock=lambda: now[0])
    backends.client(cache=cache).search("duckduckgo", "q")
    now[0] += 61
    out = backends.client(cache=cache).search("duckduckgo", "q")
    assert not out.from_cache and backends.ddg_hits == 2


def test_shared_client_is_thread_safe(backends, data_dir):
    client = backends.client(cache=Cache(data_dir / "cache"))
    outs: list[SearchOutcome] = []
    lock = threading.Lock()

    def work(i: int):
        o = client.search("google" if i % 2 else "duckduckgo", f"query {i % 3}")
        with lock:
            outs.append(o)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(outs) == 8
    assert all(len(o.results) >= 2 and not o.errors for o in outs)
