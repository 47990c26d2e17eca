"""utils.extract: main text, title, date and links from HTML pages (hand-written pages + the shared sample)."""

from __future__ import annotations

import gzip
import json
import re
import statistics
import threading
from collections import Counter

import pytest

from sleuth.utils.web.extract import Extracted, extract

P1 = (
    "The city council voted on Tuesday to approve a new budget for public transport, ending months of debate "
    "between the mayor and the opposition over the cost of the tram extension."
)
P2 = (
    "Under the plan, ticket prices will stay frozen for two years, while the council borrows to pay for new "
    "rolling stock and longer platforms on the busiest lines."
)
P3 = (
    "Critics said the borrowing would burden future budgets, but the transport committee argued that the "
    "extension would pay for itself within fifteen years through higher ridership."
)
P4 = "The mayor welcomed the decision."  # a short one-line paragraph inside the article
SUBHEAD = "What happens next"
BOILERPLATE = [
    "We use cookies",
    "Accept all",
    "Example Times",
    "World news",
    "Share on Facebook",
    "Tweet this",
    "Other story about a different topic",
    "teaser summary",
    "Great article",
    "Leave a reply",
    "All rights reserved",
    "Sign up for our newsletter",
    "Advertisement",
    "Skip to content",
    "By Jane Doe",
]

