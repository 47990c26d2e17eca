"""Main-text extraction benchmark on real news/blog pages.

Data: by default ../shared/eval/article-extraction-sample (gzip HTML pages + ground-truth.json, from the
Zyte article-extraction-benchmark). ``--dir DIR`` reads another set in one of two layouts:

* ``--format json`` (the default's): DIR/ground-truth.json ({id: {"articleBody", "url"}}) and
  DIR/html/<id>.html.gz;
* ``--format snippets``: DIR/evaldata.json ({url: {"file", "with": [...], "without": [...]}}) with the HTML
  in DIR/cache, DIR/eval or DIR: trafilatura's own evaluation set (its repository's tests/ folder, ~990
  pages in many languages). It scores snippets, not words: a "with" snippet found in the text (whitespace
  normalised) is a true positive, a "without" snippet found is a false positive; precision, recall and F1
  are pooled over the pages. Trafilatura was tuned on this set, so it favours trafilatura;
* ``--format pairs``: DIR/input/<id>.html and the gold text in DIR/GoldStandard/<id>.txt (or .html).
  Gold may be plain text (cut at a ``!@#$%^&*()  COMMENTS`` marker: comments are not main content), HTML
  (its text), or a page annotated with ``x-nc-sel1..5`` classes (the text of classes 1-3: headline,
  main text, supplemental). The public collection of CleanEval, Dragnet, L3S-GN1 (page-signal) and
  readability test pages in that layout is one such set; keep it outside the repository;
* ``--format newspaper``: DIR/html/<id>.html and DIR/text/<id>.txt, the layout of newspaper3k's full-text
  test pages (its repository's tests/data: 157 news and magazine articles from December 2014). The gold
  there is newspaper's own output, checked by hand; where that check failed the file holds a note in
  capitals ("MISSED LAST PARAGRAPH") or nothing, so files that are empty, in capitals or under 300
  characters are skipped (116 pages remain). Its gold keeps photo captions and some "related" lines.

Measure: bag-of-words token precision / recall / F1 of the extracted text against the gold text
(tokens = ``\\w+`` lower-cased, counted as multisets), averaged over pages, plus time per page.
Compares utils.web.extract with trafilatura (defaults), readability-lxml (when installed) and a naive
BeautifulSoup get_text(). Pages are sorted by id; every run prints F1 on the even and the odd half.

``--variant`` runs our extractor with one of its settings changed, for a sensitivity audit (does a rule
or a constant fit the pages it was developed on, rather than pages in general?): ``MODULE.NAME=VALUE``
sets a numeric constant of ``utils/web/MODULE.py`` (``extract_score._BAD_LINK=0.6``), ``drop:WORD`` drops a
boilerplate class word or prefix (``drop:caption``). Repeatable; only our extractor's numbers change.

Usage (from the project root):
    .venv/bin/python bench/extraction.py [--dir DIR --format json|pairs|snippets|newspaper] [--pages N]
        [--split all|even|odd] [--worst K] [--no-baselines] [--variant SPEC ...]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from utils.checkout import as_package  # noqa: E402 - the checkout as the `sleuth` package

as_package()

SAMPLE = ROOT.parent / "shared" / "eval" / "article-extraction-sample"
_WORD = re.compile(r"\w+")


def tokens(text: str) -> Counter:
    return Counter(_WORD.findall((text or "").lower()))


def prf(predicted: str, gold: str) -> tuple[float, float, float]:
    """Bag-of-words precision, recall, F1 (multiset overlap)."""
    p, g = tokens(predicted), tokens(gold)
    n_p, n_g = sum(p.values()), sum(g.values())
    if not n_p or not n_g:
        return (1.0, 1.0, 1.0) if n_p == n_g else (0.0, 0.0, 0.0)
    overlap = sum((p & g).values())
    precision, recall = overlap / n_p, overlap / n_g
    f1 = 2 * precision * recall / (precision + recall) if overlap else 0.0
    return precision, recall, f1


def load_pages(sample: Path = SAMPLE, limit: int | None = None, split: str = "all", fmt: str = "json") -> list[dict]:
    """Pages sorted by id; ``split`` even/odd keeps every other page (develop on one half, check on the
    other, then swap). Every run prints F1 on both halves for every extractor."""
    if fmt == "pairs":
        return _load_pairs(sample, limit, split)
    if fmt == "snippets":
        return _load_snippets(sample, limit, split)
    if fmt == "newspaper":
        return _load_newspaper(sample, limit, split)
    truth = json.loads((sample / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for index, page_id in enumerate(sorted(truth)):
        if split == "even" and index % 2 or split == "odd" and not index % 2:
            continue
        path = sample / "html" / f"{page_id}.html.gz"
        if not path.is_file():
            continue
        pages.append(
            {
                "id": page_id,
                "html": gzip.decompress(path.read_bytes()),
                "url": truth[page_id].get("url", ""),
                "gold": truth[page_id]["articleBody"],
                "index": index,
            }
        )
        if limit and len(pages) >= limit:
            break
    return pages


def _load_pairs(root: Path, limit: int | None, split: str) -> list[dict]:
    gold_dir = root / "GoldStandard"
    ids = sorted(p.stem for p in (root / "input").glob("*.htm*"))
    pages = []
    for index, page_id in enumerate(ids):
        if split == "even" and index % 2 or split == "odd" and not index % 2:
            continue
        gold_path = next((p for p in (gold_dir / f"{page_id}.txt", gold_dir / f"{page_id}.html") if p.is_file()), None)
        html_path = next((root / "input").glob(f"{page_id}.htm*"))
        if gold_path is None:
            continue
        gold = gold_text(_decode(gold_path.read_bytes()))
        if not gold.strip():
            continue
        pages.append({"id": page_id, "html": html_path.read_bytes(), "url": "", "gold": gold, "index": index})
        if limit and len(pages) >= limit:
            break
    return pages


_NOTE_MAX = 300  # newspaper's gold files this short (or all in capitals) are notes, not article text


def _load_newspaper(root: Path, limit: int | None, split: str) -> list[dict]:
    pages = []
    for html_path in sorted((root / "html").glob("*.html")):
        gold_path = root / "text" / f"{html_path.stem}.txt"
        gold = gold_path.read_text(encoding="utf-8").strip() if gold_path.is_file() else ""
        if len(gold) < _NOTE_MAX or gold.upper() == gold:
            continue
        pages.append({"id": html_path.stem, "html": html_path.read_bytes(), "url": "", "gold": gold})
    for index, page in enumerate(pages):
        page["index"] = index
    pages = [p for p in pages if not (split == "even" and p["index"] % 2 or split == "odd" and not p["index"] % 2)]
    return pages[:limit] if limit else pages


def _load_snippets(root: Path, limit: int | None, split: str) -> list[dict]:
    annotations = json.loads((root / "evaldata.json").read_text(encoding="utf-8"))
    pages = []
    for index, url in enumerate(sorted(annotations)):
        if split == "even" and index % 2 or split == "odd" and not index % 2:
            continue
        item = annotations[url]
        found = (d / item["file"] for d in (root / "cache", root / "eval", root) if (d / item["file"]).is_file())
        path = next(found, None)
        if path is None:
            continue
        pages.append(
            {
                "id": item["file"],
                "html": path.read_bytes(),
                "url": url,
                "with": item["with"],
                "without": item["without"],
                "index": index,
            }
        )
        if limit and len(pages) >= limit:
            break
    return pages


def snippet_counts(text: str, page: dict) -> tuple[int, int, int]:
    """True positives, false positives and false negatives of a text against a page's snippets."""
    flat = " ".join(text.split())
    tp = sum(1 for w in page["with"] if " ".join(w.split()) in flat)
    fp = sum(1 for w in page["without"] if " ".join(w.split()) in flat)
    return tp, fp, len(page["with"]) - tp


