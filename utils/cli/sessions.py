"""`sleuth sessions list|show|export|delete|prune`: saved sessions.

`list` reads the session index (utils/sessions_index.py), not every file, so it stays fast however
many sessions there are. `delete` and `prune` name what they remove and the space freed, ask before
removing more than one (utils/cli/housekeeping.py), and skip a session another process is using.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from datetime import datetime

from ..sessions_index import COLUMNS
from .output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, err, out, out_json, short

DEFAULT_SHOWN = 20
JSON_KEYS = (*COLUMNS, "bytes")  # a listed session: the index's columns and the file's size


def _parser() -> argparse.ArgumentParser:
    from ..config import add_data_args
    from .args import Parser, accept_global_options, invoked_as

    p = Parser(prog=f"{invoked_as()} sessions", description="List, find, show, export and remove sessions.")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    lp = sub.add_parser("list", help="newest first: id, time, stop reason, confidence, question")
    lp.add_argument("-n", type=int, default=DEFAULT_SHOWN, metavar="N", help=f"show N (default {DEFAULT_SHOWN})")
    lp.add_argument("--all", action="store_true", help="show every session")
    lp.add_argument("--grep", metavar="TEXT", help="only sessions whose question holds TEXT (any case)")
    lp.add_argument("--json", action="store_true", help="one JSON line per session")
    sp = sub.add_parser("show", help="the report again (--json for everything)")
    sp.add_argument("id")
    sp.add_argument("--json", action="store_true")
    ep = sub.add_parser("export", help="the report as Markdown: to stdout, or to a file with -o")
    ep.add_argument("id")
    ep.add_argument("-o", "--output", help="write the report to this file instead of stdout")
    dp = sub.add_parser("delete", help="delete sessions by id")
    dp.add_argument("ids", nargs="+", metavar="ID")
    dp.add_argument("--yes", action="store_true", help="do not ask before deleting more than one")
    pp = sub.add_parser("prune", help="delete sessions not used for a while")
    pp.add_argument("--older-than", required=True, metavar="AGE", help="last used longer ago than this: 30d, 12h, 2w")
    pp.add_argument("--dry-run", action="store_true", help="only say what would be deleted")
    pp.add_argument("--yes", action="store_true", help="do not ask before deleting more than one")
    for q in (lp, sp, ep, dp, pp):
        add_data_args(q)
        accept_global_options(q)  # the global settings of an alias (--engine, --tools...) are taken
    return p


def _line(r: dict) -> str:
    conf = r.get("confidence_score") or 0.0
    when = (r.get("created_at") or "")[:19].replace("T", " ")
    reason = r.get("stop_reason") or r.get("status") or ""
    return f"{r['session_id']}  {when}  {reason:<13}  {conf:.2f}  {short(r.get('original_query') or '', 70)}"


def _report_unreadable(bad: list[tuple[str, str]]) -> None:
    if bad:
        names = ", ".join(f"{n} ({short(why, 60)})" for n, why in bad[:3])
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        err(f"{len(bad)} session file(s) cannot be read and are left as they are: {names}{more}")


def _list(store, args) -> int:
    from .housekeeping import human_size

    if args.n < 1:
        err("-n must be at least 1 (or use --all)")
        return EXIT_USAGE
    got = store.listing(limit=None if args.all else args.n, grep=args.grep or "")
    for r in got.rows:
        if args.json:
            out_json({k: r.get(k) for k in JSON_KEYS})
        else:
            out(_line(r))
    _report_unreadable(got.unreadable)
    space = f"{human_size(got.bytes)} in {store.dir}"
    what = f"{got.matched} matching {args.grep!r} (of {got.readable})" if args.grep else f"{got.readable}"
    more = "; -n N or --all for more" if len(got.rows) < got.matched else ""
    footer = f"{len(got.rows)} of {what} session(s) shown, newest first{more}; {space}"
    if not got.readable:
        footer = f"no sessions in {store.dir}" + (f"; {space}" if got.bytes else "")
    out(footer, stream=sys.stderr if args.json else None)
    return EXIT_OK


def _remove(store, targets: list[dict], yes: bool) -> tuple[int, int, int]:
    """Delete the sessions after the one confirmation rule: (deleted, bytes freed, skipped in use)."""
    from .housekeeping import confirm

    why = confirm([_line(r) for r in targets], "sessions", yes)
    if why:
        err(why)
        raise SystemExit(EXIT_USAGE)
    deleted = freed = busy = 0
    for r in targets:
        size = store.delete(r["session_id"])
        if size is None:
            busy += 1
            err(f"skipped {r['session_id']}: in use by another process (try again when it has finished)")
            continue
        deleted, freed = deleted + 1, freed + size
        out(f"deleted {_line(r)}")
    return deleted, freed, busy


def _delete(store, args) -> int:
    from ..errors import SessionNotFound
    from .housekeeping import human_size

    got = store.listing()
    by_id = {r["session_id"]: r for r in got.rows}
    unreadable = {n[:-5]: why for n, why in got.unreadable}
    targets, missing = [], 0
    for given in dict.fromkeys(args.ids):
        try:
            sid = store.resolve(given).stem
        except SessionNotFound as exc:
            err(str(exc))
            missing += 1
            continue
        row = by_id.get(sid) or {"session_id": sid, "original_query": f"(unreadable: {unreadable.get(sid, '?')})"}
        if row not in targets:
            targets.append(row)
    if not targets:
        return EXIT_USAGE
    deleted, freed, busy = _remove(store, targets, args.yes)
    out(f"deleted {deleted} session(s), freed {human_size(freed)}")
    return EXIT_FAILED if missing or busy else EXIT_OK


def _last_used(r: dict) -> datetime | None:
    try:
        return datetime.fromisoformat(r.get("updated_at") or r.get("created_at") or "")
    except ValueError:
        return None


def _prune(store, args) -> int:
    from .housekeeping import cutoff, human_size, parse_age

    try:
        age = parse_age(args.older_than)
    except ValueError as exc:
        err(f"--older-than: {exc}")
        return EXIT_USAGE
    limit = cutoff(age)
    got = store.listing()
    old = [r for r in got.rows if (t := _last_used(r)) is not None and t < limit]
    _report_unreadable(got.unreadable)
    if args.dry_run:
        for r in old:
            out(f"would delete {_line(r)}")
        size = sum(r.get("bytes") or 0 for r in old)
        when = f"{limit:%Y-%m-%d %H:%M} UTC"
        out(f"would delete {len(old)} session(s) last used before {when}, freeing {human_size(size)}")
        return EXIT_OK
    deleted, freed, busy = _remove(store, old, args.yes)
    out(f"pruned {deleted} session(s) last used before {limit:%Y-%m-%d %H:%M} UTC, freed {human_size(freed)}")
    return EXIT_FAILED if busy else EXIT_OK


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from ..errors import SessionNotFound
    from ..sessions import SessionStore
    from .runner import output_problem, settings_or_exit, write_output

    settings = settings_or_exit(args)

    store = SessionStore(settings.data_dir, warn=err, writer=False)
    try:
        if args.cmd == "list":
            return _list(store, args)
        if args.cmd == "delete":
            return _delete(store, args)
        if args.cmd == "prune":
            return _prune(store, args)
        shared = store.load(args.id)
        if args.cmd == "show":
            if args.json:
                from ..research.state import saved_form

                out_json(saved_form(shared), indent=1)
            else:
                out(shared.get("final_answer") or "(this session has no report yet)\n", end="")
            return EXIT_OK
        if not shared.get("final_answer"):
            from .args import invoked_as

            err(f"this session has no report yet; resume it first: {invoked_as()} --resume {args.id}")
            return EXIT_FAILED
        if not args.output:
            out(shared["final_answer"] or "", end="")
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
    except sqlite3.Error as exc:  # a busy or unreadable index (a damaged one is set aside and rebuilt)
        err(f"cannot use the session index {store.index.file}: {exc}; try again, or move it away to rebuild it")
        return EXIT_USAGE
    finally:
        store.close()
