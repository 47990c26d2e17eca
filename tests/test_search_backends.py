"""Google grounding (Gemini) and SearXNG backends against fake servers on 127.0.0.1, the choice
between Custom Search and grounding around the API's end date, and grounding redirects crawled."""

from __future__ import annotations

import json
from datetime import date

import pytest
from fakes import FakeTools, ScriptedEngine, make_rt
from gemini_fake import FakeGemini, grounded_response

from sleuth.flow import run_flow
from sleuth.utils.config import Settings, load_settings
from sleuth.utils.research.actions import offered_actions
from sleuth.utils.research.state import new_shared
from sleuth.utils.web.fetcher import Fetcher
from sleuth.utils.web.search import SearchClient
from tests.webfixtures import LocalServer, cse_json, ddg_html, page, send

REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
ANSWER = "Ada Lovelace wrote the first published program. She worked with Babbage on the Analytical Engine."
PAGES = [(REDIRECT + "AUZIYQa1", "wikipedia.org"), (REDIRECT + "AUZIYQb2", "britannica.com")]
SUPPORTS = [
    ("Ada Lovelace wrote the first published program.", [0, 1]),
    ("She worked with Babbage on the Analytical Engine.", [1]),
]
DDG = [("DDG one", "https://d.example/1", "d1"), ("DDG two", "https://d.example/2", "d2")]


class Services:
    """Fake Gemini, DuckDuckGo, Custom Search and SearXNG whose answers a test sets."""

    def __init__(self):
        self.gemini_status, self.gemini_body = 200, grounded_response(ANSWER, PAGES, SUPPORTS)
        self.gemini = FakeGemini(lambda body, path: (self.gemini_status, self.gemini_body))
        self.searx_status = 200
        self.searx_body: dict | str = {"query": "q", "results": [], "unresponsive_engines": []}
        self.web = LocalServer(
            {
                "/html/": lambda req: send(req, 200, ddg_html(DDG), "text/html"),
                "/customsearch/v1": lambda req: send(
                    req,
                    200,
                    json.dumps(cse_json([("C1", "https://c.example/1", "c"), ("C2", "https://c.example/2", "c")])),
                    "application/json",
                ),
                "/searx/search": self._searx,
            }
        )
        self.searx_queries: list[str] = []

    def _searx(self, req):
        self.searx_queries.append(req.query)
        if self.searx_status != 200:
            send(req, self.searx_status, "<html><body>403 Forbidden</body></html>", "text/html")
            return
        body = self.searx_body if isinstance(self.searx_body, str) else json.dumps(self.searx_body)
        send(req, 200, body, "application/json")

    def client(self, *, cse=False, gemini=True, searx=False, **kw) -> SearchClient:
        opts = dict(ddg_url=self.web.url("/html/"), timeout=3.0)
        if cse:
            opts.update(google_api_key="test-key", google_cse_id="test-cx", google_endpoint=self.web.base)
        if gemini:
            opts.update(gemini_api_key="test-gemini", gemini_base_url=self.gemini.url)
        if searx:
            opts.update(searxng_url=self.web.url("/searx"))
        opts.update(kw)
        return SearchClient(**opts)


@pytest.fixture
def svc():
    s = Services()
    with s.gemini, s.web:
        yield s


# -- Google through Gemini grounding ---------------------------------------------------------------


def test_grounding_results_come_from_the_grounding_metadata(svc):
    out = svc.client().search("google", "who wrote the first program")
    assert out.tool_used == "google_grounding" and not out.fallback_used and out.errors == []
    assert [(r.url, r.title, r.backend) for r in out.results] == [
        (PAGES[0][0], "wikipedia.org", "google_grounding"),
        (PAGES[1][0], "britannica.com", "google_grounding"),
    ]
    assert out.results[0].snippet == "Ada Lovelace wrote the first published program."
    assert out.results[1].snippet == (
        "Ada Lovelace wrote the first published program. She worked with Babbage on the Analytical Engine."
    )
    sent = svc.gemini.requests[0]
    assert "generateContent" in sent["path"] and sent["body"]["tools"] == [{"googleSearch": {}}]
    assert "who wrote the first program" in json.dumps(sent["body"]["contents"])
    assert svc.web.count("/html/") == 0


def test_custom_search_answers_until_its_end_date_then_grounding(svc):
    before = svc.client(cse=True, today=lambda: date(2026, 12, 31)).search("google", "q")
    assert before.tool_used == "google_cse" and not before.fallback_used
    assert len(svc.gemini.requests) == 0
    after = svc.client(cse=True, today=lambda: date(2027, 1, 1)).search("google", "q")
    assert after.tool_used == "google_grounding" and not after.fallback_used
    assert after.errors == [{"backend": "google_cse", "kind": "config", "message": "the API ended on 2027-01-01"}]
    assert svc.web.count("/customsearch/v1") == 1