def _pooled(counts: list[tuple[int, int, int]]) -> tuple[float, float, float]:
    tp, fp, fn = (sum(c[i] for c in counts) for i in range(3))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return precision, recall, (2 * tp / (2 * tp + fp + fn) if tp else 0.0)


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


_COMMENTS_MARK = "!@#$%^&*()  COMMENTS"
_SEL_RE = re.compile(r"\bx-nc-sel([0-5])\b")


def gold_text(raw: str) -> str:
    """Gold text from a gold file: plain text, HTML, or HTML annotated with x-nc-sel classes."""
    raw = raw.split(_COMMENTS_MARK, 1)[0]
    head = raw.lstrip()[:200].lower()
    if not head.startswith("<") or not re.match(r"<(!doctype|html|head|body|div|p|section|article)\b", head):
        return raw
    from lxml import html as lxml_html

    try:
        tree = lxml_html.fromstring(raw)
    except (ValueError, SyntaxError):
        return raw
    for bad in tree.xpath("//script|//style|//head"):
        bad.drop_tree()
    if not _SEL_RE.search(raw):
        return tree.text_content()
    out: list[str] = []

    def walk(el, selected: bool) -> None:
        m = _SEL_RE.search(el.get("class") or "") if isinstance(el.tag, str) else None
        if m:
            selected = m.group(1) in "123"
        if selected and el.text:
            out.append(el.text)
        for child in el:
            walk(child, selected)
            if selected and child.tail:
                out.append(child.tail)

    walk(tree, False)
    return " ".join(out)


