"""`sleuth sessions list|show|export`: saved sessions."""

from __future__ import annotations

import sys

from .output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, err, out, out_json


def main(argv: list[str]) -> int:
    from ..config import add_data_args
    from .args import Parser, invoked_as

    p = Parser(prog=f"{invoked_as()} sessions", description="List, show and export saved sessions.")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    lp = sub.add_parser("list", help="id, time, question, stop reason, confidence")
    lp.add_argument("--json", action="store_true")
    sp = sub.add_parser("show", help="the report again (--json for everything)")
    sp.add_argument("id")
    sp.add_argument("--json", action="store_true")
    ep = sub.add_parser("export", help="the report as Markdown: to stdout, or to a file with -o")
    ep.add_argument("id")
    ep.add_argument("-o", "--output", help="write the report to this file instead of stdout")
    for q in (lp, sp, ep):
        add_data_args(q)
    args = p.parse_args(argv)
    from ..errors import SessionNotFound
    from ..sessions import SessionStore
    from .runner import output_problem, settings_or_exit, write_output

    settings = settings_or_exit(args)

    store = SessionStore(settings.data_dir)
    try:
        if args.cmd == "list":
            rows = store.list()
            if args.json:
                for r in rows:
                    out_json(r)
                return EXIT_OK
            for r in rows:
                conf = r.get("confidence_score") or 0.0
                when = (r.get("created_at") or "")[:19].replace("T", " ")
                reason = r.get("stop_reason") or r.get("status")
                question = " ".join((r.get("original_query") or "").split())[:70]
                out(f"{r['session_id']}  {when}  {reason:<13}  {conf:.2f}  {question}")
            if not rows:
                out(f"(no sessions in {store.dir})", stream=sys.stderr)
            return EXIT_OK
        shared = store.load(args.id)
        if args.cmd == "show":
            if args.json:
                out_json(shared, indent=1)
            else:
                out(shared.get("final_answer") or "(this session has no report yet)\n", end="")
            return EXIT_OK
        if not shared.get("final_answer"):
            err(f"this session has no report yet; resume it first: {invoked_as()} --resume {args.id}")
            return EXIT_FAILED
        if not args.output:
            out(shared["final_answer"], end="")
            return EXIT_OK
        problem = output_problem(args.output) or write_output(args.output, shared)
        if problem:
            err(problem)
            return EXIT_USAGE
        err(f"wrote {args.output}")
        return EXIT_OK
    except SessionNotFound as exc:
        err(str(exc))
        return EXIT_USAGE
