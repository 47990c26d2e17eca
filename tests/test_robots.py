"""robots.txt as RFC 9309 says: wildcards, end anchors, the longest match wins, our own group.

The seven rule sets below are the ones the standard library's ``urllib.robotparser`` gets wrong
or that pin the RFC's tie-breaking; each is checked directly and one through the crawler.
"""

from __future__ import annotations

import pytest

from sleuth.utils.web.fetcher import DEFAULT_UA, Fetcher, robots_allows, robots_token
from tests.webfixtures import LocalServer, page, send

CASES = [
    # (robots.txt, path, allowed?)
    # 1. '*' inside a path: session-id URLs are refused, the same page without it is not.
    ("User-agent: *\nDisallow: /*?sessionid=\n", "/shop/item?sessionid=42", False),
    ("User-agent: *\nDisallow: /*?sessionid=\n", "/shop/item", True),
    # 2. '$' anchors the end: PDFs are refused, a URL that only contains ".pdf" is not.
    ("User-agent: *\nDisallow: /*.pdf$\n", "/papers/report.pdf", False),
    ("User-agent: *\nDisallow: /*.pdf$\n", "/papers/report.pdf?download=1", True),
    # 3. The longest match wins, not the first: an earlier 'Allow: /' does not open /private/.
    ("User-agent: *\nAllow: /\nDisallow: /private/\n", "/private/a", False),
    ("User-agent: *\nAllow: /\nDisallow: /private/\n", "/public/a", True),
    # 4. A longer Allow beats a shorter Disallow (whatever their order).
    ("User-agent: *\nDisallow: /docs/\nAllow: /docs/public/\n", "/docs/public/guide", True),
    ("User-agent: *\nDisallow: /docs/\nAllow: /docs/public/\n", "/docs/internal", False),
    # 5. Equally long Allow and Disallow: the least restrictive (Allow) wins.
    ("User-agent: *\nDisallow: /page\nAllow: /page\n", "/page", True),
    # 6. The group naming our product token (case-insensitive) applies instead of '*'.
    ("User-agent: *\nAllow: /\n\nUser-agent: sleuth\nDisallow: /\n", "/anything", False),
    ("User-agent: otherbot\nDisallow: /\n", "/anything", True),
    # 7. '/$' refuses only the root; an empty Disallow refuses nothing.
    ("User-agent: *\nDisallow: /$\n", "/", False),
    ("User-agent: *\nDisallow: /$\n", "/index.html", True),
    ("User-agent: *\nDisallow:\n", "/anything", True),
]


@pytest.mark.parametrize(("robots", "path", "allowed"), CASES)
def test_rfc9309_rules(robots, path, allowed):
    assert robots_allows(robots, "https://example.org" + path, DEFAULT_UA) is allowed


def test_groups_are_matched_by_product_token():
    assert robots_token(DEFAULT_UA) == "Sleuth"
    assert robots_token("my-bot/2.0 (+https://x)") == "my-bot"


def test_the_crawler_applies_wildcards_and_longest_match():
    robots = "User-agent: *\nAllow: /\nDisallow: /private/\nDisallow: /*?sessionid=\nAllow: /private/open/\n"
    routes = {
        "/robots.txt": lambda req: send(req, 200, robots, "text/plain"),
    }
    for path in ("/private/a", "/private/open/b", "/item"):
        routes[path] = lambda req: send(req, 200, page("p", "<p>text</p>"), "text/html")
    with LocalServer(routes) as site:
        f = Fetcher(allow_private_hosts=True, per_host_interval=0.0, sleep=lambda s: None)
        paths = ("/private/a", "/private/open/b", "/item", "/item?sessionid=1")
        kinds = {p: f.fetch(site.url(p)).error_kind for p in paths}
        assert kinds == {"/private/a": "robots", "/private/open/b": None, "/item": None, "/item?sessionid=1": "robots"}
        assert site.count("/private/a") == 0 and site.count("/item") == 1 and site.count("/robots.txt") == 1
