"""The research command: one question (a report, or --json), --resume/--feedback, or a batch
from stdin. The flow itself is handed in by main.py (utilities never import the graph)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from typing import Any

from .args import invoked_as, mistyped_command
from .output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, err, interrupted_status, out_json
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


def build_parser(commands=None, version: str = "", batch: bool = False) -> argparse.ArgumentParser:
    """The research command's parser; `batch`: as `sleuth batch` shows it (its own usage and help)."""
    from ..config import add_global_args
    from .args import Parser, invoked_as, positive_int

    prog = invoked_as()
    listing = "\n".join(f"  {name:<9} {c.summary}" for name, c in (commands or {}).items())
    hide = argparse.SUPPRESS
    if batch:
        p = Parser(
            prog=f"{prog} batch",
            usage=f"{prog} batch [OPTIONS] < QUESTIONS",
            description='Research the questions on stdin (one a line, or JSON lines {"id": ..., "query": ...}; '
            "blank lines and # comments are skipped) and print one JSON line per question, in input order.",
        )
    else:
        p = Parser(
            prog=prog,
            usage=f"{prog} [OPTIONS] QUESTION | {prog} COMMAND [OPTIONS] ...",
            description="Research a question on the web and in your knowledge base; print a cited report.\n\n"
            f"commands (each has --help; options go before or after the command word):\n{listing}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    p.add_argument(
        "question", nargs="*", help=hide if batch else "the question (omit to be asked, or pipe questions for a batch)"
    )
    p.add_argument("--ask", action="store_true", help=hide)  # `sleuth ask WORDS`: the words are a question
    p.add_argument("--version", action="version", version=f"sleuth {version}".strip())
    only_one = {  # options of one question, not of a batch: left out of `batch --help`
        "json": "print one JSON object instead of the report",
        "resume": "reopen a saved session (with --feedback: re-research it)",
        "feedback": "feedback for --resume: re-research the session with it, non-interactively",
        "batch": "read questions from stdin, one JSON line out per question",
    }
    shown = {k: hide if batch else v for k, v in only_one.items()}
    p.add_argument("--json", action="store_true", help=shown["json"])
    p.add_argument("-o", "--output", help="also write the final report (Markdown) to this file")
    p.add_argument("--resume", metavar="ID", help=shown["resume"])
    p.add_argument("--feedback", help=shown["feedback"])
    p.add_argument("--batch", action="store_true", help=shown["batch"])
    p.add_argument("--jobs", type=positive_int, default=1, help="batch: questions researched at once (default 1)")
    p.add_argument("--unordered", action="store_true", help="batch: print results as they finish")
    p.add_argument("--plain", action="store_true", help="plain progress lines, no live display or colour")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    add_global_args(p)
    return p


def main(argv: list[str], run_flow: RunFlow, commands=None, version: str = "") -> int:
    parser = build_parser(commands, version, batch=bool(argv) and argv[0] == "--batch")
    args = parser.parse_intermixed_args(argv)
    typo = None if args.ask else mistyped_command(args.question, commands or {})
    if typo:  # `sleuth sesions list`: a command word mistyped is never researched
        word = args.question[0]
        err(
            f"unknown command {word!r}; did you mean {typo}? "
            f'(to research it as a question: {invoked_as()} ask "{" ".join(args.question)}")'
        )
        return EXIT_USAGE
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
    if every_tool_failed(shared):  # the report says so; a script must not take it for an answer
        err("every research step failed, so the report answers nothing; see its journey for why")
        return EXIT_FAILED
    return EXIT_OK


def every_tool_failed(shared: Mapping[str, Any]) -> bool:
    """The run took tool steps and the tool of every one failed (no network, every backend down): not
    a run whose tools worked and found nothing, nor one the time limit cut short."""
    from ..research.loopdata import StopReason
    from ..research.report import tool_failed

    steps = shared.get("research_history") or []
    return bool(steps) and all(tool_failed(h) for h in steps) and shared.get("stop_reason") != StopReason.TIME_LIMIT
