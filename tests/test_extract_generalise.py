"""utils.web.extract on page shapes the scoring used to get wrong, and the second opinion
(utils.web.extract_second) for pages where our text looks too short. Hand-written pages only."""

from __future__ import annotations

import json
import sys

import pytest

from sleuth.utils.web import extract_second
from sleuth.utils.web.extract import extract

STORY = (
    "The harbour authority confirmed on Monday that the old ferry terminal will close at the end of the "
    "summer, after engineers found that the pier no longer meets the safety standards set three years ago. "
    "Passengers will board at the new terminal on the east side, which opens in June with a larger waiting "
    "hall, covered walkways and space for twice as many cars on every crossing."
)
MORE = [
    "The authority said the closure had been planned for years and that no jobs would be lost, since the staff "
    "of the old terminal would move to the new building together with the ticket office and the cafe.",
    "Local shops near the old pier said they feared losing customers, and asked the council for help with rent "
    "while the area is redeveloped into housing and a small park over the next four or five years.",
    "A public meeting about the plans will be held at the town hall next Thursday evening, and the drawings "
    "of the new terminal can be seen in the library until the end of the month.",
]
ABOUT = (
    "About this site: a small independent blog about boats, harbours and coastal towns, written by a retired "
    "sailor who has crossed these waters for forty years and still likes to write about them."
)
DISCLAIMER = (
    "Disclaimer: the opinions expressed on this site are those of the authors alone. Nothing here is "
    "professional advice. All trademarks belong to their owners, and the photographs may not be reused "
    "without written permission. The site takes no responsibility for the content of external sites linked "
    "from these pages, which may change at any time without notice, and it cannot guarantee that the "
    "information on this page is complete, current or free of errors of any kind whatsoever at any time."
)
NAV = "".join(f'<li><a href="/c{i}">Category number {i}</a></li>' for i in range(20))


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in text.split("\n\n") if p.strip()]


def test_one_story_under_a_linked_headline_is_the_article_not_a_teaser():
    # blogs link the headline to the post's own address; with one such item on the page it is the post
    html = f"""<html><body>
    <div class="item"><h2><a href="/2024/06/ferry">Old ferry terminal to close</a></h2><div>{STORY}</div></div>
    <ul>{NAV}</ul><div class="blurb"><p>{ABOUT}</p></div></body></html>"""
    assert _paragraphs(extract(html).text) == [STORY]


def test_several_linked_headlines_with_summaries_are_still_a_teaser_list():
    teasers = "".join(
        f'<div class="item"><h3><a href="/t{i}">Another story number {i}</a></h3><div>{text}</div></div>'
        for i, text in enumerate(MORE)
    )
    html = f"""<html><body><div class="story"><p>{STORY}</p><p>{ABOUT}</p></div>
    <div class="list">{teasers}</div></body></html>"""
    text = extract(html).text
    assert STORY in text
    assert not any(t in text for t in MORE)


def _cut_off_items(ending: str) -> str:
    return "".join(
        f'<li><img src="/t{i}.jpg"><a href="/t{i}">Another story number {i}</a><br>{text[:120]} {ending}</li>'
        for i, text in enumerate(MORE)
    )


def test_excerpts_cut_off_under_their_linked_headlines_are_teasers_not_the_article():
    # a related-posts list inside the post's own wrapper, each item one block: headline link, line
    # break, the first words of the other post and "[...]"
    html = f"""<html><body><div><h1>Old ferry terminal to close</h1><p>{STORY}</p><p>{MORE[0]}</p>
    <div>Related posts</div><ul>{_cut_off_items("[...]")}</ul></div></body></html>"""
    text = extract(html).text
    assert _paragraphs(text) == [STORY, MORE[0]]


def test_paragraphs_that_trail_off_without_links_are_the_article():
    trailing = [f"{text[:-1]}..." for text in MORE]
    html = f"""<html><body><div><p>{STORY}</p>{"".join(f"<p>{t}</p>" for t in trailing)}</div>
    <ul>{NAV}</ul></body></html>"""
    assert _paragraphs(extract(html).text) == [STORY, *trailing]