SEMANTIC_PAGE = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Council approves transport budget | Example Times</title>
<meta property="og:title" content="Council approves transport budget">
<meta property="article:published_time" content="2024-03-05T10:15:00Z">
<style>.article {{ color: red }} body::after {{ content: "style text" }}</style>
<script>var tracking = "script text must not leak";</script>
</head><body>
<a class="skip-link" href="#main">Skip to content</a>
<div id="cookie-banner"><p>We use cookies to improve your experience on our site. By continuing to browse you agree
to our use of cookies and our updated privacy policy.</p><button>Accept all</button></div>
<header class="site-header"><a href="/">Example Times</a>
<nav><ul><li><a href="/world">World news</a></li><li><a href="/politics">Politics</a></li>
<li><a href="/sport">Sport</a></li></ul></nav></header>
<main id="main"><article>
<h1>Council approves transport budget</h1>
<div class="byline">By Jane Doe</div>
<div class="share-buttons"><a href="https://facebook.com/sharer?u=x">Share on Facebook</a>
<a href="https://twitter.com/intent/tweet">Tweet this</a></div>
<p>{P1}</p>
<p>{P2}</p>
<div class="ad-slot">Advertisement</div>
<h2>{SUBHEAD}</h2>
<p>{P3}</p>
<p>{P4}</p>
<aside class="related"><h3>Related articles</h3><ul>
<li><a href="/a">Other story about a different topic</a><p>A teaser summary that is long enough to look like a
paragraph of prose, written to tempt an extractor into keeping it.</p></li>
<li><a href="/b">Other story about a different topic, part two</a><p>Another teaser summary that is long enough to
look like a paragraph of prose, written to tempt an extractor.</p></li></ul></aside>
</article>
<section id="comments" class="comments-area"><h3>2 comments</h3>
<div class="comment"><p>Great article, I have been waiting for this tram extension for years and I think the council
finally made the right call, even if the borrowing worries me a little.</p></div>
<div class="comment"><p>Great article again, but the budget will be a burden on the next generation of taxpayers
and nobody in the council seems to care about that at all.</p></div>
<form class="comment-form"><p>Leave a reply</p><textarea>draft</textarea></form></section>
</main>
<div class="newsletter-signup"><p>Sign up for our newsletter and get the best stories of the day delivered
straight to your inbox every single morning, for free.</p></div>
<footer><p>Copyright 2024 Example Times. All rights reserved. Reproduction without permission is prohibited and
all content is protected by the applicable copyright laws.</p></footer>
</body></html>"""

# The same article with no semantic tags at all: only divs and class names, and an unmarked teaser list.
DIV_PAGE = f"""<html><head><title>Council approves transport budget - Example Times</title></head><body>
<div class="cookie-notice">We use cookies to improve your experience. <span>Accept all</span></div>
<div class="top"><div class="logo"><a href="/">Example Times</a></div>
<div class="menu"><a href="/world">World news</a> <a href="/politics">Politics</a> <a href="/sport">Sport</a></div>
</div>
<div class="wrapper"><div class="main-column">
<div class="post"><h1>Council approves transport budget</h1>
<div class="post-body">
<p>{P1}</p><p>{P2}</p><h2>{SUBHEAD}</h2><p>{P3}</p><p>{P4}</p>
</div>
<div class="social-share"><a href="https://facebook.com/sharer?u=x">Share on Facebook</a>
<a href="https://twitter.com/intent/tweet">Tweet this</a></div>
</div>
<div class="more">
<div class="item"><h3><a href="/a">Other story about a different topic</a></h3><div>A teaser summary that is long
enough to look like a paragraph of prose, written to tempt an extractor into keeping it.</div></div>
<div class="item"><h3><a href="/b">Other story about a different topic, again</a></h3><div>Another teaser summary
that is long enough to look like a paragraph of prose, written to tempt an extractor.</div></div>
<div class="item"><h3><a href="/c">Other story about a different topic, third</a></h3><div>A third teaser summary
that is long enough to look like a paragraph of prose, written to tempt an extractor.</div></div>
</div>
<div id="disqus_thread"><div><p>Great article, I have been waiting for this tram extension for years and I think the
council finally made the right call, even if the borrowing worries me a little bit.</p></div></div>
</div></div>
<div class="site-footer">Copyright 2024 Example Times. All rights reserved. Reproduction without permission is
prohibited and all content is protected by the applicable copyright laws.</div>
</body></html>"""


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in text.split("\n\n") if p.strip()]


@pytest.mark.parametrize("page", [SEMANTIC_PAGE, DIV_PAGE], ids=["semantic-tags", "div-soup"])
def test_article_text_kept_and_boilerplate_removed(page):
    result = extract(page, "https://example.com/news/budget")
    paragraphs = _paragraphs(result.text)
    # every article paragraph and the sub-heading, each as its own paragraph, in order
    assert paragraphs == [P1, P2, SUBHEAD, P3, P4]
    for junk in BOILERPLATE:
        assert junk not in result.text
    assert result.title == "Council approves transport budget"


def test_cjk_article_wins_over_a_longer_latin_blurb():
    # 30 CJK characters say about as much as 90 Latin ones: the story must beat the 150-character blurb
    paragraphs = [
        "市议会周二投票批准了新的公共交通预算，结束了市长与反对派之间持续数月的争论。",
        "根据计划，票价将在两年内保持不变，议会将借款购买新的列车并延长站台。",
    ]
    links = "".join(f'<li><a href="/n{i}">Latest headline number {i}</a></li>' for i in range(8))
    html = f"""<html><body><div class="story"><p>{paragraphs[0]}</p><p>{paragraphs[1]}</p></div>
    <div><ul>{links}</ul></div>
    <div><p>A box with an English blurb about the newspaper, its history and its editors, long enough to look like
    an article paragraph to an extractor that counts characters.</p></div></body></html>"""
    assert _paragraphs(extract(html).text) == paragraphs


def test_script_style_and_noscript_never_in_text():
    html = f"""<html><head><script>var a = "head script";</script></head><body><article>
    <p>{P1}<script>document.write("inline script")</script></p>
    <style>p {{ font-weight: bold }}</style><noscript>Please enable JavaScript to view this page properly.</noscript>
    <script type="application/ld+json">{{"@type": "NewsArticle", "headline": "json ld text"}}</script>
    <p>{P2}</p><template><p>template text that is never rendered by a browser at all</p></template></article>
    </body></html>"""
    text = extract(html).text
    assert P1 in text and P2 in text
    for leaked in ("script", "font-weight", "JavaScript", "json ld", "template text"):
        assert leaked not in text


def test_html_shown_as_code_is_kept_but_raw_markup_text_is_not():
    code = '<script src="vendor/coverage.js" data-cover-adapter="vendor/mocha-adapter.js"></script>'
    escaped = code.replace("<", "&lt;").replace(">", "&gt;")
    html = f"""<html><body><article><p>{P1}</p><pre><code>{escaped}</code></pre><p>{P2}</p>
    <p><code>&lt;a href="" title=""&gt; &lt;abbr title=""&gt; &lt;b&gt; &lt;blockquote cite=""&gt; &lt;em&gt;</code></p>
    <p>{P3}</p></article></body></html>"""
    text = extract(html).text
    assert code in text  # a tutorial's HTML sample is part of the article
    assert "abbr" not in text  # a line of bare tags (a comment form's "allowed tags") is not
    assert P1 in text and P3 in text


def test_hidden_copy_of_the_article_is_not_extracted():
    hidden = " ".join([P1, P2, P3] * 3)
    html = f"""<html><body><div class="story"><p>{P1}</p><p>{P2}</p><p>{P3}</p></div>
    <div style="display:none" itemscope><div itemprop="articleBody">{hidden}</div></div></body></html>"""
    assert _paragraphs(extract(html).text) == [P1, P2, P3]


def test_short_page_keeps_its_only_sentence_rather_than_the_footer():
    html = """<html><body><header><a href="/">LocalWiki</a> | <a href="/">Main page</a></header>
    <nav><ul><li><a href="/">Contents</a></li><li>Help</li></ul></nav>
    <main><article><h1>Mara Hatun</h1><p>Mara Hatun is what three Vestian princesses were called:</p></article></main>
    <footer><p>This page was last edited on 1 January 2018. Text is available under the Creative Commons
    Attribution-ShareAlike License.</p></footer></body></html>"""
    result = extract(html)
    assert result.text == "Mara Hatun is what three Vestian princesses were called:"
    assert result.title == "Mara Hatun"


def test_a_page_with_only_a_title_and_a_link_gives_both():
    html = """<html><head><title>Annual report 2024</title></head><body>
    <a href="/files/report-2024.pdf">Download the full report (PDF)</a></body></html>"""
    result = extract(html, "https://example.org/reports/")
    assert result.text == "Annual report 2024\n\nDownload the full report (PDF)"
    assert result.links == ["https://example.org/files/report-2024.pdf"]
    assert extract("<html><head><title>Empty</title></head><body></body></html>").text == ""


def test_br_separated_text_and_list_items():
    html = f"""<html><body><div class="content">{P1}<br>{P2}<br><br>{P3}
    <ul><li>{P4} It came after a long night of talks.</li><li>Ticket prices stay frozen for two more years.</li>
    </ul></div></body></html>"""
    paragraphs = _paragraphs(extract(html).text)
    assert paragraphs[0] == f"{P1}\n{P2}"  # a single <br> is a line break, <br><br> a new paragraph
    assert paragraphs[1] == P3
    assert paragraphs[2:] == [
        f"{P4} It came after a long night of talks.",
        "Ticket prices stay frozen for two more years.",
    ]


@pytest.mark.parametrize(
    "head, expected",
    [
        ('<meta property="article:published_time" content="2024-03-05T10:15:00+01:00">', "2024-03-05T10:15:00+01:00"),
        ('<meta name="pubdate" content="20240305">', "2024-03-05"),
        (
            '<script type="application/ld+json">{"@context": "https://schema.org", "@graph": [{"@type": "WebPage"},'
            ' {"@type": "NewsArticle", "datePublished": "2023-11-19T07:03:25Z"}]}</script>',
            "2023-11-19T07:03:25Z",
        ),
        (
            '<script type="application/ld+json">[{"@type": "Article", "datePublished": "2022-01-31"}]</script>',
            "2022-01-31",
        ),
        ('<meta itemprop="datePublished" content="2021-06-01T08:00:00+0200">', "2021-06-01T08:00:00+02:00"),
        (
            '<script type="application/ld+json">//<![CDATA[\n{"datePublished": "Tue, 19 Nov 2019 10:00:00 GMT"}\n//]]>'
            "</script>",
            "2019-11-19",
        ),
        ("", None),
    ],
)
def test_published_date_from_metadata(head, expected):
    html = f"<html><head>{head}</head><body><p>{P1}</p></body></html>"
    assert extract(html).published == expected


def test_published_date_from_time_element_and_bad_dates_ignored():
    html = f"""<html><head><meta property="article:published_time" content="0001-01-01T00:00:00Z">
    <meta name="date" content="not a date"></head><body><article>
    <time datetime="2019-11-18">Nov 18</time><time pubdate datetime="2019-11-17T20:00:00Z">Nov 17</time>
    <p>{P1}</p></article></body></html>"""
    assert extract(html).published == "2019-11-17T20:00:00Z"  # <time pubdate> wins over a plain <time>
    assert extract(f"<html><body><p>{P1}</p><time>yesterday</time></body></html>").published is None


def test_published_date_from_the_address_when_the_page_gives_none():
    page = f"<html><body><p>{P1}</p></body></html>"
    assert extract(page, "https://blog.example/2019/01/31/ferry-news/").published == "2019-01-31"
    assert extract(page, "https://news.example/world/2020-02-29-leap-day.html").published == "2020-02-29"
    assert extract(page, "https://shop.example/2019/13/40/item").published is None  # no such month or day
    assert extract(page, "https://shop.example/item?from=/2019/01/31/").published is None  # not in the path
    assert extract(page, "https://app.example/#/2019/01/31/").published is None  # a fragment is not the path
    dated = f'<html><head><meta name="date" content="2019-02-01"></head><body><p>{P1}</p></body></html>'
    assert extract(dated, "https://blog.example/2019/01/31/ferry-news/").published == "2019-02-01"  # page wins


def test_json_ld_nested_too_deep_to_parse_is_skipped_and_the_page_still_read():
    nested = '{"a": ' * 100_000 + "1" + "}" * 100_000
    head = f'<script type="application/ld+json">{nested}</script><meta name="date" content="2019-02-01">'
    result = extract(f"<html><head>{head}</head><body><p>{P1}</p></body></html>")
    assert result.text == P1
    assert result.published == "2019-02-01"


def test_title_sources():
    assert extract("<html><head><title>Only title</title></head><body><p>x</p></body></html>").title == "Only title"
    html = "<html><head><title>Headline here | Site</title></head><body><h1>Headline here</h1></body></html>"
    assert extract(html).title == "Headline here"
    html = '<html><head><meta name="twitter:title" content="From Twitter card"><title>T</title></head></html>'
    assert extract(html).title == "From Twitter card"


HEADLINE = "Ferry terminal to close"


@pytest.mark.parametrize(
    ("title", "head", "url"),
    [
        (f"{HEADLINE} | Harbour Times", '<meta property="og:site_name" content="Harbour Times">', ""),
        (f"{HEADLINE} - harbourtimes.com", "", "https://www.harbourtimes.com/2024/ferry"),  # the domain's name
        (f"{HEADLINE} » Harbour Times", "", "https://news.harbour-times.co.uk/ferry"),
        (f"{HEADLINE} | Harbour Times", "", "https://reader:pw@HarbourTimes.com:8443/ferry"),  # login, port
        (f"{HEADLINE} | Harbour Times", '<meta name="twitter:site" content="@HarbourTimes">', "http://[harbour/ferry"),
        (
            f"{HEADLINE} | Harbour Times - News from the coast",  # a site name with a separator of its own
            '<meta name="application-name" content="Harbour Times - News from the coast">',
            "",
        ),
    ],
)
def test_a_trailing_site_name_is_left_out_of_the_title(title, head, url):
    html = f'<html><head><meta property="og:title" content="{title}">{head}</head><body><p>{P1}</p></body></html>'
    assert extract(html, url).title == HEADLINE


def test_a_title_whose_last_part_only_mentions_the_site_keeps_it():
    html = f"""<html><head><meta property="og:title" content="Glasgow talks - Red Cross warns of more floods this
    winter"></head><body><p>{P1}</p></body></html>"""
    assert extract(html, "https://www.redcross.org/news").title.endswith("more floods this winter")
    html = f"<html><head><title>Harbour: the terminal closes</title></head><body><p>{P1}</p></body></html>"
    assert extract(html, "https://harbour.example/a").title == "Harbour: the terminal closes"
    html = f'<html><head><meta property="og:title" content="{HEADLINE} - Harbour Commons"></head></html>'
    assert extract(html, "https://www.boats.com.br/ferry").title == f"{HEADLINE} - Harbour Commons"  # not "com"