def test_grounding_takes_over_when_custom_search_fails(svc):
    svc.web.routes["/customsearch/v1"] = lambda req: send(req, 500, "{}", "application/json")
    out = svc.client(cse=True, today=lambda: date(2026, 6, 1)).search("google", "q")
    assert [e["backend"] for e in out.errors] == ["google_cse"]
    assert out.tool_used == "google_grounding" and out.fallback_used


def test_an_answer_without_a_search_is_no_results(svc):
    svc.gemini_body = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": "Hi."}]}, "finishReason": "STOP"}]
    }
    out = svc.client().search("google", "q")
    assert (out.errors[0]["backend"], out.errors[0]["kind"]) == ("google_grounding", "no_results")
    assert out.tool_used == "duckduckgo" and out.fallback_used


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [(429, "Resource has been exhausted", "rate_limited"), (400, "API key not valid.", "auth")],
)
def test_grounding_api_errors_are_classified(svc, status, message, kind):
    svc.gemini_status, svc.gemini_body = status, message
    client = svc.client()
    out = client.search("google", "q")
    assert (out.errors[0]["backend"], out.errors[0]["kind"]) == ("google_grounding", kind)
    assert str(status) in out.errors[0]["message"] and out.tool_used == "duckduckgo"
    assert (client.cooling_down("google_grounding") > 0) is (kind == "rate_limited")


def test_google_is_offered_with_a_gemini_key_alone(tmp_path):
    kb = lambda: False  # noqa: E731
    assert "search_google" in offered_actions(Settings(data_dir=tmp_path, gemini_api_key="k"), kb)
    assert "search_google" not in offered_actions(Settings(data_dir=tmp_path), kb)
    cse_only = Settings(data_dir=tmp_path, google_api_key="k", google_cse_id="cx")
    assert cse_only.google_search_configured(today=date(2026, 12, 31))
    assert not cse_only.google_search_configured(today=date(2027, 1, 2))


def test_a_crawled_grounding_link_records_the_final_url_and_the_redirect(svc):
    """The research journey end to end: Google (grounding) finds a redirect link, the crawler
    follows it, and the source keeps its number with the final URL and the redirect."""
    target = svc.web.url("/articles/ada")
    svc.web.routes["/articles/ada"] = lambda req: send(req, 200, page("Ada Lovelace", "<p>" + ANSWER + "</p>"))
    svc.web.routes["/grounding-api-redirect/AUZIYQa1"] = lambda req: send(req, 302, "", headers={"Location": target})
    link = svc.web.url("/grounding-api-redirect/AUZIYQa1")
    svc.gemini_body = grounded_response(ANSWER, [(link, "example.org"), PAGES[1]], SUPPORTS)

    class Tools(FakeTools):
        def __init__(self):
            super().__init__()
            self._search = svc.client()
            self._fetcher = Fetcher(allow_private_hosts=True, ignore_robots=True, per_host_interval=0.0)

    engine = ScriptedEngine([("search_google", "first program"), ("crawl_url", link), ("send_to_hitl", "")])
    rt = make_rt(engine, fake_tools=Tools(), gemini_api_key="test-gemini")
    shared = new_shared("Who wrote the first program?", engine=engine.name)
    run_flow(rt, shared, "query")
    hist = shared["research_history"]
    assert [(h["action"], h["tool_used"]) for h in hist] == [
        ("search_google", "google_grounding"),
        ("crawl_url", "crawl"),
    ]
    src = shared["sources"][0]
    assert (src.n, src.url, src.redirected_from, src.title) == (1, target, link, "Ada Lovelace")
    assert src.tool == "crawl" and len(shared["sources"]) == 2


# -- SearXNG --------------------------------------------------------------------------------------

SEARX_RESULTS = [
    {"url": "https://s.example/a", "title": "Searx A", "content": "First  hit.", "engine": "bing", "score": 2.0},
    {"url": "https://s.example/b", "title": "Searx B", "content": "Second hit.", "engines": ["brave"], "score": 1.0},
]


def test_searxng_answers_web_searches_before_duckduckgo(svc):
    svc.searx_body = {
        "query": "llm agents",
        "number_of_results": 0,
        "results": SEARX_RESULTS,
        "unresponsive_engines": [],
    }
    out = svc.client(gemini=False, searx=True).search("duckduckgo", "llm agents")
    assert out.tool_used == "searxng" and not out.fallback_used and out.errors == []
    assert [(r.title, r.url, r.snippet, r.backend) for r in out.results] == [
        ("Searx A", "https://s.example/a", "First hit.", "searxng"),
        ("Searx B", "https://s.example/b", "Second hit.", "searxng"),
    ]
    assert "q=llm+agents" in svc.searx_queries[0] and "format=json" in svc.searx_queries[0]
    assert svc.web.count("/html/") == 0