def evaluate(name: str, fn: Callable[[bytes, str], str], pages: list[dict], worst: int = 0) -> dict:
    try:
        fn(pages[0]["html"], pages[0]["url"])  # warm-up: lazy imports, parser creation
    except Exception:  # noqa: BLE001
        pass
    rows, times = [], []
    for page in pages:
        start = time.perf_counter()
        try:
            text = fn(page["html"], page["url"])
        except Exception:  # noqa: BLE001 - a baseline that gives up on a page scores 0 there
            text = ""
        times.append(time.perf_counter() - start)
        if "with" in page:  # snippets: pooled counts, and a page's own F1 only to rank the worst
            counts = snippet_counts(text, page)
            rows.append((page, *_pooled([counts]), counts))
        else:
            rows.append((page, *prf(text, page["gold"])))
    times.sort()
    if "with" in pages[0]:
        precision, recall, f1 = _pooled([r[4] for r in rows])
        halves = ([r[4] for r in rows if r[0]["index"] % 2 == h] for h in (0, 1))
        f1_even, f1_odd = (_pooled(half)[2] if half else float("nan") for half in halves)
    else:
        precision, recall, f1 = (statistics.mean(r[i] for r in rows) for i in (1, 2, 3))
        f1_even = _mean([r[3] for r in rows if r[0]["index"] % 2 == 0])
        f1_odd = _mean([r[3] for r in rows if r[0]["index"] % 2 == 1])
    result = {
        "name": name,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "f1_even": f1_even,
        "f1_odd": f1_odd,
        "ms_mean": 1000 * statistics.mean(times),
        "ms_median": 1000 * statistics.median(times),
        "ms_p95": 1000 * times[max(0, int(round(0.95 * len(times))) - 1)],
    }
    print(
        f"{name:<24} P={result['precision']:.4f} R={result['recall']:.4f} F1={result['f1']:.4f} "
        f"(even {result['f1_even']:.4f}, odd {result['f1_odd']:.4f})  "
        f"{result['ms_median']:5.1f} ms/page median, {result['ms_mean']:5.1f} mean, {result['ms_p95']:6.1f} p95"
    )
    for page, p, r, f, *_ in sorted(rows, key=lambda row: row[3])[:worst]:
        print(f"    {page['id'][:12]} P={p:.3f} R={r:.3f} F1={f:.3f} {page['url'][:80]}")
    return result


def _mean(values: list[float]) -> float:
    return statistics.mean(values) if values else float("nan")