@pytest.mark.parametrize("classes", ["post hentry tag-ad tag-share category-social", "h-entry author-jane"])
def test_a_post_marked_as_an_entry_is_not_furniture_because_of_its_tag_classes(classes):
    # blog engines add taxonomy classes (tag-<slug>, category-<slug>) to the post itself
    post = [f"{STORY} {MORE[1]}", MORE[0]]
    html = f"""<html><body>
    <div class="{classes}"><p>{post[0]}</p><p>{post[1]}</p></div>
    <ul>{NAV}{NAV}</ul><div class="about"><p>{ABOUT}</p><p>{MORE[2]}</p></div></body></html>"""
    assert _paragraphs(extract(html).text) == post


def test_a_long_disclaimer_in_a_footer_named_block_does_not_beat_the_article():
    html = f"""<html><body><div class="content"><p>{STORY}</p><p>{MORE[0]}</p><p>{MORE[1]}</p></div>
    <div id="footer"><p>{DISCLAIMER}</p><p>{DISCLAIMER}</p></div></body></html>"""
    assert _paragraphs(extract(html).text) == [STORY, MORE[0], MORE[1]]


# --- the second opinion -------------------------------------------------------------------------------


def test_long_text_is_trusted_without_a_second_opinion(monkeypatch):
    def boom(*_args, **_kwargs):
        raise AssertionError("second opinion asked for a long text")

    monkeypatch.setattr(extract_second, "second_opinion", boom)
    ours = " ".join([STORY, *MORE])
    assert extract_second.better_of(ours, "<html></html>") == ours


def test_short_text_is_replaced_by_a_longer_different_second_opinion(monkeypatch):
    monkeypatch.setattr(
        extract_second, "second_opinion", lambda html, url="", rejected=(): "\n\n".join([STORY, MORE[0]])
    )
    assert extract_second.better_of("Sign up for our newsletter today.", "<html></html>") == f"{STORY}\n\n{MORE[0]}"


def test_short_text_is_kept_when_the_second_opinion_only_adds_a_little_to_it(monkeypatch):
    ours = "The pier closes in June."
    monkeypatch.setattr(
        extract_second, "second_opinion", lambda html, url="", rejected=(): ours + " Contact us. Log in."
    )
    assert extract_second.better_of(ours, "<html></html>") == ours


def test_second_opinion_reads_the_article_and_drops_furniture_inside_it():
    html = f"""<html><body><ul class="nav">{NAV}</ul><div class="story"><h1>Old ferry terminal to close</h1>
    <p>{STORY}</p><p>{MORE[0]}</p><div class="share-tools"><p>Share this story with your friends on every
    social network you use, by e-mail or by printing it out.</p></div><p>{MORE[1]}</p></div></body></html>"""
    assert _paragraphs(extract_second.second_opinion(html)) == [STORY, MORE[0], MORE[1]]


def test_second_opinion_keeps_the_linked_items_of_a_list_in_the_article():
    # a news digest whose last item is wholly a link (readability drops a list with more links than that)
    digest = [MORE[1], ABOUT, DISCLAIMER, f'<a href="/t2">{MORE[2]}</a>']
    html = f"""<html><body><ul class="nav">{NAV}</ul><div class="story"><p>{STORY}</p><p>{MORE[0]}</p>
    <ul>{"".join(f"<li>{t}</li>" for t in digest)}</ul></div></body></html>"""
    assert _paragraphs(extract_second.second_opinion(html)) == [STORY, MORE[0], MORE[1], ABOUT, DISCLAIMER, MORE[2]]


