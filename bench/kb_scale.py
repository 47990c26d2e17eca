"""The knowledge base at scale (`bench/kb.py --scale N`): the HotpotQA dev-100 pages ingested beside N
chunks of unrelated documents, every step in a process of its own so its time and peak memory are its own.

    .venv/bin/python bench/kb.py --scale 100000 [--noise DIR] [--data /work/scale-data] [--compare-with TREE]
                                 [--embedding NAME] [--chroma-url http://HOST:PORT]

Prints, for the checkout (and, with --compare-with, another checkout measured the same way in the same run):
  * `kb ingest` of the pages and the noise through the CLI: seconds, CPU seconds, seconds per 100k
    chunks, peak RSS (the child's own, from wait4), then the same ingest again (nothing changed): seconds, RSS;
  * `kb search - --json`'s per-query work (the CLI's own `_search`, output to /dev/null) in a fresh
    process: p50 / p95 ms over the 100 questions, each run once, and that process's peak RSS;
  * the research loop's KB step (utils/steps.py: search for 3 x KB_HITS, then the links followed): p50 / max ms;
  * both@10 and recall@10 of the supporting pages, page level (bench/kb.py `evaluate`).

The noise (no --noise): documents written by `make_noise`, a deterministic generator: 60 % of the words
drawn from the eval pages' 2,000 most frequent words by their frequency (the questions' general words
occur among the noise as often as on the pages; the pages' rarer words, names most of all, do not),
40 % made-up words of a Zipf vocabulary (so the index's vocabulary grows with the corpus as a real one
does), in sentences and paragraphs, 80-2,000 words a file, 500 files a folder. It is written once under
DATA/noise-N and reused. `--noise DIR` uses a folder of real documents instead (e.g. /usr/share/doc).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

WORDS_PER_CHUNK = 138  # words per chunk of the generated files (measured: chunks overlap, files end mid-chunk)
COMMON_WORDS = 2000  # the noise's real words: the pages' most frequent ones

# What one process measures: runs in a fresh interpreter against the checkout `tree` (argv: tree data_dir
# eval_dir out.json [chroma_url] [embedding]).
QUERY_CHILD = r"""
import contextlib, io, json, os, statistics, sys, time
from pathlib import Path
tree, data, eval_dir, out = sys.argv[1:5]
chroma_url = sys.argv[5] if len(sys.argv) > 5 else ""
embedding = sys.argv[6] if len(sys.argv) > 6 else ""
sys.path.insert(0, tree)
from utils.checkout import as_package
as_package(Path(tree))
from sleuth.utils.config import Settings
embedding = embedding or Settings().embedding  # none asked for: what the checkout's CLI does by default
from sleuth.utils.cli import kb as cli
from sleuth.utils.kb.store import KnowledgeBase
from sleuth.utils.kb.links import follow
from sleuth.utils.steps import KB_HITS, KB_LINKED
qs = [json.loads(l) for l in open(Path(eval_dir) / "questions.jsonl") if l.strip()]
kb = KnowledgeBase(Path(data) / "kb", chroma_url=chroma_url, embedding=embedding)
lat = []
sink = open(os.devnull, "w")
for q in qs:  # what `kb search - --json` does for each line
    t = time.perf_counter()
    with contextlib.redirect_stdout(sink):
        cli._search(kb, q["question"], 5, True, None)
    lat.append((time.perf_counter() - t) * 1000)
step = []
for q in qs:  # the research loop's KB step (utils/steps.py kb_search)
    t = time.perf_counter()
    hits = kb.search(q["question"], k=KB_HITS * 3)
    follow(kb, hits[:KB_HITS], q["question"], keep=KB_LINKED)
    step.append((time.perf_counter() - t) * 1000)
found = both = total = 0
for q in qs:
    pages = []
    for h in kb.search(q["question"], k=40):
        key = "/wiki/" + Path(h.source).name
        if key not in pages:
            pages.append(key)
        if len(pages) == 10:
            break
    gold = set(q["supporting_urls"])
    got = len(gold & set(pages))
    found, total, both = found + got, total + len(gold), both + (got == len(gold))
