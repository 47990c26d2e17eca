"""Knowledge-base benchmark: ingest speed, query latency, retrieval quality on HotpotQA dev-100.

    .venv/bin/python bench/kb.py [--chunks 10000] [--queries 200] [--repeat 1] [--skip-speed] [--skip-quality]
    .venv/bin/python bench/kb.py --scale 100000 [--noise DIR] [--compare-with TREE] [--chroma-url URL]  (kb_scale.py)

Prints:
  * ingest time for N chunks (default 10,000, hash embedding) and where it goes: analysis +
    hash embedding, Chroma upserts, SQLite (FTS5) -- measured separately on the same chunks;
  * query latency p50/p95 in ms for the default search mode (and for each mode), each query run once
    (so the default mode also pays for reading each new term's postings), and the first query of
    a new KnowledgeBase instance on the same KB;
  * the HNSW index's neighbour recall@10 against exact (brute-force) vector search;
  * with --repeat N, the speed part N times and a median [min-max] summary (the machine is shared);
  * for ../shared/eval/hotpotqa-dev100: recall@10 of the supporting pages and both@10 (the
    fraction of questions with both supporting pages in the top 10) for bm25, vector (hash),
    fused and the default mode.

Counting is at page level: each question asks for 40 chunks, hits are deduplicated by source
(first occurrence keeps its rank) and the first 10 distinct pages are scored. (Each wiki page is
one paragraph, so almost every page is a single chunk; a page's later chunks cannot push other
pages out of the top 10.)
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from utils.checkout import as_package  # noqa: E402 - the checkout as the `sleuth` package

as_package()

EVAL = ROOT.parent / "shared" / "eval" / "hotpotqa-dev100"


def page_key(source: str) -> str:
    """'/wiki/Name.html' for a hit source (a file path) -- the form of supporting_urls."""
    return "/wiki/" + Path(source).name


def load_questions(eval_dir: Path = EVAL) -> list[dict]:
    with open(eval_dir / "questions.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def evaluate(kb, questions: list[dict], mode: str, depth: int = 40, top: int = 10) -> dict:
    """recall@top of supporting pages and both@top, counted on distinct pages."""
    found = both = total = 0
    for q in questions:
        pages: list[str] = []
        for hit in kb.search(q["question"], k=depth, mode=mode):
            key = page_key(hit.source)
            if key not in pages:
                pages.append(key)
            if len(pages) == top:
                break
        gold = set(q["supporting_urls"])
        got = len(gold & set(pages))
        found += got
        total += len(gold)
        both += got == len(gold)
    return {"recall@10": found / total, "both@10": both / len(questions)}


def build_eval_kb(folder: Path, eval_dir: Path = EVAL):
    from sleuth.utils.kb.store import KnowledgeBase

    kb = KnowledgeBase(folder, embedding="hash")  # the vector and fused modes are measured too
    report = kb.ingest_paths([eval_dir / "wiki"])
    return kb, report


def _sentences(eval_dir: Path = EVAL) -> list[str]:
    from sleuth.utils.text import split_sentences

    sents: list[str] = []
    pages = eval_dir / "pages.jsonl"
    if pages.is_file():
        with open(pages, encoding="utf-8") as f:
            for line in f:
                sents += split_sentences(json.loads(line)["text"])
    if not sents:
        rng = random.Random(5)
        vocab = [f"word{i}" for i in range(20000)]
        sents = [" ".join(rng.choice(vocab) for _ in range(20)).capitalize() + "." for _ in range(5000)]
    return sents


def _synthetic_chunks(n: int, eval_dir: Path = EVAL) -> list[str]:
    """n texts of 200-220 words (one chunk each) mixing the eval pages' sentences (random words without them)."""
    rng = random.Random(7)
    sents = _sentences(eval_dir)
    out = []
    for _ in range(n):
        words = 0
        parts = []
        while words < 200:
            s = rng.choice(sents)
            if words + len(s.split()) > 220:
                continue
            parts.append(s)
            words += len(s.split())
        out.append(" ".join(parts))
    return out


def _synthetic_documents(n_chunks: int, eval_dir: Path = EVAL) -> list[str]:
    """Documents of 400-4000 words (paragraphs of eval sentences) adding up to about n_chunks chunks."""
    rng = random.Random(11)
    sents = _sentences(eval_dir)
    docs = []
    est = 0.0
    while est < n_chunks:
        target = rng.randint(400, 4000)
        paras, words = [], 0
        while words < target:
            para = " ".join(rng.choice(sents) for _ in range(rng.randint(2, 6)))
            paras.append(para)
            words += len(para.split())
        docs.append("\n\n".join(paras))
        est += max(1.0, words / 155)  # measured: ~155 new words per chunk (220 minus overlap and tails)
    return docs


def _neighbour_recall(kb, queries: list[str], k: int = 10) -> float:
    """Share of the exact k nearest vectors (brute force over every stored vector) that Chroma's HNSW returns."""
    import numpy as np

    col = kb._open()
    got = col.get(include=["embeddings"])
    ids, mat = got["ids"], np.asarray(got["embeddings"], dtype=np.float32)
    found = 0
    for q in queries:
        vec = np.asarray(kb._embed_query(q), dtype=np.float32).reshape(-1)
        exact = {ids[i] for i in np.argsort(-(mat @ vec))[:k]}  # cosine: the vectors are unit length
        res = col.query(query_embeddings=[vec], n_results=k, include=[])
        found += len(exact & set(res["ids"][0]))
    return found / (k * len(queries))