def test_without_the_second_opinion_library_our_text_stands(monkeypatch):
    monkeypatch.setitem(sys.modules, "readability", None)  # import fails as if it were not installed
    assert extract_second.second_opinion(f"<html><body><p>{STORY}</p></body></html>") == ""
    assert extract_second.better_of("Short text.", "<html></html>") == "Short text."


def test_a_one_paragraph_story_beside_longer_furniture_is_found():
    # ours alone picks the longer "about" box on such a page; the story is what a reader came for
    html = f"""<html><body><ul class="nav">{NAV}</ul>
    <div id="content"><div class="entry-body"><p>{STORY}</p></div></div>
    <div class="site-info"><p>{DISCLAIMER}</p><p>{ABOUT}</p></div></body></html>"""
    assert STORY in extract(html).text


# --- doubts: our text came from furniture, or misses the page's own description -----------------------

COMMENTS = [
    "I used to take that ferry every morning when I worked in town, and the old pier was already in a sorry "
    "state back then, with planks missing and the railings rusted through in more than one place.",
    "Good riddance, honestly. The new terminal looks far better, and the extra space for cars should end the "
    "long queues we get every summer weekend when the tourists all arrive at the same time.",
    "Does anyone know whether the cafe will keep its opening hours at the new building? It was the only place "
    "open early enough for the first crossing, and I would hate to lose my coffee before work.",
    "My grandfather helped to build that pier after the war, so it is sad to see it go, but I understand "
    "that nothing lasts forever and the safety of the passengers has to come first in the end.",
]


def test_a_long_comment_thread_does_not_beat_a_short_article():
    thread = "".join(
        f'<div class="c"><div class="who">Reader {i} - June {i}, 2024</div><p>{c}</p><p>{c}</p></div>'
        for i, c in enumerate(COMMENTS * 2)
    )
    html = f"""<html><body><ul class="nav">{NAV}</ul>
    <div class="main"><h1>Old ferry terminal to close</h1><p>{STORY}</p><p>{MORE[0]}</p></div>
    <div id="comments"><h2>Comments</h2>{thread}</div></body></html>"""
    text = extract(html).text
    assert STORY in text and MORE[0] in text
    assert not any(c in text for c in COMMENTS)


def test_text_that_misses_the_page_description_is_replaced_by_a_second_opinion_that_covers_it(monkeypatch):
    ours = "\n\n".join([ABOUT, DISCLAIMER])
    monkeypatch.setattr(extract_second, "second_opinion", lambda *a, **k: "\n\n".join([STORY, MORE[0]]))
    description = "The old ferry terminal will close at the end of the summer, the harbour authority said."
    assert extract_second.better_of(ours, "<html></html>", description=description) == f"{STORY}\n\n{MORE[0]}"


def test_text_that_covers_the_page_description_is_trusted(monkeypatch):
    def boom(*_args, **_kwargs):
        raise AssertionError("second opinion asked for a text that covers the description")

    monkeypatch.setattr(extract_second, "second_opinion", boom)
    ours = "\n\n".join([STORY, *MORE])
    description = "The old ferry terminal will close at the end of the summer, the harbour authority said."
    assert extract_second.better_of(ours, "<html></html>", description=description) == ours


def test_text_that_misses_the_description_stays_when_the_second_opinion_misses_it_too(monkeypatch):
    ours = "\n\n".join([STORY, *MORE])
    monkeypatch.setattr(extract_second, "second_opinion", lambda *a, **k: ABOUT)
    description = "Weekly shipping bulletin: cargo tonnage, fuel prices and crew rotations for vessel operators."
    assert extract_second.better_of(ours, "<html></html>", description=description) == ours


def test_text_from_furniture_stays_when_the_second_opinion_reads_part_of_it(monkeypatch):
    # a page whose article sits in a wrapper named like a sidebar: both read the same article, ours more
    ours = "\n\n".join([STORY, MORE[0], MORE[1], MORE[2]])
    monkeypatch.setattr(extract_second, "second_opinion", lambda *a, **k: "\n\n".join([MORE[0], MORE[1]]))
    assert extract_second.better_of(ours, "<html></html>", doubts={"furniture"}) == ours


