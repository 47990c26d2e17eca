#!/usr/bin/env python3
"""Batch throughput: 32 questions against a fake LLM that takes 200 ms per call and local tools
(the HotpotQA local web on 127.0.0.1: fake DuckDuckGo endpoint + page server). Prints wall time
for --jobs 1 and --jobs 8 and the speedup (target >= 7x; the limit is 8x).

  .venv/bin/python bench/batch.py [--questions 32] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
from utils.checkout import as_package  # noqa: E402 - the checkout as the `sleuth` package

as_package()
from sleuth.utils.engine.protocol import BaseEngine  # noqa: E402

EVAL = ROOT.parent / "shared" / "eval" / "hotpotqa-dev100"


class SlowScriptedLLM(BaseEngine):
    """Search, read the top result, report: 4 LLM calls per question, each `latency` seconds."""

    name = "fake-llm"

    def __init__(self, latency: float):
        super().__init__()
        self.latency = latency

    def _wait(self):
        time.sleep(self.latency)  # stands in for the network round trip of a real LLM call

    def decide(self, ctx):
        from sleuth.utils.engine.protocol import EngineResult
        from sleuth.utils.registry import CRAWL, HITL, SEARCH_DDG
        from sleuth.utils.research.loopdata import Choice

        self._wait()
        if not ctx.history:
            d = Choice(SEARCH_DDG, ctx.query, "search")
        elif len(ctx.history) == 1 and ctx.candidate_urls:
            d = Choice(CRAWL, ctx.candidate_urls[0]["url"], "read")
        else:
            d = Choice(HITL, "", "done")
        return EngineResult(d, self.name, usage={"calls": 1, "total": 100})

    def analyze(self, ctx):
        from sleuth.utils.engine.offline import OfflineEngine

        self._wait()
        return OfflineEngine().analyze(ctx)

    def report(self, ctx, on_chunk=None):
        from sleuth.utils.engine.offline import OfflineEngine

        self._wait()
        return OfflineEngine().report(ctx)


def run(jobs: int, questions: list[str], latency: float, web, data_dir: Path) -> tuple[float, list[dict]]:
    from sleuth.utils.cli import batch
    from sleuth.utils.config import Settings

    settings = Settings(
        engine="offline",
        data_dir=data_dir,
        tools=("duckduckgo", "crawl"),
        ddg_url=web.search_url,
        allow_private_hosts=True,
        crawl_interval=0.0,
        no_cache=True,
        remember=False,
        confidence=0.99,
    )
    from sleuth.flow import run_flow
    from sleuth.utils.cli import runner

    real = runner.make_runtime

    def make_runtime(settings, ui, feedback=None, store=True):
        rt = real(settings, ui, feedback=feedback, store=store)
        rt.engine = SlowScriptedLLM(latency)
        return rt

    runner.make_runtime = make_runtime
    out = io.StringIO()
    args = SimpleNamespace(jobs=jobs, unordered=False, quiet=True, output=None)
    t0 = time.perf_counter()
    code = batch.run_batch(args, settings, run_flow, stdin=io.StringIO("\n".join(questions) + "\n"), stdout=out)
    wall = time.perf_counter() - t0
    runner.make_runtime = real
    recs = [json.loads(x) for x in out.getvalue().splitlines()]
    assert code == 0 and len(recs) == len(questions), (code, len(recs))
    return wall, recs


def main_() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.2)
    args = ap.parse_args()
    if not EVAL.is_dir():
        print(f"missing {EVAL}", file=sys.stderr)
        return 2
    from localweb import LocalWeb

    qs = [json.loads(x)["question"] for x in (EVAL / "questions.jsonl").read_text().splitlines()][: args.questions]
    with LocalWeb(EVAL) as web, tempfile.TemporaryDirectory() as tmp:
        t1, r1 = run(1, qs, args.latency, web, Path(tmp) / "j1")
        t8, r8 = run(8, qs, args.latency, web, Path(tmp) / "j8")
    same = [a["answer"] for a in r1] == [b["answer"] for b in r8]
    print(f"questions: {len(qs)}  LLM latency: {args.latency * 1000:.0f} ms/call  calls/question: 4")
    print(f"--jobs 1: {t1:.2f} s")
    print(f"--jobs 8: {t8:.2f} s")
    print(f"speedup:  {t1 / t8:.2f}x  (target >= 7x)   same answers: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