def test_links_are_absolute_deduplicated_and_in_document_order():
    html = """<html><head><base href="https://cdn.example.org/docs/"></head><body>
    <a href="guide.html#intro">Guide</a>
    <a href="/about">About</a>
    <a href="//other.example.net/x?y=1">Other</a>
    <a href="https://example.com/page#frag">Page</a>
    <a href="https://example.com/page">Page again</a>
    <a href="mailto:someone@example.com">Mail</a><a href="javascript:void(0)">JS</a><a href="#top">Top</a>
    <a href="ftp://files.example.com/f">FTP</a><a>no href</a>
    <a href="../up.html">Up</a>
    </body></html>"""
    assert extract(html, "https://example.com/start/index.html").links == [
        "https://cdn.example.org/docs/guide.html",
        "https://cdn.example.org/about",
        "https://other.example.net/x?y=1",
        "https://example.com/page",
        "https://cdn.example.org/up.html",
    ]


def test_links_resolve_against_page_url_without_base():
    html = '<html><body><a href="next.html">n</a><a href="/root">r</a><a href="?page=2">p</a></body></html>'
    assert extract(html, "http://127.0.0.1:8000/wiki/A.html").links == [
        "http://127.0.0.1:8000/wiki/next.html",
        "http://127.0.0.1:8000/root",
        "http://127.0.0.1:8000/wiki/A.html?page=2",
    ]