def test_searxng_with_json_disabled_falls_back_to_duckduckgo(svc):
    svc.searx_status = 403
    out = svc.client(gemini=False, searx=True).search("duckduckgo", "q")
    err = out.errors[0]
    assert (err["backend"], err["kind"]) == ("searxng", "config") and "json" in err["message"]
    assert out.tool_used == "duckduckgo" and not out.fallback_used  # both answer web searches
    assert [r.url for r in out.results] == ["https://d.example/1", "https://d.example/2"]


def test_searxng_answering_json_nested_too_deeply_to_read_hands_over(svc):
    svc.searx_body = '{"results": ' + "[" * 5000 + "]" * 5000 + "}"
    out = svc.client(gemini=False, searx=True).search("duckduckgo", "q")
    assert out.errors == [
        {"backend": "searxng", "kind": "error", "message": "SearXNG answered something that is not JSON"}
    ]
    assert out.tool_used == "duckduckgo" and [r.url for r in out.results] == [
        "https://d.example/1",
        "https://d.example/2",
    ]


def test_a_searxng_title_with_a_lone_surrogate_is_saved_with_the_session(svc, tmp_path):
    # "\\ud800" is valid JSON but no character: Python reads it as a lone surrogate, which UTF-8 cannot hold
    svc.searx_body = json.dumps({"results": SEARX_RESULTS}).replace("Searx A", "Searx \\ud800 A")

    class Tools(FakeTools):
        def __init__(self):
            super().__init__()
            self._search = svc.client(gemini=False, searx=True)

    engine = ScriptedEngine([("search_duckduckgo", "llm agents"), ("send_to_hitl", "")])
    rt = make_rt(engine, tmp_path, fake_tools=Tools())
    shared = new_shared("What are LLM agents?", engine=engine.name)
    run_flow(rt, shared, "query")
    saved = json.loads((tmp_path / "sessions" / f"{shared['session_id']}.json").read_text(encoding="utf-8"))
    assert saved["status"] == "done"
    assert [s["title"] for s in saved["sources"]][:2] == ["Searx \ufffd A", "Searx B"]
    from sleuth.utils.cli.runner import write_output  # the report file (-o) holds the same title

    assert write_output(str(tmp_path / "report.md"), shared) is None
    assert "Searx \ufffd A" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_searxng_with_no_results_hands_over(svc):
    out = svc.client(gemini=False, searx=True).search("duckduckgo", "zxqv")
    assert [(e["backend"], e["kind"]) for e in out.errors] == [("searxng", "no_results")]
    assert out.tool_used == "duckduckgo"


def test_searxng_engines_that_time_out_are_reported(svc):
    svc.searx_body = {
        "results": [],
        "unresponsive_engines": [["google", "timeout"], ["bing", "Suspended: too many requests"]],
    }
    out = svc.client(gemini=False, searx=True).search("duckduckgo", "q")
    err = out.errors[0]
    assert (err["backend"], err["kind"]) == ("searxng", "timeout")
    assert "google (timeout)" in err["message"] and "bing (Suspended" in err["message"]
    assert out.tool_used == "duckduckgo"
    # some engines timed out but others answered: the results are used and the gap noted
    svc.searx_body = {"results": SEARX_RESULTS, "unresponsive_engines": [["google", "timeout"]]}
    out = svc.client(gemini=False, searx=True).search("duckduckgo", "q")
    assert out.tool_used == "searxng" and len(out.results) == 2
    assert out.errors == [
        {"backend": "searxng", "kind": "partial", "message": "engines that did not answer: google (timeout)"}
    ]


def test_searxng_url_comes_from_env_or_flag(tmp_path):
    s = load_settings(env={"SEARXNG_URL": "http://127.0.0.1:8888", "SLEUTH_DATA_DIR": str(tmp_path)}, dotenv_path=None)
    assert s.searxng_url == "http://127.0.0.1:8888"
    client = SearchClient.from_settings(s)
    assert client.available_backends() == ["searxng", "duckduckgo"]
    assert client.backends["searxng"].endpoint == "http://127.0.0.1:8888/search"
    with pytest.raises(ValueError, match="SEARXNG_URL"):
        load_settings(env={"SEARXNG_URL": "searx.local"}, dotenv_path=None)
