"""The research command: one question (a report, or --json), --resume/--feedback, or a batch
from stdin. The flow itself is handed in by main.py (utilities never import the graph)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .args import invoked_as
from .output import EXIT_OK, EXIT_USAGE, err, interrupted_status, out_json
from .runner import (
    make_runtime,
    new_session,
    one_shot,
    output_problem,
    result_json,
    settings_or_exit,
    tools_problem,
    write_output,
)

RunFlow = Callable[..., dict]  # run_flow(rt, shared, start) from flow.py


def build_parser(commands=None, version: str = "") -> argparse.ArgumentParser:
    from ..config import add_global_args
    from .args import Parser, invoked_as, positive_int

    prog = invoked_as()
    listing = "\n".join(f"  {name:<9} {c.summary}" for name, c in (commands or {}).items())
    p = Parser(
        prog=prog,
        usage=f"{prog} [OPTIONS] QUESTION | {prog} COMMAND [OPTIONS] ...",
        description="Research a question on the web and in your knowledge base; print a cited report.\n\n"
        f"commands (each has --help; options go before or after the command word):\n{listing}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("question", nargs="*", help="the question (omit to be asked, or pipe questions for a batch)")
    p.add_argument("--version", action="version", version=f"sleuth {version}".strip())
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the report")
    p.add_argument("-o", "--output", help="also write the final report (Markdown) to this file")
    p.add_argument("--resume", metavar="ID", help="reopen a saved session (with --feedback: re-research it)")
    p.add_argument("--feedback", help="feedback for --resume: re-research the session with it, non-interactively")
    p.add_argument("--batch", action="store_true", help="read questions from stdin, one JSON line out per question")
    p.add_argument("--jobs", type=positive_int, default=1, help="batch: questions researched at once (default 1)")
    p.add_argument("--unordered", action="store_true", help="batch: print results as they finish")
    p.add_argument("--plain", action="store_true", help="plain progress lines, no live display or colour")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    add_global_args(p)
    return p


def main(argv: list[str], run_flow: RunFlow, commands=None, version: str = "") -> int:
    parser = build_parser(commands, version)
    args = parser.parse_intermixed_args(argv)
    settings = settings_or_exit(args)
    problem = output_problem(args.output)
    if problem:
        err(problem)
        return EXIT_USAGE
    stdin_tty = sys.stdin.isatty()
    question = " ".join(" ".join(args.question).split())
    if args.question and not question:
        err(f'the question is empty; ask one, e.g. {invoked_as()} "What is a sourdough starter?"')
        return EXIT_USAGE

    saved = None
    if args.resume:  # the session's own settings (tools, engine, budgets...) but for the flags given again
        from ..api import resumed_settings
        from ..errors import SessionNotFound
        from ..sessions import SessionStore

        store = SessionStore(settings.data_dir)
        try:
            saved = store.load(args.resume)
        except SessionNotFound as exc:
            err(str(exc))
            return EXIT_USAGE
        given = {k for k, v in vars(args).items() if v is not None}
        settings = resumed_settings(settings, saved.get("settings") or {}, given)
    if not args.resume or args.feedback is not None:
        problem = tools_problem(settings)
        if problem:
            err(problem)
            return EXIT_USAGE
    if args.batch or (not question and not args.resume and not stdin_tty):
        from .batch import run_batch

        return run_batch(args, settings, run_flow)

    from .ui import asked_by, make_ui

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
    ui.asking = asked_by(rt.tools)
    rt.stream_report = interactive and rt.engine.capabilities.streaming

    if saved is not None:
        from ..api import resume_start, start_resumed

        shared, rt.store = saved, store
        start_resumed(rt, shared, settings)
        start = resume_start(shared)  # a run cut short goes on researching; a finished one takes feedback
        if feedback is None and start == "feedback" and not interactive:
            ui.report(shared["final_answer"])
            return EXIT_OK
        problem = tools_problem(settings) if start == "decision" else None
        if problem:
            err(problem)
            return EXIT_USAGE
        if start == "feedback" and interactive and args.feedback is None and shared.get("final_answer"):
            ui.report(shared["final_answer"])  # the report being given feedback on, before the prompt
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
        err(f"interrupted; resume with: {invoked_as()} --resume {shared['session_id']}")
        return interrupted_status(exc)
    finally:
        ui.finish()
    if interactive:  # the way back to this session, said as the user leaves it
        sid = shared["session_id"]
        err(f"session {sid} is saved; reopen it with: {invoked_as()} --resume {sid}")
    problem = write_output(args.output, shared)
    if args.json:
        out_json(result_json(shared))
    if problem:
        sid = shared["session_id"]
        err(f"{problem}; the report stays in session {sid}: {invoked_as()} sessions export {sid} -o FILE")
        return EXIT_USAGE
    if rt.tools.problems:  # the answer is printed, but the data folder had no room for part of the run
        err(rt.tools.problems.line())
        return EXIT_USAGE
    return EXIT_OK
