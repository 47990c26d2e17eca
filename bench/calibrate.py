#!/usr/bin/env python3
"""Fit the offline engine's confidence model: a logistic regression from what the facts say
(utils/engine/passages.confidence_features) to whether the answer was right.

Reads the per-question rows that `bench/docs.py --dump` and `bench/research.py --dump` write,
computes each question's features from its saved facts, fits on the even ids (the development
half) by minimising the log loss (a proper scoring rule) with a little L2, and prints the fitted
coefficients (to copy into utils/engine/tuning.py) and, on both halves, the log loss, the Brier
score, the AUROC and the reliability table of the fitted model next to the confidence the run used.

  .venv/bin/python bench/calibrate.py DUMP.jsonl [DUMP.jsonl ...] [--weight docs=2] [--kb]

With --kb it fits the model used when the KB can say how rare the question's words are (CONF_KB_*),
on the rows that have KB word rarity (docs and HotpotQA-from-the-KB runs), with two more features.

Rows of unanswerable questions count as "not right" (answering them is never right). Dumps of
the HotpotQA benches have numeric ids by position; their half comes from the "split" the bench
ran with, given as DUMP.jsonl:even or DUMP.jsonl:odd.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
from utils.checkout import as_package  # noqa: E402

as_package()
from reliability import print_reliability  # noqa: E402

from sleuth.utils.engine.notes import from_noted  # noqa: E402
from sleuth.utils.engine.offline import answer_facts  # noqa: E402
from sleuth.utils.engine.passages import FEATURES, KB_FEATURES, confidence_features, question_weights  # noqa: E402
from sleuth.utils.research.loopdata import Source  # noqa: E402


def load(spec: str) -> list[dict]:
    path, _, half = spec.partition(":")
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    for r in rows:
        if half:
            r["half"] = half
        else:
            r["half"] = "even" if int(str(r["id"]).rsplit("-", 1)[-1]) % 2 == 0 else "odd"
        r["set"] = "docs" if "answerable" in r else Path(path).stem
    return rows


def features(r: dict, names: tuple[str, ...] = FEATURES) -> list[float]:
    facts = [from_noted(f) for f in r["facts"] if "text" in f]
    if not facts:
        return [0.0] * len(names)
    w = question_weights(r["question"], [], r.get("term_idf") or None)
    sources = [Source.from_json(s) for s in r.get("sources", [])]
    answer, decided = answer_facts(r["question"], facts, sources, w)
    x = confidence_features(answer, facts, w, r["question"], bool(decided), r.get("term_idf") or None)
    return [float(x[k]) for k in names]


def fit(X: np.ndarray, y: np.ndarray, sw: np.ndarray, l2: float = 0.5) -> np.ndarray:
    """Newton's method on the weighted, L2-penalised log loss (the intercept is not penalised)."""
    Xb = np.hstack([np.ones((len(X), 1)), X])
    beta = np.zeros(Xb.shape[1])
    pen = np.full(Xb.shape[1], l2)
    pen[0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-(Xb @ beta)))
        grad = Xb.T @ (sw * (p - y)) + pen * beta
        H = (Xb * (sw * p * (1 - p))[:, None]).T @ Xb + np.diag(pen)
        step = np.linalg.solve(H, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta


def predict(beta: np.ndarray, X: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(beta[0] + X @ beta[1:])))


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--weight", action="append", default=[], help="SET=W: weigh that set's rows (docs=2)")
    ap.add_argument("--l2", type=float, default=0.5)
    ap.add_argument("--train", choices=("even", "odd"), default="even")
    ap.add_argument("--kb", action="store_true", help="fit CONF_KB_*: the runs with KB word rarity, more features")
    a = ap.parse_args()
    weights = {k: float(v) for k, v in (w.split("=", 1) for w in a.weight)}
    rows = [r for spec in a.dumps for r in load(spec)]
    names = KB_FEATURES if a.kb else FEATURES
    if a.kb:
        rows = [r for r in rows if r.get("term_idf")]
    X = np.array([features(r, names) for r in rows])
    y = np.array([float(r["right"]) for r in rows])
    sw = np.array([weights.get(r["set"], 1.0) for r in rows])
    train = np.array([r["half"] == a.train for r in rows])
    beta = fit(X[train], y[train], sw[train], a.l2)
    print(f"fitted on the {a.train} half: {int(train.sum())} questions ({', '.join(sorted({r['set'] for r in rows}))})")
    print(f"  CONF{'_KB' if a.kb else ''}_INTERCEPT: float = {beta[0]:.3f}")
    for name, b in zip(names, beta[1:], strict=True):
        print(f"  {name}: {b:+.3f}")
    for half in ("even", "odd"):
        for group in sorted({r["set"] for r in rows}) + ["all"]:
            m = np.array([r["half"] == half and (group == "all" or r["set"] == group) for r in rows])
            if not m.any():
                continue
            p = predict(beta, X[m])
            used = np.array([r["confidence"] for r, keep in zip(rows, m, strict=True) if keep])
            print(
                f"\n## {half} half, {group}: log loss {log_loss(p, y[m]):.3f} (the run's own confidence: "
                f"{log_loss(used, y[m]):.3f}); Brier {float(np.mean((p - y[m]) ** 2)):.3f}"
            )
            print_reliability([(float(c), bool(t)) for c, t in zip(p, y[m], strict=True)], "fitted: ")
            una = [
                float(c)
                for c, r in zip(p, [r for r, k in zip(rows, m, strict=True) if k], strict=True)
                if r.get("answerable") is False
            ]
            if una:
                print(f"mean fitted confidence on unanswerable questions: {sum(una) / len(una):.3f} (n={len(una)})")
    return 0 if all(math.isfinite(b) for b in beta) else 1


if __name__ == "__main__":
    sys.exit(main())