@pytest.mark.parametrize("page_url", ["http://127.0.0.1:8000?from=feed", "http://127.0.0.1:8000#top"])
def test_root_links_resolve_against_an_address_with_no_path(page_url):
    html = '<html><body><a href="/root">r</a></body></html>'
    assert extract(html, page_url).links == ["http://127.0.0.1:8000/root"]


@pytest.mark.parametrize(
    "declaration",
    [
        '<meta charset="windows-1252">',
        '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">',
        "",  # undeclared and not valid UTF-8: falls back to cp1252
    ],
)
def test_bytes_are_decoded_with_the_declared_or_fallback_charset(declaration):
    body = f"<p>Caf\u00e9 cr\u00e8me \u201cquoted\u201d \u2013 na\u00efve r\u00e9sum\u00e9. {P1}</p>"
    data = f"<html><head>{declaration}<title>Caf\u00e9</title></head><body>{body}</body></html>".encode("cp1252")
    result = extract(data)
    assert result.title == "Caf\u00e9"
    assert "Caf\u00e9 cr\u00e8me \u201cquoted\u201d \u2013 na\u00efve r\u00e9sum\u00e9." in result.text


def test_utf8_bytes_without_declaration():
    data = f"<html><body><p>\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! {P1}</p></body></html>"
    assert "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440!" in extract(data.encode("utf-8")).text