def test_text_from_furniture_gives_way_to_a_second_opinion_that_reads_something_else(monkeypatch):
    ours = "\n\n".join(COMMENTS)
    other = "\n\n".join([STORY, MORE[0]])
    monkeypatch.setattr(extract_second, "second_opinion", lambda *a, **k: other)
    assert extract_second.better_of(ours, "<html></html>", doubts={"furniture"}) == other


def test_text_from_furniture_stays_when_the_second_opinion_has_nothing(monkeypatch):
    ours = "\n\n".join(COMMENTS)
    monkeypatch.setattr(extract_second, "second_opinion", lambda *a, **k: "")
    assert extract_second.better_of(ours, "<html></html>", doubts={"furniture"}) == ours


def test_text_from_furniture_stays_when_the_page_description_is_about_it(monkeypatch):
    # page builders wrap the article in "widget" elements; the page's own description settles which
    # reading is the article
    ours = "\n\n".join([STORY, MORE[0], MORE[1]])
    monkeypatch.setattr(extract_second, "second_opinion", lambda *a, **k: DISCLAIMER)
    about_story = "The old ferry terminal will close at the end of the summer; passengers move to the new terminal."
    assert extract_second.better_of(ours, "<html></html>", doubts={"furniture"}, description=about_story) == ours
    about_site = "Disclaimer: the opinions expressed on this site are those of the authors; nothing is advice."
    assert extract_second.better_of(ours, "<html></html>", doubts={"furniture"}, description=about_site) == DISCLAIMER


# --- lists inside the article -------------------------------------------------------------------------

ITEMS = ["Two slices of bread", "One ripe tomato", "A pinch of salt"]


def test_a_list_that_a_paragraph_introduces_with_a_colon_is_kept_at_the_end_of_the_article():
    intro = f"{MORE[0]} For the sandwich served at the opening you will need the following:"
    items = "".join(f"<li>{t}</li>" for t in ITEMS)
    html = f"""<html><body><div class="content"><p>{STORY}</p><p>{intro}</p><ul>{items}</ul></div>
    <ul>{NAV}</ul></body></html>"""
    assert _paragraphs(extract(html).text) == [STORY, intro, *ITEMS]


def test_a_short_line_that_introduces_a_list_at_the_end_of_the_article_is_kept_with_it():
    intro = "At the opening you will need the following:"
    items = "".join(f"<li>{t}</li>" for t in ITEMS)
    html = f"""<html><body><div class="content"><p>{STORY}</p><p>{MORE[0]}</p><p>{intro}</p><ul>{items}</ul></div>
    <ul>{NAV}</ul></body></html>"""
    assert _paragraphs(extract(html).text) == [STORY, MORE[0], intro, *ITEMS]


def test_the_linked_items_of_a_list_the_article_introduces_are_kept_with_the_others():
    intro = f"{MORE[0]} The ferry will call at these harbours next summer:"
    harbours = [
        "Northport",
        '<a href="/harbours/eastbay">East Bay</a>',
        '<a href="/harbours/pier">Pier Nine</a>',
        "Kells",
    ]
    items = "".join(f"<li>{t}</li>" for t in harbours)
    html = f"""<html><body><div class="content"><p>{STORY}</p><p>{intro}</p><ul>{items}</ul></div>
    <ul>{NAV}</ul></body></html>"""
    assert _paragraphs(extract(html).text) == [STORY, intro, "Northport", "East Bay", "Pier Nine", "Kells"]


def test_a_nested_list_the_article_introduces_is_kept_with_the_items_around_it():
    intro = f"{MORE[0]} For the sandwich served at the opening you will need the following:"
    items = f"<li>{ITEMS[0]}<ul><li>white or brown</li><li>sliced thin</li></ul></li><li>{ITEMS[1]}</li>"
    html = f"""<html><body><div class="content"><p>{STORY}</p><p>{intro}</p><ul>{items}</ul></div>
    <ul>{NAV}</ul></body></html>"""
    assert _paragraphs(extract(html).text) == [STORY, intro, ITEMS[0], "white or brown", "sliced thin", ITEMS[1]]


