#!/usr/bin/env python3
"""Where the documentation bench's answers are lost: retrieval, reading or ranking.

For each answerable docsqa-dev question, the rank of the first chunk holding its evidence in the KB's
search for the question (chunks of distinct passages, as the research loop's KB step reads its first
ten), whether a fact the run kept holds the evidence, and whether the answer was right; then a table
of those cells. Needs the data folders and the per-question dump of one `bench/docs.py` run:

  .venv/bin/python bench/docs.py --keep DIR --dump DUMP.jsonl
  .venv/bin/python bench/evidence.py DIR DUMP.jsonl [--depth 90] [--details]

A row "kept, wrong" is a ranking loss (the answering sentence was a fact; another was quoted); "not kept"
with the chunk among the ten read is a reading loss; a chunk ranked below ten is a retrieval loss.
Evidence is matched letters and digits only, on its first 80 characters in a chunk and its first 60
in the kept facts (a fact may be a sentence of a longer evidence passage): evidence that a chunk
boundary splits counts as not found.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from utils.checkout import as_package  # noqa: E402

as_package()
from sleuth.utils.kb.hits import distinct  # noqa: E402
from sleuth.utils.kb.store import KnowledgeBase  # noqa: E402

EVAL = ROOT.parent / "shared" / "eval" / "docsqa-dev"
READ = 10  # the chunks the research loop's KB step reads (utils/steps.py KB_HITS)
NEAR = 30  # ...and how far below them a chunk counts as near
CHUNK_MATCH, FACT_MATCH = 80, 60  # the evidence's first characters looked for in a chunk, in the facts


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.lower()).strip()


def _band(rank: int | None) -> str:
    if rank is None:
        return "not found"
    if rank < READ:
        return f"among the first {READ}"
    return f"ranked {READ + 1}-{NEAR}" if rank < NEAR else f"ranked {NEAR + 1}+"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", type=Path, help="the --keep folder of a bench/docs.py run (one data folder per corpus)")
    ap.add_argument("dump", type=Path, help="the --dump file of the same run")
    ap.add_argument("--depth", type=int, default=90, help="how far down the search to look for the evidence")
    ap.add_argument("--details", action="store_true", help="print each question's row")
    a = ap.parse_args()
    questions = [json.loads(line) for line in (EVAL / "questions.jsonl").read_text().splitlines() if line.strip()]
    dump = {r["id"]: r for r in map(json.loads, a.dump.read_text().splitlines()) if r}
    kbs: dict[str, KnowledgeBase] = {}
    cells: Counter = Counter()
    for q in questions:
        row = dump.get(q["id"])
        if not q["answerable"] or row is None or not (a.folders / q["corpus"] / "kb").is_dir():
            continue
        kb = kbs.setdefault(q["corpus"], KnowledgeBase(a.folders / q["corpus"] / "kb"))
        evidence = [_norm(e)[:CHUNK_MATCH] for e in q["evidence"]]
        hits = distinct(kb.search(q["question"], k=a.depth))
        rank = next((i for i, h in enumerate(hits) if any(e in _norm(h.text) for e in evidence)), None)
        facts = _norm(" ".join(f.get("text", "") for f in row.get("facts", [])))
        kept = any(e[:FACT_MATCH] in facts for e in evidence)
        cells[(_band(rank), kept, bool(row.get("right")))] += 1
        if a.details:
            print(json.dumps({"id": q["id"], "rank": rank, "kept": kept, "right": bool(row.get("right"))}))
    bands = tuple(_band(r) for r in (0, READ, NEAR, None))
    print("| evidence chunk | kept, right | kept, wrong | not kept, right | not kept, wrong |")
    print("| --- | --- | --- | --- | --- |")
    for b in bands:
        print(f"| {b} | " + " | ".join(str(cells[(b, k, r)]) for k in (True, False) for r in (True, False)) + " |")
    wrong = {
        "ranking": sum(v for (b, k, r), v in cells.items() if k and not r),
        "reading": cells[(bands[0], False, False)],
        "retrieval": sum(v for (b, k, r), v in cells.items() if b != bands[0] and not k and not r),
    }
    print(json.dumps({"answerable": sum(cells.values()), "wrong_by_cause": wrong}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
