"""The research command: one question (a report, or --json), --resume/--feedback, or a batch
from stdin. The flow itself is handed in by main.py (utilities never import the graph)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .output import EXIT_OK, EXIT_USAGE, err, interrupted_status, out_json
from .runner import make_runtime, new_session, one_shot, output_problem, result_json, settings_or_exit, write_output

RunFlow = Callable[..., dict]  # run_flow(rt, shared, start) from flow.py


def build_parser() -> argparse.ArgumentParser:
    from ..config import add_common_args, add_engine_args

    p = argparse.ArgumentParser(
        prog="sleuth",
        description="Research a question on the web and in your knowledge base; print a cited report.",
        epilog="Other commands: sleuth batch | sessions list|show|export | kb ingest|search|stats|reset | "
        "fetch URL...  (each has --help)",
    )
    p.add_argument("question", nargs="*", help="the question (omit to be asked, or pipe questions for a batch)")
    add_engine_args(p)
    p.add_argument("--confidence", type=float, help="stop when confidence reaches this (default 0.7)")
    p.add_argument("--max-iterations", type=int, help="research step budget per round (default 8)")
    p.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help="wall-clock budget per round (default 300; 0: none)",
    )
    p.add_argument("--max-tokens", type=int, metavar="N", help="LLM token budget per research round (default: none)")
    p.add_argument("--tools", help="comma-separated tools to offer: duckduckgo,google,crawl,kb (default all)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    p.add_argument("-o", "--output", help="also write the final report (Markdown) to this file")
    p.add_argument(
        "--no-remember", action="store_true", default=None, help="do not add crawled pages to the knowledge base"
    )
    p.add_argument("--resume", metavar="ID", help="reopen a saved session (with --feedback: re-research it)")
    p.add_argument("--feedback", help="feedback for --resume: re-research the session with it, non-interactively")
    p.add_argument("--batch", action="store_true", help="read questions from stdin, one JSON line out per question")
    p.add_argument("--jobs", type=int, default=1, help="batch: questions researched at once (default 1)")
    p.add_argument("--unordered", action="store_true", help="batch: print results as they finish")
    p.add_argument("--plain", action="store_true", help="plain progress lines, no live display or colour")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    add_common_args(p)
    return p


def main(argv: list[str], run_flow: RunFlow) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    settings = settings_or_exit(args)
    problem = output_problem(args.output)
    if problem:
        err(problem)
        return EXIT_USAGE
    stdin_tty = sys.stdin.isatty()
    question = " ".join(args.question).strip()

    if args.batch or (not question and not args.resume and not stdin_tty):
        from .batch import run_batch

        return run_batch(args, settings, run_flow)

    from .ui import make_ui

    interactive = stdin_tty and sys.stdout.isatty() and not args.json
    ui = make_ui(plain=args.plain, quiet=args.quiet or False, show_report=not args.json)
    feedback = None
    if args.feedback is not None:
        if not args.resume:
            parser.error("--feedback needs --resume ID")
        feedback = one_shot(args.feedback)
    elif interactive:
        feedback = ui.ask_feedback
    rt = make_runtime(settings, ui, feedback=feedback)
    rt.stream_report = interactive and bool(getattr(rt.engine, "streams", False))

    if args.resume:
        from ..errors import SessionNotFound

        try:
            shared = rt.store.load(args.resume)
        except SessionNotFound as exc:
            err(str(exc))
            return EXIT_USAGE
        shared["engine"] = rt.engine.name
        # A run cut short (Ctrl-C, crash) goes on researching; a finished one reopens at the feedback step.
        start = "decision" if shared.get("status") in ("running", "reporting", "interrupted") else "feedback"
        if feedback is None and start == "feedback" and not interactive:
            ui.report(shared["final_answer"])
            return EXIT_OK
    else:
        if not question:
            question = ui.ask_question() if interactive else ""
        if not question:
            err("no question given")
            return EXIT_USAGE
        shared, start = new_session(rt, question), "query"

    try:
        run_flow(rt, shared, start)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated)
        ui.finish()
        print(file=sys.stderr)
        err(f"interrupted; resume with: sleuth --resume {shared['session_id']}")
        return interrupted_status(exc)
    finally:
        ui.finish()
    problem = write_output(args.output, shared)
    if args.json:
        out_json(result_json(shared))
    if problem:
        err(f"{problem}; the report stays in session {shared['session_id']} (sessions export)")
        return EXIT_USAGE
    if rt.tools.problems:  # the answer is printed, but the data folder had no room for part of the run
        err(rt.tools.problems.line())
        return EXIT_USAGE
    return EXIT_OK