def test_a_list_with_an_item_of_prose_keeps_its_short_and_linked_items_wherever_they_stand():
    items = ['<a href="/harbours/pier">Pier Nine</a>', "Kells harbour", MORE[1]]
    html = f"""<html><body><div class="content"><p>{STORY}</p><p>{MORE[0]}</p>
    <ul>{"".join(f"<li>{t}</li>" for t in items)}</ul></div><ul>{NAV}</ul></body></html>"""
    assert _paragraphs(extract(html).text) == [STORY, MORE[0], "Pier Nine", "Kells harbour", MORE[1]]


def test_a_list_of_links_after_the_article_stays_out_even_after_a_line_that_introduces_it():
    intro = "More stories from the coast:"
    links = "".join(f'<li><a href="/s{i}">Another story from the coast, number {i}</a></li>' for i in range(4))
    html = f"""<html><body><div class="content"><p>{STORY}</p><p>{MORE[0]}</p><p>{intro}</p><ul>{links}</ul>
    </div></body></html>"""
    text = extract(html).text
    assert _paragraphs(text)[:2] == [STORY, MORE[0]]
    assert "Another story" not in text


def test_a_short_list_after_the_article_without_an_introduction_is_left_out():
    items = "".join(f"<li>{t}</li>" for t in ITEMS)
    html = f"""<html><body><div class="content"><p>{STORY}</p><p>{MORE[0]}</p><ul>{items}</ul></div>
    <ul>{NAV}</ul></body></html>"""
    assert _paragraphs(extract(html).text) == [STORY, MORE[0]]


# --- a lone paragraph: our container is one paragraph of a short post ---------------------------------

INTRO = (
    'While reading <a href="/talks/harbours">a talk on harbour design</a> by <a href="/people/ann">Ann Berg</a>, '
    "I stopped at this slide."
)
POINT = (
    "A good harbour is planned around the people who wait in it, not the boats: shelter, light and a clear "
    "view of the water."
)
QUESTION = "What would you change about the harbour you know best?"


def test_the_short_lines_around_a_lone_paragraph_are_kept_when_the_second_opinion_has_them():
    # the intro is link-heavy and the closing question is a one-item list: alone, neither scores as prose,
    # so our own pass keeps only the middle paragraph; the second opinion reads the whole post
    html = f"""<html><body><ul class="nav">{NAV}</ul>
    <div id="content"><div class="post"><h1>What a harbour is for</h1>
    <div class="entry-content"><p>{INTRO}</p><p><img src="/slide.png" alt=""></p><p>{POINT}</p>
    <ul><li>{QUESTION}</li></ul></div></div></div></body></html>"""
    text = extract(html).text
    assert "I stopped at this slide." in text and POINT in text and QUESTION in text
    assert "Category number" not in text


def test_a_lone_paragraph_gives_way_to_a_second_opinion_that_only_adds_a_little(monkeypatch):
    ours = "Short text about the harbour, one paragraph long and nothing else at all here."
    other = f"{ours}\n\nWhat would you change?"
    monkeypatch.setattr(extract_second, "second_opinion", lambda *a, **k: other)
    assert extract_second.better_of(ours, "<html></html>", doubts={"paragraph"}) == other
    assert extract_second.better_of(ours, "<html></html>") == ours  # not a lone paragraph: the little is furniture