def bench_speed(n_chunks: int, n_queries: int) -> dict:
    """One ingest + query run; prints it and returns the headline numbers."""
    import numpy as np

    from sleuth.utils.kb.store import SEARCH_MODES, KnowledgeBase
    from sleuth.utils.kb.write import Doc, sha256_hex

    texts = _synthetic_documents(n_chunks)
    print(f"ingest: {len(texts)} documents of 400-4000 words (~{n_chunks} chunks), hash embedding, embedded Chroma")
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase(Path(tmp) / "kb", embedding="hash")  # vectors too: every mode is measured
        kb.count()  # import chromadb and create the collection outside the timed part
        kb.stats()
        # The write path of ingest_paths (file reading aside): batches of about 5,000 chunks.
        docs = [Doc(f"bench://doc/{i}", f"Doc {i}", t, "file", sha256_hex(t)) for i, t in enumerate(texts)]
        t0 = time.perf_counter()
        n = 0
        batch: list = []
        words = 0
        for d in docs:
            batch.append(d)
            words += len(d.text.split())
            if words >= 5000 * 180:
                n += kb._write(batch)
                batch, words = [], 0
        n += kb._write(batch)
        total = time.perf_counter() - t0
        parts = ", ".join(f"{k} {v:.2f} s" for k, v in kb.timings.items())
        out["ingest s/10k"] = total / n * 1e4
        print(f"  {n} chunks in {total:.2f} s = {total / n * 1e4:.2f} s per 10k chunks ({parts})")

        rng = random.Random(3)
        query_sets = [
            ("8 random words of a chunk", [" ".join(rng.sample(t.split(), 8)) for t in _synthetic_chunks(n_queries)])
        ]
        if EVAL.is_dir():
            query_sets.append(("HotpotQA questions", [q["question"] for q in load_questions()]))
        for q in query_sets[0][1][:10]:
            kb.search(q, k=5, mode="fused")  # warm up both sides
        for label, queries in query_sets:
            for mode in (kb.search_mode,) + tuple(m for m in SEARCH_MODES if m != kb.search_mode):
                lat = []
                for q in queries:
                    t = time.perf_counter()
                    kb.search(q, k=5, mode=mode)
                    lat.append((time.perf_counter() - t) * 1000)
                tag = " (default)" if mode == kb.search_mode else ""
                p50, p95 = statistics.median(lat), float(np.percentile(lat, 95))
                out[f"{mode} p50 ms, {label}"] = p50
                out[f"{mode} p95 ms, {label}"] = p95
                print(
                    f"  query latency {mode}{tag}: p50 {p50:.1f} ms, p95 {p95:.1f} ms "
                    f"({len(lat)} {label}, k=5, {n} chunks)"
                )
        recall = _neighbour_recall(kb, query_sets[-1][1])
        out["vector neighbour recall@10"] = recall
        print(f"  vector neighbour recall@10 against exact search: {recall:.3f} ({query_sets[-1][0]})")
        kb.close()
        # A new instance on the same KB (as a fresh `kb search` process, numpy already imported): its first
        # default-mode query also reads the row lengths and every term's postings.
        fresh = KnowledgeBase(Path(tmp) / "kb")
        t = time.perf_counter()
        fresh.search(query_sets[-1][1][0], k=5)
        first = (time.perf_counter() - t) * 1000
        out["first query ms"] = first
        print(f"  first {fresh.search_mode} query of a new KnowledgeBase instance: {first:.1f} ms")
        fresh.close()
    return out


def bench_quality() -> None:
    from sleuth.utils.kb.store import DEFAULT_SEARCH_MODE, SEARCH_MODES

    if not EVAL.is_dir():
        print(f"quality: {EVAL} is missing; skipped")
        return
    questions = load_questions()
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        kb, report = build_eval_kb(Path(tmp) / "kb")
        print(
            f"hotpotqa-dev100: ingested {report.files_added} pages -> {report.chunks_added} chunks in "
            f"{time.perf_counter() - t:.1f} s; {len(questions)} questions, page-level top 10"
        )
        for mode in SEARCH_MODES:
            t = time.perf_counter()
            r = evaluate(kb, questions, mode)
            tag = "  <- default" if mode == DEFAULT_SEARCH_MODE else ""
            print(
                f"  {mode:7s} recall@10 {r['recall@10']:.3f}  both@10 {r['both@10']:.2f}  "
                f"({(time.perf_counter() - t) / len(questions) * 1000:.1f} ms/question){tag}"
            )
        kb.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=10000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=1, help="speed runs; with 2+ a median [min-max] summary follows")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--skip-quality", action="store_true")
    ap.add_argument("--scale", type=int, default=0, help="chunks of noise: the scale mode (bench/kb_scale.py)")
    ap.add_argument("--noise", default="", help="--scale: a folder of your own as the noise instead")
    ap.add_argument("--data", default=str(ROOT.parent / "scale-data"), help="--scale: where its KBs and noise go")
    ap.add_argument("--compare-with", default="", help="--scale: another checkout measured in the same run")
    ap.add_argument("--embedding", default="", help="--scale: the KB's embedding (default: each checkout's default)")
    ap.add_argument("--chroma-url", default="", help="--scale: a Chroma server (`chroma run`) for the vectors")
    ap.add_argument("--keep", action="store_true", help="--scale: keep the KB built")
    args = ap.parse_args(argv)
    if args.scale or args.noise:
        from kb_scale import run

        return run(args, ROOT, EVAL)
    if not args.skip_quality:
        bench_quality()
    if not args.skip_speed:
        runs = []
        for i in range(max(1, args.repeat)):
            if args.repeat > 1:
                print(f"speed run {i + 1} of {args.repeat}")
            runs.append(bench_speed(args.chunks, args.queries))
        if len(runs) > 1:
            print(f"summary of {len(runs)} speed runs: median [min-max]")
            for key in runs[0]:
                vals = [r[key] for r in runs]
                print(f"  {key}: {statistics.median(vals):.3g} [{min(vals):.3g}-{max(vals):.3g}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
