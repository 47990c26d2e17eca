"""Calibration read-outs the benches print: a reliability table (confidence band -> share of answers
right) and the AUROC of confidence for right vs. not right answers. Standard library only."""

from __future__ import annotations

BANDS = [(0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.85), (0.85, 1.01)]
HIGH = 0.7


def auroc(pos: list[float], neg: list[float]) -> float | None:
    """Probability that a right answer has a higher confidence than a wrong one (ties count 1/2)."""
    if not pos or not neg:
        return None
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def table(rows: list[tuple[float, bool]]) -> list[str]:
    lines = ["| confidence | n | right | share right |", "| --- | --- | --- | --- |"]
    for lo, hi in BANDS:
        band = [ok for c, ok in rows if lo <= c < hi]
        share = f"{sum(band) / len(band):.2f}" if band else "–"
        lines.append(f"| {lo:.2f}–{min(hi, 1.0):.2f} | {len(band)} | {sum(band)} | {share} |")
    return lines


def print_reliability(rows: list[tuple[float, bool]], label: str = "") -> None:
    if not rows:
        return
    pos = [c for c, ok in rows if ok]
    neg = [c for c, ok in rows if not ok]
    au = auroc(pos, neg)
    high = [ok for c, ok in rows if c >= HIGH]
    p7 = f"{sum(high) / len(high):.3f}" if high else "–"
    brier = sum((c - ok) ** 2 for c, ok in rows) / len(rows)
    print(
        f"{label}n={len(rows)} right={len(pos)} ({len(pos) / len(rows):.3f})  right at >= {HIGH}: {p7} (n={len(high)})"
        f"  mean confidence when not right: {sum(neg) / len(neg) if neg else 0:.3f}"
        f"  AUROC={'–' if au is None else f'{au:.3f}'}  Brier={brier:.3f}"
    )
    print("\n".join(table(rows)))