def test_an_inline_byline_left_open_around_the_post_does_not_hide_it():
    # a byline <span> that the page never closes wraps the whole post; a short one stays out
    post = "<br><br>".join([STORY, MORE[0], MORE[1]])
    html = f"""<html><body><ul class="nav">{NAV}</ul><div class="post-body">
    <p><span class="byline-author">Posted by Jo Smith, harbour reporter</span></p>
    <b id="doc-marker"><span class="byline-author">Posted by Jo Smith<br><br>{post}</b>
    </div></body></html>"""
    text = extract(html).text
    assert STORY in text and MORE[0] in text and MORE[1] in text
    assert "harbour reporter" not in text


def test_the_authors_bio_under_the_article_is_not_part_of_it():
    bio = (
        "Jo Smith is a harbour reporter for the Coast Courier and has written about ferries, ports and the "
        "people who work in them for more than ten years."
    )
    html = f"""<html><body><ul class="nav">{NAV}</ul><article><h1>Old ferry terminal to close</h1>
    <p>{STORY}</p><p>{MORE[0]}</p><p>{MORE[1]}</p><div class="user-bio"><p>{bio}</p></div></article></body></html>"""
    text = extract(html).text
    assert STORY in text and MORE[1] in text
    assert "Coast Courier" not in text


def test_a_post_a_script_would_build_is_read_from_its_noscript_copy():
    # the body sits in a script template for browsers and in <noscript> for everyone else
    paras = "".join(f"<p>{t}</p>" for t in [STORY, *MORE])
    html = f"""<html><body><ul class="nav">{NAV}</ul><div class="post-body">
    <script type="text/template">{paras}</script><noscript>{paras}</noscript></div>
    <div class="labels"><a href="/l/a">android</a> <a href="/l/b">chrome</a></div></body></html>"""
    assert _paragraphs(extract(html).text) == [STORY, *MORE]


def test_a_noscript_warning_is_not_read():
    warning = (
        "<p>Please enable JavaScript.</p><p>This site needs scripts to show comments.</p>"
        "<p>Without them some parts of the page will not work.</p>"
    )
    html = f"<html><body><article><p>{STORY}</p><p>{MORE[0]}</p><noscript>{warning}</noscript></article></body></html>"
    assert _paragraphs(extract(html).text) == [STORY, MORE[0]]


def test_a_sub_heading_written_in_bold_is_kept_with_the_section_it_opens():
    html = f"""<html><body><ul class="nav">{NAV}</ul><article><p>{STORY}</p>
    <p><a href="/other">Read more: the harbour's history in pictures</a></p>
    <p><strong>Shops fear the move</strong></p><p>{MORE[1]}</p><p>{MORE[2]}</p>
    <p><b>Follow the harbour desk</b></p></article></body></html>"""
    assert _paragraphs(extract(html).text) == [STORY, "Shops fear the move", MORE[1], MORE[2]]


def test_the_part_of_a_post_offered_for_printing_is_part_of_the_post():
    recipe = [
        "Place the flour, salt and pepper in a large bowl, add the eggs and the cooked noodles, and stir until "
        "every strand is coated with the batter and the vegetables are spread evenly through it.",
        "Heat two tablespoons of oil in a frying pan over a medium heat, drop in spoonfuls of the mixture and "
        "cook for two minutes on each side until golden. Serve warm with a little chilli sauce.",
    ]
    html = f"""<html><body><ul class="nav">{NAV}</ul><div class="entry"><p>{STORY}</p><p>{MORE[0]}</p>
    <div class="print-this-button"><a href="#print">Print this recipe</a></div>
    <div class="print-this-content"><h3>Method</h3><p>{recipe[0]}</p><p>{recipe[1]}</p></div></div></body></html>"""
    assert _paragraphs(extract(html).text) == [STORY, MORE[0], "Method", *recipe]