PNG_BYTES = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + bytes(range(256)) * 4


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        b"",
        "   \n ",
        b"\x00\x00\x00",
        b"\xff\xfe\xfd\x80\x81",
        PNG_BYTES,
        "<html></html>",
        "<?xml?>",
        "<html><body><script>only a script</script><style>p {}</style></body></html>",
        None,
        42,
    ],
)
def test_empty_or_garbage_input_gives_empty_result_without_raising(garbage):
    assert extract(garbage) == Extracted()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "odd",
    [
        "<<<>>><!--",
        "</p></div></body>",
        "<div>" * 5000 + "deep",
        "<a href='//[bad-ipv6'>x</a><a href='/ok'>ok</a>",
        b'<meta charset="no-such-charset"><p>text</p>',
        '<?xml version="1.0" encoding="ISO-8859-1"?><p>x</p>',
    ],
)
def test_malformed_markup_is_handled_without_errors(odd, caplog):
    result = extract(odd, "https://example.com/")
    assert isinstance(result, Extracted)
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]  # no exception swallowed


def test_a_page_that_leaves_a_div_open_per_item_is_read_to_the_end():
    # 300 list items that each leave a <div> open nest 300 levels deep; the parser used to stop at 256
    items = "".join(f'<div class="item"><a href="/i{i}">Item {i}</a>' for i in range(300))
    html = f"<html><body>{items}<p>{P1}</p><p>{P2}</p><p>{P3}</p></body></html>"
    assert extract(html).text == f"{P1}\n\n{P2}\n\n{P3}"


@pytest.mark.parametrize("tag", ["font", "div"])
def test_a_page_nested_past_the_parsers_limit_is_still_read_to_the_end(tag):
    # 3,000 guestbook entries that each leave an element open nest deeper than libxml2 goes (2,048)
    entry = "we stayed three nights at the harbour inn and would gladly come back again next summer."
    html = "<html><body>" + "".join(f"<{tag}>Entry {i}: {entry}" for i in range(3000)) + f"<p>{P1}</p></body></html>"
    text = extract(html).text
    assert text.startswith(f"Entry 0: {entry}") and f"Entry 2999: {entry}" in text and text.endswith(P1)


LEAKED_SCRIPT = (
    "var ads = window.ads || []; function show(slot) { if (slot) { return ads.push(slot); } return 0; } "
    "if (document.cookie) { show(document.cookie.length); }"
)


