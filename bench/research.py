#!/usr/bin/env python3
"""Research quality of the offline engine on the HotpotQA local web (../shared/eval/hotpotqa-dev100).

Serves the pages and a fake DuckDuckGo endpoint on 127.0.0.1, runs the full research loop for each
question, and prints: answer recall (gold answer or alias in the answer text, HotpotQA
normalization), the fraction of questions whose two supporting pages are both among the sources
the report cites / among all sources found, the share of citations that verify against their
source (utils/research/citations.py), mean steps, stop reasons and seconds per question.

--split even|odd|all picks the questions by their index in questions.jsonl (0, 2, 4... or 1, 3,
5...): tune on one half, check on the other.

  .venv/bin/python bench/research.py [--questions N] [--split even|odd|all] [--tools duckduckgo,crawl] [--kb]
      [--kb-extra DIR...]   (more documents in the KB: a bigger haystack for the same questions)
  .venv/bin/python bench/research.py --engine openai --base-url http://127.0.0.1:8000/v1 --model M -n 5

With an LLM engine it also prints the schema-valid rate of the model's replies per call kind, the
fallback rate (steps the offline engine answered), and tokens per question.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import string
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]
from utils.checkout import as_package  # noqa: E402 - the checkout as the `sleuth` package

as_package()
from reliability import print_reliability  # noqa: E402 - bench/reliability.py, beside this script

from sleuth.utils.config import DEFAULT_CONFIDENCE, DEFAULT_MAX_ITERATIONS  # noqa: E402
from sleuth.utils.engine.notes import noted  # noqa: E402

EVAL = ROOT.parent / "shared" / "eval" / "hotpotqa-dev100"


def normalize_answer(s: str) -> str:
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", "--questions", type=int, default=100)
    ap.add_argument("--engine", default="offline", choices=["offline", "openai", "gemini"])
    ap.add_argument("--base-url", default="", help="OpenAI-compatible server (--engine openai)")
    ap.add_argument("--model", default="")
    ap.add_argument("--context-tokens", type=int, default=0)
    ap.add_argument("--split", choices=["all", "even", "odd"], default="all", help="questions by index parity")
    ap.add_argument("--tools", default="duckduckgo,crawl")
    ap.add_argument("--kb", action="store_true", help="ingest the wiki into the KB first and add the kb tool")
    ap.add_argument(
        "--kb-extra", nargs="*", default=[], metavar="DIR", help="with --kb: more folders to ingest (distractors)"
    )
    ap.add_argument("--max-iterations", type=int, default=DEFAULT_MAX_ITERATIONS)
    ap.add_argument("--confidence", type=float, default=DEFAULT_CONFIDENCE)
    ap.add_argument("--dump", type=Path, help="write one JSON line per question (answer, verdicts, facts) here")
    args = ap.parse_args()
    if not EVAL.is_dir():
        print(f"missing {EVAL}", file=sys.stderr)
        return 2

    from localweb import LocalWeb

    from sleuth.flow import run_flow
    from sleuth.utils.cli.ui import PlainUI
    from sleuth.utils.config import Settings, parse_tools
    from sleuth.utils.engine.factory import make_engine
    from sleuth.utils.research.state import new_shared
    from sleuth.utils.runtime import Runtime, Tools

    questions = [json.loads(x) for x in (EVAL / "questions.jsonl").read_text().splitlines() if x]
    parity = {"all": None, "even": 0, "odd": 1}[args.split]
    questions = [q for i, q in enumerate(questions) if parity is None or i % 2 == parity][: args.questions]
    tools = parse_tools(",".join(dict.fromkeys(args.tools.split(",") + (["kb"] if args.kb else []))))
    with tempfile.TemporaryDirectory() as tmp, LocalWeb(EVAL) as web:
        s = Settings(
            engine=args.engine,
            openai_base_url=args.base_url,
            model=args.model,
            context_tokens=args.context_tokens,
            gemini_api_key=os.environ.get("GEMINI_API_KEY", ""),
            data_dir=Path(tmp),
            tools=tools,
            ddg_url=web.search_url,
            allow_private_hosts=True,
            ignore_robots=True,
            remember=False,
            crawl_interval=0.0,  # the local web has no rate limits to respect
            max_iterations=args.max_iterations,
            confidence=args.confidence,
        )
        rt_tools = Tools(s)
        if args.kb:
            rt_tools.kb().ingest_paths([EVAL / "wiki", *map(Path, args.kb_extra)])
        engine = make_engine(s)
        recall = both_cited = both_found = cites = cites_ok = 0
        steps, reasons, t0 = [], Counter(), time.perf_counter()
        fallbacks = tokens = 0
        rows = []
        for q in questions:
            rt = Runtime(settings=s, engine=engine, ui=PlainUI(err=io.StringIO(), out=io.StringIO()), tools=rt_tools)
            shared = new_shared(q["question"], engine=engine.name)
            run_flow(rt, shared, "query")
            ans = normalize_answer(shared.get("answer") or "")
            golds = [q["answer"], *q.get("answer_aliases", [])]
            recall += any(normalize_answer(g) and normalize_answer(g) in ans for g in golds)
            # A page counts whether it was read on the web (URL) or found in the KB (file path).
            by_n = {src.n: "/wiki/" + src.url.rsplit("/wiki/", 1)[-1] for src in shared["sources"]}
            cited = {by_n[int(n)] for n in re.findall(r"\[(\d+)\]", shared.get("answer") or "") if int(n) in by_n}
            found = set(by_n.values())
            sup = set(q["supporting_urls"])
            both_cited += sup <= cited
            both_found += sup <= found
            steps.append(shared["iteration_count"])
            cites += shared.get("citations", {}).get("total", 0)
            cites_ok += shared.get("citations", {}).get("supported", 0)
            fallbacks += len(shared["llm_fallbacks"])
            tokens += shared["token_usage"]["total"]
            reasons[shared["stop_reason"]] += 1
            right = any(normalize_answer(g) and normalize_answer(g) in ans for g in golds)
            rows.append(
                {
                    "id": q["id"],
                    "question": q["question"],
                    "gold": q["answer"],
                    "right": right,
                    "both_cited": sup <= cited,
                    "both_found": sup <= found,
                    "confidence": shared["confidence_score"],
                    "stop_reason": shared["stop_reason"],
                    "answer": shared.get("answer") or "",
                    "steps": [f"{h['action']} {h['query_or_url']}" for h in shared["research_history"]],
                    "supporting": sorted(sup),
                    "facts": noted(shared)[0],  # with the offline engine's notes on each
                    "term_idf": noted(shared)[1],
                    "sources": [{"n": s_.n, "url": by_n[s_.n], "title": s_.title} for s_ in shared["sources"]],
                }
            )
        n = len(questions)
        dt = time.perf_counter() - t0
    print(f"questions: {n} ({args.split})  tools: {','.join(tools)}")
    print(f"answer recall:                  {recall / n:.2f}")
    print(f"both supporting pages cited:    {both_cited / n:.2f}")
    print(f"both supporting pages found:    {both_found / n:.2f}")
    print(f"citations supported:            {cites_ok / max(cites, 1):.2f}  ({cites_ok}/{cites})")
    print(f"mean steps: {sum(steps) / n:.1f}   seconds/question: {dt / n:.2f}")
    print("stop reasons: " + ", ".join(f"{k}={v}" for k, v in reasons.most_common()))
    print_reliability([(r["confidence"], r["right"]) for r in rows])
    if args.dump:
        args.dump.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    stats = engine.stats
    if stats:  # an LLM engine: how often its replies validated, and how often offline answered
        model = engine.model or "?"
        print(f"engine: {engine.name}  model: {model}")
        for kind, st in stats.items():
            rate = f"{st['valid'] / st['replies']:.2f}" if st["replies"] else "n/a"
            print(f"schema-valid {kind:<8} {rate}  ({st['valid']}/{st['replies']} replies)")
        calls = sum(st["valid"] for st in stats.values()) + fallbacks
        print(f"fallback rate: {fallbacks / max(calls, 1):.2f}  ({fallbacks}/{calls} LLM steps)")
        print(f"tokens/question: {tokens / n:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