def test_the_text_beside_a_picture_is_its_caption_not_the_article():
    # captions marked up as plain text in a box with the image, not as <figcaption>, between paragraphs
    def picture(i: int) -> str:
        return f"""<div class="visual"><img src="/p{i}.jpg" alt=""><div class="description">
        <strong>The old pier at low tide, view {i}</strong><span>Photo: J. Smith / Coast Courier</span></div></div>"""

    html = f"""<html><body><ul class="nav">{NAV}</ul><article><p>{STORY}</p>{picture(1)}<p>{MORE[0]}</p>
    {picture(2)}<p>{MORE[1]}</p>{picture(3)}</article></body></html>"""
    text = extract(html).text
    assert _paragraphs(text) == [STORY, MORE[0], MORE[1]]


def test_steps_each_with_a_picture_are_the_article():
    steps = [
        "Cut a hole in the foam block.",
        "Insert your plant into the hole.",
        "Cover the foam with moss.",
        "Place the glass cloche over it.",
    ]
    items = "".join(
        f'<div class="step"><div><h3>Step {i}</h3><p>{s}</p></div><figure><img src="/s{i}.jpg"></figure></div>'
        for i, s in enumerate(steps, 1)
    )
    html = f"""<html><body><ul class="nav">{NAV}</ul><article><p>{STORY}</p><p>{MORE[0]}</p>{items}
    <p>{MORE[1]}</p></article></body></html>"""
    text = extract(html).text
    assert all(s in text for s in steps)


def test_a_sentence_whose_names_are_links_is_kept_between_paragraphs():
    linked = (
        '<a href="/p/jo">Jo Smith of the Coast Courier</a> replaces <a href="/p/ann">Ann Lee of the Harbour '
        'Board</a>, who ran <a href="/o/terminal">the old ferry terminal</a> for years.'
    )
    html = f"""<html><body><ul class="nav">{NAV}</ul><article><p>{STORY}</p><p>{linked}</p>
    <p>{MORE[0]}</p><p><a href="/t/history">Read more: the long history of the harbour and its ferries.</a></p>
    <p>{MORE[1]}</p><p>Also: <a href="/t/shops">what the closure means for the shops along the old pier.</a></p>
    <p>{MORE[2]}</p></article></body></html>"""
    assert _paragraphs(extract(html).text) == [
        STORY,
        "Jo Smith of the Coast Courier replaces Ann Lee of the Harbour Board, who ran the old ferry terminal "
        "for years.",
        MORE[0],
        MORE[1],
        MORE[2],
    ]


def test_a_title_the_page_never_closes_does_not_swallow_the_page():
    html = f"""<html><head><title>Old ferry terminal to close - Coast Courier</titl -->
    <script src="/site.js"></script></head><body><ul class="nav">{NAV}</ul>
    <article><p>{STORY}</p><p>{MORE[0]}</p></article></body></html>"""
    page = extract(html)
    assert page.title == "Old ferry terminal to close"  # the site name after the dash is not the title
    assert _paragraphs(page.text) == [STORY, MORE[0]]
    # a page without a <body> tag at all: the runaway title is told by its length
    no_body = f"""<html><head><title>Old ferry terminal to close
    <script>document.write('<scr' + 'ipt src="/ads.js"></scr' + 'ipt>');</script>
    <div class="nav"><ul>{NAV}</ul></div>
    <div class="story"><p>{STORY}</p><p>{MORE[0]}</p><p>{MORE[1]}</p></div></html>"""
    assert _paragraphs(extract(no_body).text) == [STORY, MORE[0], MORE[1]]


# --- a page with no prose: which short lines are the post is a guess -----------------------------------

LINES = [
    "Dear all,",
    "Come to the book shop on Saturday!",
    "Where:",
    "The Reading Room",
    "12 Quay Street",
    "Port Ellen",
]
ABOUT_ME = (
    "Thank you for visiting my blog. I draw boats and harbours for a living, and on weekends I make small "
    "books by hand for friends and family."
)
FEATURED = (
    "A year of drawing one boat a day in the old harbour, from the first sketch in January to the last one "
    "on a cold morning in December."
)