def apply_variant(spec: str) -> tuple[str, Callable[[], None]]:
    """Change one setting of our extractor (see --variant): what was changed, and how to undo it.
    Raises ValueError naming what is wrong with the spec."""
    import importlib

    from sleuth.utils.web import extract_dom

    if spec.startswith("drop:"):
        word = spec[5:]
        words, prefixes = extract_dom._BOILER_WORDS, extract_dom._BOILER_PREFIXES
        if word not in words and word not in prefixes:
            raise ValueError(f"{word!r} is not one of the boilerplate class words or prefixes")
        extract_dom._BOILER_WORDS = frozenset(w for w in words if w != word)
        extract_dom._BOILER_PREFIXES = tuple(p for p in prefixes if p != word)
        extract_dom._class_cache.clear()  # class names already judged with the word

        def undo() -> None:
            extract_dom._BOILER_WORDS, extract_dom._BOILER_PREFIXES = words, prefixes
            extract_dom._class_cache.clear()

        return f"without the class word {word!r}", undo
    target, sep, value = spec.partition("=")
    module, _, name = target.rpartition(".")
    if not sep or not module or not name:
        raise ValueError(f"{spec!r} is not MODULE.NAME=VALUE or drop:WORD")
    try:
        mod = importlib.import_module(f"sleuth.utils.web.{module}")
    except ImportError:
        raise ValueError(f"no module utils/web/{module}.py") from None
    old = getattr(mod, name, None)
    if type(old) not in (int, float):
        raise ValueError(f"{module}.{name} is not a numeric constant")
    try:
        new = type(old)(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a {type(old).__name__}, as {module}.{name} is") from None
    setattr(mod, name, new)
    return f"{module}.{name} = {new} (was {old})", lambda: setattr(mod, name, old)


def ours(html: bytes, url: str) -> str:
    from sleuth.utils.web.extract import extract

    return extract(html, url).text


def trafilatura_defaults(html: bytes, url: str) -> str:
    import trafilatura

    return trafilatura.extract(html, url=url) or ""


def readability_lxml(html: bytes, url: str) -> str:
    from lxml import html as lxml_html
    from readability import Document

    summary = Document(html, url=url or None).summary(html_partial=True)
    return lxml_html.fromstring(summary).text_content() if summary.strip() else ""


def naive_get_text(html: bytes, url: str) -> str:
    import warnings

    from bs4 import BeautifulSoup

    warnings.filterwarnings("ignore", category=UserWarning)

    return BeautifulSoup(html, "lxml").get_text(" ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=SAMPLE, help="evaluation set (default: the shared sample)")
    formats = ("json", "pairs", "snippets", "newspaper")
    parser.add_argument("--format", choices=formats, default="json", help="layout of --dir")
    parser.add_argument("--pages", type=int, default=None, help="only the first N pages")
    parser.add_argument("--split", choices=("all", "even", "odd"), default="all", help="every other page")
    parser.add_argument("--worst", type=int, default=0, help="list the K worst pages of our extractor")
    parser.add_argument("--no-baselines", action="store_true", help="skip the other extractors")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="SPEC",
        help="our extractor with MODULE.NAME=VALUE set, or without the class word drop:WORD (repeatable)",
    )
    args = parser.parse_args(argv)
    undo: list[Callable[[], None]] = []
    try:
        for spec in args.variant:
            try:
                said, restore = apply_variant(spec)
            except ValueError as exc:
                print(f"error: --variant {exc}", file=sys.stderr)
                return 2
            undo.append(restore)
            print("variant: " + said)
        return _run(args)
    finally:
        for restore in reversed(undo):
            restore()


def _run(args: argparse.Namespace) -> int:
    markers = {"json": "ground-truth.json", "pairs": "input", "snippets": "evaldata.json", "newspaper": "text"}
    marker = args.dir / markers[args.format]
    if not marker.exists():
        print(
            f"error: evaluation data not found at {marker}\n"
            "(the default is ../shared/eval/article-extraction-sample next to the project; "
            "see ../shared/eval/README.md)",
            file=sys.stderr,
        )
        return 2
    pages = load_pages(args.dir, args.pages, args.split, args.format)
    if not pages:
        print(f"error: no pages with gold text or snippets found in {args.dir}", file=sys.stderr)
        return 2
    print(f"{len(pages)} pages from {args.dir} (split: {args.split})")
    evaluate("sleuth utils.extract", ours, pages, worst=args.worst)
    if not args.no_baselines:
        import logging

        logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
        logging.getLogger("readability").setLevel(logging.CRITICAL)
        evaluate("trafilatura 2.3.1 default", trafilatura_defaults, pages)
        try:
            import readability  # noqa: F401
        except ImportError:
            print("readability-lxml not installed (requirements-dev.txt): skipped")
        else:
            evaluate("readability-lxml 0.9", readability_lxml, pages)
        evaluate("bs4 get_text()", naive_get_text, pages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
