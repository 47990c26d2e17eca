#!/usr/bin/env python3
"""Sleuth — a research agent for the terminal.

  sleuth "QUESTION"                 research a question and print a cited report
  sleuth                            interactive: asks for a question (or reads a batch from stdin)
  sleuth batch < questions.txt      one JSON line per question
  sleuth sessions list|show|export  saved sessions
  sleuth kb ingest|search|stats|reset
  sleuth fetch URL...               the crawler on its own

Only the standard library and light modules are imported here: `--help` must stay fast.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

SUBCOMMANDS = ("kb", "fetch", "sessions", "batch")
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def build_parser() -> argparse.ArgumentParser:
    from utils.config import add_common_args

    p = argparse.ArgumentParser(
        prog="sleuth",
        description="Research a question on the web and in your knowledge base; print a cited report.",
        epilog="Other commands: sleuth batch | sessions list|show|export | kb ingest|search|stats|reset | "
        "fetch URL...  (each has --help)",
    )
    p.add_argument("question", nargs="*", help="the question (omit to be asked, or pipe questions for a batch)")
    p.add_argument(
        "--engine",
        choices=["auto", "gemini", "offline"],
        help="LLM engine (default auto: gemini if GEMINI_API_KEY is set, else offline)",
    )
    p.add_argument("--confidence", type=float, help="stop when confidence reaches this (default 0.7)")
    p.add_argument("--max-iterations", type=int, help="research step budget per round (default 8)")
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


def _settings_or_exit(args):
    from utils.config import load_settings

    try:
        return load_settings(args)
    except ValueError as exc:
        print(f"sleuth: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from exc


def make_runtime(settings, ui, feedback=None, store=True):
    from utils.llm import EngineError, make_engine
    from utils.runtime import Runtime, Tools
    from utils.sessions import SessionStore

    try:
        engine = make_engine(settings, warn=ui.warn)
    except EngineError as exc:
        print(f"sleuth: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from exc
    return Runtime(
        settings=settings,
        engine=engine,
        ui=ui,
        tools=Tools(settings),
        store=SessionStore(settings.data_dir) if store else None,
        feedback=feedback,
    )


def run_flow(rt, shared: dict, start: str) -> dict:
    """Run the graph from `start`; on Ctrl-C leave a resumable session and re-raise."""
    import warnings

    from flow import build_flow

    warnings.filterwarnings("ignore", message="Flow ends: 'done'")
    t0 = time.monotonic()
    base = shared.get("elapsed_ms", 0)
    try:
        build_flow(rt, start).run(shared)
    except KeyboardInterrupt:
        if shared.get("status") != "awaiting_feedback":  # a report was shown: resume at the feedback prompt
            shared["status"] = "interrupted"
        shared["pending"] = {}
        shared["elapsed_ms"] = base + int((time.monotonic() - t0) * 1000)
        rt.checkpoint(shared)
        raise
    shared["elapsed_ms"] = base + int((time.monotonic() - t0) * 1000)
    rt.checkpoint(shared)
    return shared


def result_json(shared: dict) -> dict:
    return {
        "query": shared.get("original_query"),
        "answer": shared.get("answer"),
        "confidence": shared.get("confidence_score"),
        "stop_reason": shared.get("stop_reason"),
        "iterations": shared.get("iteration_count"),
        "sources": [
            {"n": s["n"], "title": s.get("title"), "url": s.get("url"), "tool": s.get("tool"), "kind": s.get("kind")}
            for s in shared.get("sources", [])
        ],
        "session_id": shared.get("session_id"),
        "elapsed_ms": shared.get("elapsed_ms"),
        "engine": shared.get("engine"),
        "tokens": shared.get("token_usage"),
    }


def new_session(rt, query: str) -> dict:
    from utils.state import new_shared

    return new_shared(query, settings=rt.settings.public_dict(), engine=rt.engine.name)


def write_output(path: str | None, shared: dict) -> None:
    if path and shared.get("final_answer"):
        from pathlib import Path

        Path(path).write_text(shared["final_answer"], encoding="utf-8")


def research_main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    settings = _settings_or_exit(args)
    stdin_tty = sys.stdin.isatty()
    question = " ".join(args.question).strip()

    if args.batch or (not question and not args.resume and not stdin_tty):
        from utils.batch import run_batch

        return run_batch(args, settings)

    from utils.ui import make_ui

    interactive = stdin_tty and sys.stdout.isatty() and not args.json
    ui = make_ui(plain=args.plain, quiet=args.quiet or False, show_report=not args.json)
    feedback = None
    if args.feedback is not None:
        if not args.resume:
            parser.error("--feedback needs --resume ID")
        feedback = _one_shot(args.feedback)
    elif interactive:
        feedback = ui.ask_feedback
    rt = make_runtime(settings, ui, feedback=feedback)
    rt.stream_report = interactive and rt.engine.name == "gemini"

    if args.resume:
        from utils.sessions import SessionNotFound

        try:
            shared = rt.store.load(args.resume)
        except SessionNotFound as exc:
            print(f"sleuth: {exc}", file=sys.stderr)
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
            print("sleuth: no question given", file=sys.stderr)
            return EXIT_USAGE
        shared, start = new_session(rt, question), "query"

    try:
        run_flow(rt, shared, start)
    except KeyboardInterrupt:
        ui.finish()
        print(f"\nsleuth: interrupted; resume with: sleuth --resume {shared['session_id']}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        ui.finish()
    write_output(args.output, shared)
    if args.json:
        print(json.dumps(result_json(shared), ensure_ascii=False))
    return EXIT_OK


def _one_shot(text: str):
    given = []

    def feedback(_prep):
        if given:
            return None
        given.append(text)
        return text

    return feedback


def sessions_main(argv: list[str]) -> int:
    from utils.config import add_common_args

    p = argparse.ArgumentParser(prog="sleuth sessions", description="List, show and export saved sessions.")
    sub = p.add_subparsers(dest="cmd", required=True)
    lp = sub.add_parser("list", help="id, time, question, stop reason, confidence")
    lp.add_argument("--json", action="store_true")
    sp = sub.add_parser("show", help="the report again (--json for everything)")
    sp.add_argument("id")
    sp.add_argument("--json", action="store_true")
    ep = sub.add_parser("export", help="write the report to a Markdown file")
    ep.add_argument("id")
    ep.add_argument("-o", "--output", required=True)
    for q in (lp, sp, ep):
        add_common_args(q)
    args = p.parse_args(argv)
    settings = _settings_or_exit(args)
    from utils.sessions import SessionNotFound, SessionStore
    from utils.ui import safe_text

    store = SessionStore(settings.data_dir)
    try:
        if args.cmd == "list":
            rows = store.list()
            if args.json:
                for r in rows:
                    print(json.dumps(r, ensure_ascii=False))
                return EXIT_OK
            for r in rows:
                conf = r.get("confidence_score") or 0.0
                when = (r.get("created_at") or "")[:19].replace("T", " ")
                reason = r.get("stop_reason") or r.get("status")
                question = safe_text(r.get("original_query") or "")[:70]
                print(f"{r['session_id']}  {when}  {reason:<13}  {conf:.2f}  {question}")
            if not rows:
                print(f"(no sessions in {store.dir})", file=sys.stderr)
            return EXIT_OK
        shared = store.load(args.id)
        if args.cmd == "show":
            if args.json:
                print(json.dumps(shared, ensure_ascii=False, indent=1))
            else:
                sys.stdout.write(safe_text(shared.get("final_answer") or "(this session has no report yet)\n"))
            return EXIT_OK
        if not shared.get("final_answer"):
            print("sleuth: this session has no report yet; resume it first", file=sys.stderr)
            return EXIT_FAILED
        write_output(args.output, shared)
        print(f"wrote {args.output}", file=sys.stderr)
        return EXIT_OK
    except SessionNotFound as exc:
        print(f"sleuth: {exc}", file=sys.stderr)
        return EXIT_USAGE


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "kb":
            from utils.kb_cli import main as kb_main

            return kb_main(argv[1:])
        if argv and argv[0] == "fetch":
            from utils.fetch_cli import main as fetch_main

            return fetch_main(argv[1:])
        if argv and argv[0] == "sessions":
            return sessions_main(argv[1:])
        if argv and argv[0] == "batch":
            return research_main(["--batch", *argv[1:]])
        return research_main(argv)
    except KeyboardInterrupt:
        print("\nsleuth: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
