"""Piped batch mode: questions on stdin (plain lines or JSON lines {"id", "query"}), one JSON
object per question on stdout, flushed as each finishes, progress on stderr, never a prompt."""

from __future__ import annotations

import json
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import TextIO

from .output import EXIT_ITEMS_FAILED as EXIT_SOME_FAILED  # at least one question failed
from .output import EXIT_USAGE, err, interrupted_status, json_text, stdout_closed


def parse_questions(lines) -> list[dict]:
    """Blank lines and # comments are skipped; JSON lines need a "query" and may carry an "id"."""
    out: list[dict] = []
    for lineno, raw in enumerate(lines, 1):
        line = raw.lstrip("\ufeff").strip()  # a byte order mark (Windows Notepad) is not part of the line
        if not line or line.startswith("#"):
            continue
        qid, query, error = None, line, None
        if line.startswith("{"):
            try:
                obj = json.loads(line)
                qid = obj.get("id")
                query = str(obj.get("query") or obj.get("question") or "").strip()
                if not query:
                    error = f'line {lineno}: JSON line has no "query"'
            except (json.JSONDecodeError, AttributeError) as exc:
                error, query = f"line {lineno}: invalid JSON ({exc})", ""
            except RecursionError:
                error, query = f"line {lineno}: invalid JSON (nested too deeply)", ""
        out.append({"id": qid if qid is not None else len(out) + 1, "query": query, "error": error, "line": lineno})
    return out


def error_record(q: dict, error: str, **fields) -> dict:
    """A failed question's line: every key a finished one has (README), empty, and the error."""
    from .runner import result_json

    rec = {**result_json({}), "confidence": 0.0, "iterations": 0, "elapsed_ms": 0, **fields}
    return {**rec, "id": q["id"], "query": q["query"], "error": error}


def run_batch(args, settings, run_flow, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    from .runner import make_runtime, new_session, result_json, write_reports
    from .ui import make_ui

    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    questions = parse_questions(stdin)
    if not questions:  # an empty pipe: nothing to answer is a usage error, not a silent success
        from .args import invoked_as

        err(f'no question given and none on stdin; ask one: {invoked_as()} "QUESTION", or pipe one per line')
        return EXIT_USAGE
    base_ui = make_ui(plain=True, quiet=getattr(args, "quiet", False), show_report=False)
    rt = make_runtime(settings, base_ui, feedback=None)
    lock = threading.Lock()
    failed = 0
    reports: dict[int, str] = {}  # input position -> report, for -o FILE.md (every question, in input order)

    unwritable = False  # the report file could not be written (said once)

    def keep_report(i: int, text: str) -> None:
        nonlocal unwritable
        if getattr(args, "output", None):
            with lock:
                reports[i] = text
                try:
                    write_reports(args.output, [reports[k] for k in sorted(reports)])
                except OSError as exc:
                    if not unwritable:
                        unwritable = True
                        err(f"could not write {args.output}: {exc.strerror or exc}; the reports are still printed")

    def one(i: int, q: dict) -> dict:
        if q["error"]:
            keep_report(i, f"# {q['query'] or '(no question)'}\n\n_Not researched: {q['error']}_")
            return error_record(q, q["error"])
        ui = make_ui(plain=True, quiet=getattr(args, "quiet", False), show_report=False, prefix=f"[{q['id']}] ")
        job = rt.for_job(ui=ui, feedback=None)
        shared = new_session(job, q["query"])
        try:
            run_flow(job, shared, "query")
        except Exception as exc:  # noqa: BLE001 - one failing question never stops the batch
            error = f"{type(exc).__name__}: {exc}"
            keep_report(i, f"# {q['query']}\n\n_Failed: {error}_")
            return error_record(q, error, **{k: v for k, v in result_json(shared).items() if v is not None})
        keep_report(i, shared.get("final_answer") or f"# {q['query']}\n\n_No report._")
        return {"id": q["id"], **result_json(shared), "error": None}

    def emit(i: int, rec: dict) -> None:
        nonlocal failed
        if rec.get("error"):
            failed += 1
            line = questions[i]["line"]
            why = rec["error"].removeprefix(f"line {line}: ")
            err(f"batch: line {line} (id {json_text(rec['id'])}) not answered: {why}")
        with lock:
            stdout.write(json_text(rec) + "\n")
            stdout.flush()

    try:
        jobs = max(1, int(getattr(args, "jobs", 1) or 1))
        ordered = not getattr(args, "unordered", False)
        finished: list = []
        pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="sleuth-job")
        futures = [pool.submit(one, i, q) for i, q in enumerate(questions)]
        index = {f: i for i, f in enumerate(futures)}
        results: dict[int, dict] = {}
        harvested: set[int] = set()  # questions whose result was taken from their future
        next_out = 0
        pending = set(futures)

        def harvest(f) -> int:
            i = index[f]
            results[i] = f.result()
            harvested.add(i)
            finished.append(questions[i]["id"])
            return i

        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    i = harvest(f)
                    if not ordered:
                        emit(i, results.pop(i))
                while ordered and next_out in results:
                    emit(next_out, results.pop(next_out))
                    next_out += 1
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (main.py raises Terminated for it)
            err("stopping: the questions in flight stop at their next step, saved (sleuth --resume ID continues one)")
            rt.cancel.set()  # running jobs stop at their next step and save a resumable session
            pool.shutdown(wait=True, cancel_futures=True)
            for f in futures:  # questions that finished while the signal came in, not yet taken
                if index[f] not in harvested and f.done() and not f.cancelled() and f.exception() is None:
                    harvest(f)
            for i in sorted(results):  # finished answers still waiting for an earlier one are not lost
                emit(i, results.pop(i))
            print(
                f"\nsleuth: batch interrupted; finished ids: {', '.join(map(str, finished)) or '(none)'}",
                file=sys.stderr,
            )
            return interrupted_status(exc)
        except BrokenPipeError:  # the reader of stdout is gone: start nothing more, save the questions in flight
            rt.cancel.set()
            pool.shutdown(wait=True, cancel_futures=True)
            return stdout_closed()
        pool.shutdown(wait=True)
        if rt.tools.problems:  # every answer is printed, but the data folder had no room for part of the run
            err(rt.tools.problems.line())
        if unwritable or rt.tools.problems:
            return EXIT_USAGE
        return EXIT_SOME_FAILED if failed else 0
    finally:
        rt.close()  # the session index, the cache and the crawler's connections (main() called in-process)
