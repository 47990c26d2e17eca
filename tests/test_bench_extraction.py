"""bench/extraction.py on sets hand-made here in two layouts: snippet-annotated (trafilatura's evaluation
layout), where the numbers it prints are the pooled snippet counts of the pages, and newspaper3k's full-text
test pages, whose notes in place of gold are skipped."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STORY = (
    "The harbour authority confirmed on Monday that the old ferry terminal will close at the end of the "
    "summer, after engineers found that the pier no longer meets the safety standards set three years ago."
)
MORE = (
    "Passengers will board at the new terminal on the east side, which opens in June with a larger waiting "
    "hall, covered walkways and space for twice as many cars on every crossing."
)
NAV = "".join(f'<li><a href="/c{i}">Category number {i}</a></li>' for i in range(12))
PAGE = f"""<html><body><ul class="nav">{NAV}</ul><article><h1>Old ferry terminal to close</h1>
<p>{STORY}</p><p>{MORE}</p></article><div class="newsletter"><p>Sign up for our newsletter</p></div></body></html>"""


def _bench():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import extraction  # bench/extraction.py
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return extraction


def test_snippet_sets_are_scored_by_pooled_snippet_counts(tmp_path, capsys):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "a.html").write_text(PAGE, encoding="utf-8")
    (tmp_path / "b.html").write_text(PAGE, encoding="utf-8")
    annotations = {
        # two article snippets found, the newsletter box left out: 2 true positives
        "https://a.example/ferry": {
            "file": "a.html",
            "with": ["terminal will close at the end of the   summer", "covered walkways"],
            "without": ["Sign up for our newsletter"],
        },
        # one found, one that is only in the navigation: 1 true positive, 1 false negative
        "https://b.example/ferry": {
            "file": "b.html",
            "with": ["no longer meets the safety standards", "Category number 3"],
            "without": ["Category number 5"],
        },
    }
    (tmp_path / "evaldata.json").write_text(json.dumps(annotations), encoding="utf-8")
    assert _bench().main(["--dir", str(tmp_path), "--format", "snippets", "--no-baselines"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 pages from")
    # tp 3, fp 0, fn 1: precision 1, recall 3/4, F1 6/7; the even half is page a, the odd half page b
    assert "P=1.0000 R=0.7500 F1=0.8571 (even 1.0000, odd 0.6667)" in out


def test_a_missing_snippet_set_is_a_clear_error(tmp_path, capsys):
    assert _bench().main(["--dir", str(tmp_path), "--format", "snippets"]) == 2
    assert "evaldata.json" in capsys.readouterr().err


def test_newspaper_sets_skip_the_notes_left_in_place_of_gold_text(tmp_path, capsys):
    (tmp_path / "html").mkdir()
    (tmp_path / "text").mkdir()
    gold = {
        "a.com1": f"{STORY}\n\n{MORE}",  # the article: scored
        "b.com1": "MISSED LAST PARAGRAPH",  # a note about a failed check: skipped
        "c.com1": "",  # nothing: skipped
        "d.com1": f"{STORY}\n\n{MORE}\n\nSign up for our newsletter",  # scored: its gold keeps the box
    }
    for name, text in gold.items():
        (tmp_path / "html" / f"{name}.html").write_text(PAGE, encoding="utf-8")
        (tmp_path / "text" / f"{name}.txt").write_text(text, encoding="utf-8")
    assert _bench().main(["--dir", str(tmp_path), "--format", "newspaper", "--no-baselines"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 pages from")
    # the even half is page a (F1 1), the odd half page d: precision 1, recall 67/72 (its 5 words left out)
    assert "(even 1.0000, odd 0.9640)" in out


def test_a_variant_runs_our_extractor_with_one_setting_changed_for_that_run_only(tmp_path, capsys):
    """--variant drop:WORD reads a box named with that class word as content; the next run, and every
    later extraction in the process, has the word again."""
    third = (
        "Tickets bought for the old terminal stay valid for a year and can be used at the new one without any "
        "change or extra fee, the authority said."
    )
    body = f"<p>{STORY}</p><p>{MORE}</p>" * 2
    page = f"<html><body><article>{body}<div class='promo-box'><p>{third}</p></div></article></body></html>"
    (tmp_path / "html").mkdir()
    (tmp_path / "text").mkdir()
    (tmp_path / "html" / "a.com1.html").write_text(page, encoding="utf-8")
    gold = f"{body}\n\n{third}".replace("<p>", "").replace("</p>", "\n\n")
    (tmp_path / "text" / "a.com1.txt").write_text(gold, encoding="utf-8")
    run = ["--dir", str(tmp_path), "--format", "newspaper", "--no-baselines"]
    bench = _bench()
    assert bench.main([*run, "--variant", "drop:promo"]) == 0
    out = capsys.readouterr().out
    assert "variant: without the class word 'promo'" in out and "F1=1.0000" in out
    assert bench.main(run) == 0
    assert "F1=1.0000" not in capsys.readouterr().out  # the box is furniture again

    assert bench.main([*run, "--variant", "extract_score._BAD_LINK=0.6"]) == 0
    assert "variant: extract_score._BAD_LINK = 0.6 (was 0.5)" in capsys.readouterr().out
    from sleuth.utils.web import extract_score

    assert extract_score._BAD_LINK == 0.5


def test_a_bad_variant_is_one_clear_line_and_exit_2(capsys):
    bench = _bench()
    for spec, said in [
        ("drop:nosuchword", "'nosuchword' is not one of the boilerplate class words or prefixes"),
        ("extract_score._BAD_LINK=lots", "'lots' is not a float, as extract_score._BAD_LINK is"),
        ("extract_score.main_text=1", "extract_score.main_text is not a numeric constant"),
        ("nosuchmodule.X=1", "no module utils/web/nosuchmodule.py"),
        ("_BAD_LINK", "'_BAD_LINK' is not MODULE.NAME=VALUE or drop:WORD"),
    ]:
        assert bench.main(["--variant", spec]) == 2
        err = capsys.readouterr().err
        assert err == f"error: --variant {said}\n"