lat_sorted = sorted(lat)
json.dump({
    "first ms": lat[0],
    "p50 ms": statistics.median(lat),
    "p95 ms": lat_sorted[int(0.95 * (len(lat) - 1))],
    "step p50 ms": statistics.median(step),
    "step max ms": max(step),
    "recall@10": found / total,
    "both@10": both / len(qs),
    "chunks": kb.count(),
}, open(out, "w"))
"""


def _vocabulary(eval_dir: Path) -> tuple[list[str], list[float]]:
    """The eval pages' words (as written, lower-cased) and their counts."""
    counts: Counter[str] = Counter()
    pages = eval_dir / "pages.jsonl"
    if pages.is_file():
        with open(pages, encoding="utf-8") as f:
            for line in f:
                counts.update(w.lower() for w in re.findall(r"[A-Za-z]+|\d+", json.loads(line)["text"]))
    if not counts:
        counts.update({f"word{i}": 1 + 1000 // (i + 1) for i in range(5000)})
    words = sorted(counts)
    return words, [float(counts[w]) for w in words]


def make_noise(folder: Path, n_chunks: int, eval_dir: Path, seed: int = 13) -> int:
    """Write documents adding up to about n_chunks chunks under `folder` (deterministic); returns files."""
    import numpy as np

    stamp = folder / ".complete"
    if stamp.is_file():
        return int(stamp.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    rng = np.random.default_rng(seed)
    words, counts = _vocabulary(eval_dir)
    common = sorted(range(len(words)), key=lambda i: -counts[i])[:COMMON_WORDS]  # general words, not the pages' names
    words, counts = [words[i] for i in common], [counts[i] for i in common]
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
    made = {"".join(rng.choice(syllables, size=int(rng.integers(2, 5)))) for _ in range(300_000)}
    made_up = sorted(made - set(words))
    rng.shuffle(made_up)
    vocab = np.array(words + made_up, dtype=object)
    p_eval = np.asarray(counts) / sum(counts) * 0.6  # 60 % of the words from the pages' vocabulary
    zipf = 1.0 / (np.arange(len(made_up)) + 10.0)
    p = np.concatenate([p_eval, zipf / zipf.sum() * 0.4])
    cum = np.cumsum(p)
    cum /= cum[-1]
    dotted = np.array([w + "." for w in vocab], dtype=object)
    para = np.array([w + ".\n\n" for w in vocab], dtype=object)
    est, n = 0.0, 0
    while est < n_chunks:
        size = int(min(2000, max(80, rng.lognormal(6.2, 0.8))))
        idx = np.searchsorted(cum, rng.random(size))
        ends = np.cumsum(rng.integers(8, 22, size=size // 8 + 2))
        ends = ends[ends < size - 1]
        out = vocab[idx]
        out[ends] = dotted[idx[ends]]
        out[ends[4::5]] = para[idx[ends[4::5]]]
        out[-1] = dotted[idx[-1]]
        sub = folder / f"d{n // 500:04d}"
        if n % 500 == 0:
            sub.mkdir(parents=True, exist_ok=True)
        (sub / f"n{n:07d}.txt").write_text(" ".join(out.tolist()).capitalize().replace("\n\n ", "\n\n"))
        est += max(1.0, size / WORDS_PER_CHUNK)
        n += 1
    stamp.write_text(str(n))
    return n


def _popen_rss(cmd: list[str]) -> tuple[float, float, str, int, float]:
    """(seconds, this child's peak RSS MB, stdout tail, status, its CPU seconds): waited for by wait4, so its
    RSS and CPU time (user + system, steadier than the wall clock on a shared machine) are its own."""
    t = time.perf_counter()
    out_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"kb-scale-{os.getpid()}.out"
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        _pid, status, usage = os.wait4(proc.pid, 0)
    secs = time.perf_counter() - t
    text = out_path.read_text(errors="replace")
    out_path.unlink()
    cpu = usage.ru_utime + usage.ru_stime
    return secs, usage.ru_maxrss / 1024, text[-600:], os.waitstatus_to_exitcode(status), cpu


def measure(tree: Path, data: Path, noise: Path, eval_dir: Path, embedding: str, chroma_url: str) -> dict:
    """Ingest twice, then query, against the checkout `tree` with its KB in `data`; prints and returns numbers."""
    py = sys.executable
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    opts = ["--data-dir", str(data)] + (["--embedding", embedding] if embedding else [])
    opts += ["--chroma-url", chroma_url] if chroma_url else []
    main = str(tree / "main.py")
    if chroma_url:
        _popen_rss([py, main, "kb", "reset", "--yes", *opts])
    res: dict = {}
    for label in ("ingest", "re-ingest"):
        secs, rss, tail, code, cpu = _popen_rss([py, main, "kb", "ingest", str(eval_dir / "wiki"), str(noise), *opts])
        last = tail.strip().splitlines()[-1] if tail.strip() else ""
        m = re.search(r"(\d+) chunks added; (\d+) chunks in the KB", last)
        res[f"{label} s"], res[f"{label} RSS MB"], res[f"{label} CPU s"] = secs, rss, cpu
        if label == "ingest" and m:
            res["chunks"] = int(m.group(2))
        if label == "ingest":
            res["disk MB"] = sum(f.stat().st_size for f in (data / "kb").rglob("*") if f.is_file()) / 2**20
            last += f"; {res['disk MB']:.0f} MB on disk"
        print(f"  {label}: {secs:.1f} s ({cpu:.1f} s CPU), peak RSS {rss:.0f} MB (status {code}): {last}", flush=True)
    out = data / "query.json"
    secs, rss, tail, code, _cpu = _popen_rss(
        [py, "-c", QUERY_CHILD, str(tree), str(data), str(eval_dir), str(out), chroma_url, embedding]
    )
    if code:
        print(tail)
        return res
    q = json.loads(out.read_text())
    res.update(q)
    res["query RSS MB"] = rss
    chunks = q["chunks"]
    print(
        f"  ingest per 100k chunks: {res['ingest s'] / chunks * 1e5:.1f} s ({chunks} chunks)\n"
        f"  kb search - (CLI path, 100 questions once each): p50 {q['p50 ms']:.2f} ms, p95 {q['p95 ms']:.2f} ms, "
        f"first {q['first ms']:.1f} ms; peak RSS {rss:.0f} MB\n"
        f"  research KB step (search 30 + links): p50 {q['step p50 ms']:.1f} ms, max {q['step max ms']:.1f} ms\n"
        f"  quality among the noise: recall@10 {q['recall@10']:.3f}, both@10 {q['both@10']:.2f}",
        flush=True,
    )
    return res


def run(args, root: Path, eval_dir: Path) -> int:
    data = Path(args.data)
    noise = Path(args.noise) if args.noise else data / f"noise-{args.scale}"
    if not args.noise:
        t = time.perf_counter()
        files = make_noise(noise, args.scale, eval_dir)
        print(f"noise: {files} generated files under {noise} ({time.perf_counter() - t:.0f} s to make or find)")
    trees = [("this checkout", root)] + ([("compared with", Path(args.compare_with))] if args.compare_with else [])
    results = []
    for label, tree in trees:
        how = args.embedding or "its default"
        print(f"{label}: {tree} (embedding {how}{', server ' + args.chroma_url if args.chroma_url else ''})")
        results.append(measure(tree, data / "kb-run", noise, eval_dir, args.embedding, args.chroma_url))
    if len(results) == 2:
        a, b = results
        print("ratios, this checkout / compared (same run):")
        for key in ("ingest s", "ingest CPU s", "ingest RSS MB", "re-ingest s", "p50 ms", "p95 ms", "step p50 ms"):
            if a.get(key) and b.get(key):
                print(f"  {key}: {a[key] / b[key]:.2f}")
    if not args.keep:
        shutil.rmtree(data / "kb-run", ignore_errors=True)
    return 0