def test_on_a_page_without_prose_the_post_of_short_lines_beats_the_sidebar_blurb():
    # every line of the post is short, so no block scores as prose; the sidebar's blurbs (a profile and a
    # featured post, each under a linked heading) are the longest text, and our pick alone was the profile
    post = "".join(f"<div>{line}</div>" for line in LINES)
    html = f"""<html><body><div class="main-wrapper"><div class="post hentry"><h3>Little gifts</h3>
    <div class="post-body entry-content">{post}</div></div></div>
    <div class="profile"><dl><dt><a href="/me">About the author of this blog</a></dt><dd>{ABOUT_ME}</dd></dl></div>
    <div class="featured"><h3><a href="/2012/year">A boat a day for a whole year</a></h3><div>{FEATURED}</div></div>
    </body></html>"""
    text = extract(html).text
    assert _paragraphs(text) == LINES
    assert "Thank you for visiting" not in text


def test_on_a_page_without_prose_ours_stays_unless_the_second_opinion_says_something_else(monkeypatch):
    ours = "\n\n".join(LINES)
    for other in ("", "\n\n".join(LINES[1:])):  # nothing, or a part of ours
        monkeypatch.setattr(extract_second, "second_opinion", lambda *a, other=other, **k: other)
        assert extract_second.better_of(ours, "<html></html>", doubts={"no prose"}) == ours
    monkeypatch.setattr(extract_second, "second_opinion", lambda *a, **k: "Where: Port Ellen")
    assert extract_second.better_of(ABOUT_ME, "<html></html>", doubts={"no prose"}) == "Where: Port Ellen"
    assert extract_second.better_of(ABOUT_ME, "<html></html>") == ABOUT_ME  # shorter, so not without the doubt


# --- the page's own statement of its text (JSON-LD articleBody) ------------------------------------------


def _ld_page(article_body: str, shown: str) -> str:
    data = {"@context": "https://schema.org", "@graph": [{"@type": "NewsArticle", "articleBody": article_body}]}
    return f"""<html><head><script type="application/ld+json">{json.dumps(data)}</script></head>
    <body><ul class="nav">{NAV}</ul><div class="story">{shown}</div></body></html>"""


def test_an_article_a_script_builds_is_read_from_its_json_ld_body():
    # the HTML holds only the picture's caption; the text is in the page's structured data
    caption = "<p>The old ferry terminal at dawn, seen from the east pier. Photo: Harbour Authority</p>"
    html = _ld_page(f"{STORY}\n{MORE[0]}\n\n{MORE[1]}", caption)
    assert _paragraphs(extract(html).text) == [STORY, MORE[0], MORE[1]]


def test_markup_inside_the_json_ld_body_is_read_as_text():
    html = _ld_page(f"<p>{STORY}</p><p>{MORE[0]} <a href='/x'>More</a> &amp; more.</p>", "<p>Loading…</p>")
    assert _paragraphs(extract(html).text) == [STORY, f"{MORE[0]} More & more."]


SUMMARY = (
    "In brief: commuters crossing by boat this year should expect changes. Services move across the bay "
    "during spring, fares remain unchanged until autumn, shops nearby worry about losing trade, residents "
    "may comment at an open evening, and plans for homes plus gardens replacing quayside buildings are "
    "already drawn up by architects hired last winter."
)


def test_a_json_ld_body_that_is_shorter_than_the_text_read_does_not_replace_it():
    # some sites declare a summary, not the article; the page itself has the whole article
    shown = "".join(f"<p>{p}</p>" for p in [STORY, *MORE])
    assert _paragraphs(extract(_ld_page(SUMMARY, shown)).text) == [STORY, *MORE]


def test_text_that_holds_most_of_the_json_ld_body_is_kept_as_read():
    assert extract_second.declared_if_missed(f"{STORY}\n\n{MORE[0]}", f"{STORY} {MORE[0]} {MORE[1]}") == (
        f"{STORY}\n\n{MORE[0]}"
    )
    assert extract_second.declared_if_missed("Loading…", "Too short to count as a body.") == "Loading…"