def test_script_that_leaks_into_the_page_text_is_not_article_text():
    # the parser ends a script at the first "</script>", even inside a string, and reads the rest as text
    html = f"""<html><body><div class="page"><script>document.write('<script src="/ads.js"></script>');
    {LEAKED_SCRIPT}</script><div class="story"><p>{P1}</p><p>{P2}</p></div></div></body></html>"""
    assert extract(html).text == f"{P1}\n\n{P2}"


def test_code_shown_in_a_code_element_is_kept_with_the_article():
    code = f"{LEAKED_SCRIPT} function add(a, b) {{ return a + b; }}"
    html = f"""<html><body><div class="story"><p>{P1}</p><div class="highlight"><code>{code}</code></div>
    <p>{P2}</p></div></body></html>"""
    assert extract(html).text == f"{P1}\n\n{code}\n\n{P2}"


def test_letters_written_with_combining_accents_come_out_composed():
    decomposed = "Cafe\u0301 owners in Sa\u0303o Paulo"  # "e" + combining acute, "a" + combining tilde
    result = extract(f"<html><head><title>{decomposed}</title></head><body><p>{decomposed}. {P1}</p></body></html>")
    assert result.title == "Café owners in São Paulo"
    assert result.text == f"Café owners in São Paulo. {P1}"


def test_a_stray_nul_in_the_page_does_not_reach_the_text():
    # a lone paragraph asks for a second opinion, which read the NULs as replacement characters
    text = extract(f"<html><body>\x00\x00<p>{P1}</p>\x00</body></html>").text
    assert text == P1


def test_plain_text_input_is_kept():
    line = "Just a line of plain text, no markup at all."
    assert extract(line).text == line


def test_same_results_from_concurrent_threads():
    expected = extract(SEMANTIC_PAGE, "https://example.com/a")
    results: list[Extracted] = []

    def work():
        for _ in range(20):
            results.append(extract(SEMANTIC_PAGE, "https://example.com/a"))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 80 and all(r == expected for r in results)


# ---- real pages -----------------------------------------------------------------------------------------------


def _f1(predicted: str, gold: str) -> float:
    p, g = Counter(re.findall(r"\w+", predicted.lower())), Counter(re.findall(r"\w+", gold.lower()))
    overlap = sum((p & g).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(p.values()), overlap / sum(g.values())
    return 2 * precision * recall / (precision + recall)


def test_main_text_quality_on_real_news_pages(shared_eval):
    sample = shared_eval / "article-extraction-sample"
    truth = json.loads((sample / "ground-truth.json").read_text(encoding="utf-8"))
    scores = []
    for page_id, item in sorted(truth.items()):
        html = gzip.decompress((sample / "html" / f"{page_id}.html.gz").read_bytes())
        scores.append(_f1(extract(html, item["url"]).text, item["articleBody"]))
    assert len(scores) == 60
    assert statistics.mean(scores) >= 0.97


def test_fixture_wiki_pages_give_exactly_their_title_and_article_text():
    """The pages the end-to-end tests crawl: the site's header, menu and footer never reach the text."""
    from conftest import FIXTURE_WEB
    from localweb import read_pages

    pages = read_pages(FIXTURE_WEB)
    assert len(pages) >= 30
    for page in pages:
        html = (FIXTURE_WEB / page["path"]).read_bytes()
        result = extract(html, "http://127.0.0.1:8000" + page["url"])
        assert (result.title, result.text) == (page["title"], page["text"])
        article = html.decode().split("<article>")[1]
        hrefs = {"http://127.0.0.1:8000" + h for h in re.findall(r'href="(/wiki/[^"]+)"', article)}
        assert hrefs <= set(result.links)  # the pages it mentions can be crawled from it


def test_local_wiki_pages_give_exactly_their_article_text(shared_eval):
    folder = shared_eval / "hotpotqa-dev100"
    pages = [json.loads(line) for line in (folder / "pages.jsonl").read_text(encoding="utf-8").splitlines()]
    scores = []
    for page in pages[::5]:
        result = extract((folder / page["path"]).read_bytes(), "http://127.0.0.1:8000" + page["url"])
        scores.append(_f1(result.text, page["text"]))
        assert "LocalWiki" not in result.text and "This page was last edited" not in result.text
    assert statistics.mean(scores) >= 0.99
