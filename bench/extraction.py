"""Main-text extraction benchmark on real news/blog pages.

Data: ../shared/eval/article-extraction-sample (gzip HTML pages + ground-truth.json, from the Zyte
article-extraction-benchmark). Measure: bag-of-words token precision / recall / F1 of the extracted text
against ``articleBody`` (tokens = ``\\w+`` lower-cased, counted as multisets), averaged over pages, plus
time per page. Compares utils.web.extract with trafilatura (defaults) and a naive BeautifulSoup get_text().

Usage (from the project root):
    .venv/bin/python bench/extraction.py [--pages N] [--split all|even|odd] [--worst K] [--no-baselines]
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


def load_pages(sample: Path = SAMPLE, limit: int | None = None, split: str = "all") -> list[dict]:
    """Pages sorted by id; ``split`` even/odd keeps every other page (develop on one half, check on the
    other, then swap). Every run prints F1 on both halves for every extractor."""
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


def evaluate(name: str, fn: Callable[[bytes, str], str], pages: list[dict], worst: int = 0) -> dict:
    fn(pages[0]["html"], pages[0]["url"])  # warm-up: lazy imports, parser creation
    rows, times = [], []
    for page in pages:
        start = time.perf_counter()
        text = fn(page["html"], page["url"])
        times.append(time.perf_counter() - start)
        rows.append((page, *prf(text, page["gold"])))
    times.sort()
    result = {
        "name": name,
        "precision": statistics.mean(r[1] for r in rows),
        "recall": statistics.mean(r[2] for r in rows),
        "f1": statistics.mean(r[3] for r in rows),
        "f1_even": _mean([r[3] for r in rows if r[0]["index"] % 2 == 0]),
        "f1_odd": _mean([r[3] for r in rows if r[0]["index"] % 2 == 1]),
        "ms_mean": 1000 * statistics.mean(times),
        "ms_median": 1000 * statistics.median(times),
        "ms_p95": 1000 * times[max(0, int(round(0.95 * len(times))) - 1)],
    }
    print(
        f"{name:<24} P={result['precision']:.4f} R={result['recall']:.4f} F1={result['f1']:.4f} "
        f"(even {result['f1_even']:.4f}, odd {result['f1_odd']:.4f})  "
        f"{result['ms_median']:5.1f} ms/page median, {result['ms_mean']:5.1f} mean, {result['ms_p95']:6.1f} p95"
    )
    for page, p, r, f in sorted(rows, key=lambda row: row[3])[:worst]:
        print(f"    {page['id'][:12]} P={p:.3f} R={r:.3f} F1={f:.3f} {page['url'][:80]}")
    return result


def _mean(values: list[float]) -> float:
    return statistics.mean(values) if values else float("nan")


def ours(html: bytes, url: str) -> str:
    from utils.web.extract import extract

    return extract(html, url).text


def trafilatura_defaults(html: bytes, url: str) -> str:
    import trafilatura

    return trafilatura.extract(html, url=url) or ""


def naive_get_text(html: bytes, url: str) -> str:
    from bs4 import BeautifulSoup

    return BeautifulSoup(html, "lxml").get_text(" ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=None, help="only the first N pages")
    parser.add_argument("--split", choices=("all", "even", "odd"), default="all", help="every other page")
    parser.add_argument("--worst", type=int, default=0, help="list the K worst pages of our extractor")
    parser.add_argument("--no-baselines", action="store_true", help="skip trafilatura and get_text()")
    args = parser.parse_args(argv)
    if not (SAMPLE / "ground-truth.json").is_file():
        print(
            f"error: evaluation data not found at {SAMPLE}\n"
            "(expected ../shared/eval/article-extraction-sample next to the project; see ../shared/eval/README.md)",
            file=sys.stderr,
        )
        return 2
    pages = load_pages(SAMPLE, args.pages, args.split)
    if not pages:
        print(f"error: no pages found in {SAMPLE / 'html'}", file=sys.stderr)
        return 2
    print(f"{len(pages)} pages from {SAMPLE} (split: {args.split})")
    evaluate("sleuth utils.extract", ours, pages, worst=args.worst)
    if not args.no_baselines:
        import logging

        logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
        evaluate("trafilatura 2.3.1 default", trafilatura_defaults, pages)
        evaluate("bs4 get_text()", naive_get_text, pages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
