#!/usr/bin/env python3
"""Answer quality on real documentation: ingest a doc set, ask its questions, score the answers.

Reads ../shared/eval/docsqa-dev (questions.jsonl and its scorer, score.py). For each corpus it
ingests the corpus's files into a fresh data folder (`main.py kb ingest`), runs the corpus's
questions as one batch (`main.py --tools kb`, offline engine unless --engine says otherwise), and
prints the scorer's table, then a reliability table (confidence band -> share of answers right)
and the AUROC of confidence for right vs. not right, overall and per half (even / odd ids). Each
corpus's line gives its ingest and asking seconds and `s_per_question` (asking wall time per question,
two questions at a time as `--jobs 2` runs them).

  .venv/bin/python bench/docs.py [--corpus NAME ...] [--split even|odd|all] [--keep DIR] [--reuse DIR]
      [--engine offline] [--details] [--renderings] [-- EXTRA MAIN.PY OPTIONS]

--corpus picks corpora by name (default: every corpus installed on this machine). --keep DIR keeps
each corpus's data folder under DIR (DIR/NAME); --reuse DIR asks against folders kept that way
instead of ingesting again. The doc sets are Debian packages (install command: the data set's
README); a corpus whose folder is missing is skipped with a note. --renderings also ingests the
other rendering a corpus ships of the same pages (Node.js: its HTML beside the Markdown), as doc sets
that ship HTML beside its sources are read: every passage is then in the KB twice.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from reliability import print_reliability  # noqa: E402 - bench/reliability.py, beside this script

EVAL = ROOT.parent / "shared" / "eval" / "docsqa-dev"

# Where each development corpus lives once its Debian package is installed, and what to ingest
# (the data set's README, "Ingest and ask"). Bench configuration, not a rule of Sleuth's.
CORPORA = {
    "postgresql": ["/usr/share/doc/postgresql-doc-15/html"],
    "valgrind": ["/usr/share/doc/valgrind/html"],
    "nodejs": ["/usr/share/doc/nodejs/api/*.md", "/usr/share/doc/nodejs/api/*.md.gz"],
    "vim": ["/usr/share/vim/vim90/doc"],
}


# Another rendering of a corpus's pages, shipped beside them (--renderings): a folder that holds both
# holds every passage twice, as the Sphinx and AsciiDoc doc sets that ship HTML beside their sources
# do. all.html is every page again in one file, left out. A cited rendering counts as its page cited.
RENDERINGS = {"nodejs": ("/usr/share/doc/nodejs/api/*.html", ".html", {"all.html"})}


def _rendering_of(gold: str, ext: str) -> str:
    for suffix in (".md.gz", ".md", ".html.gz", ".html", ".txt.gz", ".txt"):
        if gold.endswith(suffix):
            return gold[: -len(suffix)] + ext
    return gold


def _scorer():
    spec = importlib.util.spec_from_file_location("docsqa_score", EVAL / "score.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _expand(patterns: list[str]) -> list[str]:
    out: list[str] = []
    for p in patterns:
        if any(c in p for c in "*?["):
            parent = Path(p).parent
            out += sorted(str(x) for x in parent.glob(Path(p).name))
        else:
            out.append(p)
    return out


def _main_py(args: list[str], data_dir: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SLEUTH_DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, str(ROOT / "main.py"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def run_corpus(
    name: str, questions: list[dict], work: Path, reuse: bool, extra: list[str], renderings: bool = False
) -> tuple[list, dict]:
    data = work / name
    info: dict = {"corpus": name}
    if not reuse:
        data.mkdir(parents=True, exist_ok=True)
        files = _expand(CORPORA[name])
        if renderings and name in RENDERINGS:
            pattern, _ext, leave_out = RENDERINGS[name]
            files += [f for f in _expand([pattern]) if Path(f).name not in leave_out]
        t0 = time.perf_counter()
        res = _main_py(["kb", "ingest", *files], data)
        info["ingest_s"] = round(time.perf_counter() - t0, 1)
        info["ingest"] = (res.stdout.strip().splitlines() or [""])[-1][:160]
        if res.returncode not in (0, 3):
            info["ingest_error"] = res.stderr.strip()[-300:]
    queries = "".join(json.dumps({"id": q["id"], "query": q["question"]}) + "\n" for q in questions)
    t0 = time.perf_counter()
    res = _main_py(["--tools", "kb", "--jobs", "2", *extra], data, stdin=queries)
    info["ask_s"] = round(time.perf_counter() - t0, 1)
    info["s_per_question"] = round(info["ask_s"] / max(1, len(questions)), 2)  # wall time, two at a time
    answers = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    if not answers:
        info["ask_error"] = res.stderr.strip()[-300:]
    return answers, info


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", nargs="*", default=None)
    ap.add_argument("--split", choices=("even", "odd", "all"), default="all")
    ap.add_argument("--keep", type=Path, help="keep each corpus's data folder under this folder")
    ap.add_argument("--reuse", type=Path, help="ask against data folders kept with --keep")
    ap.add_argument("--engine", default="offline")
    ap.add_argument("--details", action="store_true", help="print each question's answer and verdict")
    ap.add_argument("--answers", type=Path, help="also write all answers (JSONL) here")
    ap.add_argument("--dump", type=Path, help="one JSON line per question, for bench/calibrate.py")
    ap.add_argument(
        "--renderings",
        action="store_true",
        help="also ingest the other rendering a corpus ships of its pages (Node.js: its HTML); a cited "
        "rendering counts as its page cited",
    )
    ap.add_argument("extra", nargs="*", help="more main.py options (after --)")
    a = ap.parse_args()
    if not EVAL.is_dir():
        print(f"bench/docs.py: {EVAL} not found (the docsqa-dev data set)", file=sys.stderr)
        return 2
    score = _scorer()
    allq = [json.loads(line) for line in (EVAL / "questions.jsonl").read_text().splitlines() if line.strip()]
    names = a.corpus or list(CORPORA)
    unknown = [n for n in names if n not in CORPORA]
    if unknown:
        print(f"bench/docs.py: unknown corpus {', '.join(unknown)} (known: {', '.join(CORPORA)})", file=sys.stderr)
        return 2
    work = a.reuse or a.keep or Path(tempfile.mkdtemp(prefix="sleuth-docs-"))
    extra = ["--engine", a.engine, *a.extra]
    answers: list[dict] = []
    infos = []
    for name in names:
        first = Path(_expand(CORPORA[name])[0]) if _expand(CORPORA[name]) else None
        if first is None or not first.exists():
            print(f"(skipped {name}: {CORPORA[name][0]} is not installed)")
            continue
        qs = [q for q in allq if q["corpus"] == name]
        if a.split != "all":
            qs = [q for q in qs if int(q["id"].rsplit("-", 1)[1]) % 2 == (0 if a.split == "even" else 1)]
        got, info = run_corpus(name, qs, work, bool(a.reuse), extra, a.renderings)
        answers += got
        infos.append(info)
    for info in infos:
        print(json.dumps(info, ensure_ascii=False))
    by_id = {r.get("id"): r for r in answers}
    asked = [q for q in allq if q["id"] in by_id or (q["corpus"] in {i["corpus"] for i in infos})]
    if a.split != "all":
        asked = [q for q in asked if int(q["id"].rsplit("-", 1)[1]) % 2 == (0 if a.split == "even" else 1)]
    ans_path = a.answers or (work / "answers.jsonl")
    ans_path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in answers))
    if a.renderings:  # the same page in its other rendering is the same gold file
        for q in asked:
            if q["corpus"] in RENDERINGS:
                ext = RENDERINGS[q["corpus"]][1]
                q["gold_files"] = q["gold_files"] + [_rendering_of(g, ext) for g in q["gold_files"]]
    q_path = work / "questions.jsonl"
    q_path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in asked))
    cmd = [sys.executable, str(EVAL / "score.py"), str(q_path), str(ans_path)] + (["--details"] if a.details else [])
    print(subprocess.run(cmd, capture_output=True, text=True, check=False).stdout)
    if a.dump:
        sys.path.insert(0, str(ROOT))
        from utils.checkout import as_package

        as_package()
        from sleuth.utils.engine.notes import noted
        from sleuth.utils.research.state import restored

        rows = []
        for q in asked:
            r = by_id.get(q["id"]) or {}
            sess = work / q["corpus"] / "sessions" / f"{r.get('session_id')}.json"
            saved = json.loads(sess.read_text()) if r.get("session_id") and sess.is_file() else None
            shared = restored(saved) if saved else {}
            facts, term_idf = noted(shared) if shared else ([], {})
            rows.append(
                {
                    "id": q["id"],
                    "question": q["question"],
                    "right": score.is_right(q, r.get("answer")),
                    "answerable": q["answerable"],
                    "confidence": r.get("confidence") or 0.0,
                    "facts": facts,  # with the offline engine's notes on each
                    "term_idf": term_idf,
                    "sources": [s.to_json() for s in shared.get("sources", [])],
                }
            )
        a.dump.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in rows))
    for half in ("even", "odd"):
        rows = []
        for q in asked:
            if int(q["id"].rsplit("-", 1)[1]) % 2 != (0 if half == "even" else 1):
                continue
            r = by_id.get(q["id"]) or {}
            conf = 0.0 if r.get("error") else float(r.get("confidence") or 0.0)
            rows.append((conf, score.is_right(q, r.get("answer"))))
        if not rows:
            continue
        print_reliability(rows, f"### {half} ids: ")
    print(f"data folders: {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
