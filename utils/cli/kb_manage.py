"""`sleuth kb list | remove | forget` and the removing half of `kb ingest --sync`: what the knowledge
base holds, and taking documents out of it (utils/kb/manage.py). Each removal names what it removes;
more than one at once asks first (utils/cli/housekeeping.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, err, out, out_json, short


def add_parsers(sub, common: argparse.ArgumentParser) -> None:
    ls = sub.add_parser("list", parents=[common], help="the documents: source, kind, chunks, when added")
    ls.add_argument("--json", action="store_true", help="one JSON line per document")
    rm = sub.add_parser("remove", parents=[common], help="remove documents by path or URL (a folder: all under it)")
    rm.add_argument("targets", nargs="+", metavar="PATH_OR_URL")
    rm.add_argument("--yes", action="store_true", help="do not ask before removing more than one")
    fg = sub.add_parser("forget", parents=[common], help="drop remembered web pages (or stored feedback)")
    what = fg.add_mutually_exclusive_group(required=True)
    what.add_argument("--remembered", action="store_true", help="the web pages read while researching")
    what.add_argument("--feedback", action="store_true", help="feedback that older versions stored as documents")
    fg.add_argument("--older-than", metavar="AGE", help="only those stored longer ago than this: 30d, 12h, 2w")
    fg.add_argument("--dry-run", action="store_true", help="only say what would be dropped")
    fg.add_argument("--yes", action="store_true", help="do not ask before dropping more than one")


def _err(msg: str) -> None:
    err(msg, prog="sleuth kb")


def _when(added: str) -> str:
    return added[:16].replace("T", " ")


def _name(d) -> str:
    return f"{d.kind_label} {short(d.source, 200)} ({d.chunks} chunks)"


def list_documents(kb, as_json: bool) -> int:
    from ..kb.manage import KINDS, documents

    docs = documents(kb)
    for d in docs:
        if as_json:
            out_json(d.to_dict())
        else:
            out(f"{_when(d.added)}  {d.kind_label:<15}  {d.chunks:>6} chunks  {short(d.source, 200)}")
    kinds = ", ".join(f"{label}: {sum(d.kind == k for d in docs)}" for k, label in KINDS.items())
    summary = f"{len(docs)} document(s) ({kinds}), {sum(d.chunks for d in docs)} chunks"
    out(summary, stream=sys.stderr if as_json else None)
    return EXIT_OK


def remove_documents(kb, docs, yes: bool, verb: str = "removed") -> int:
    """Remove `docs` after the one confirmation rule; prints what went. Returns an exit status."""
    from .housekeeping import confirm

    if not docs:
        return EXIT_OK
    why = confirm([_name(d) for d in docs], "documents", yes)
    if why:
        _err(why)
        return EXIT_USAGE
    kb.remove([d.source for d in docs])
    for d in docs:
        out(f"{verb} {_name(d)}")
    out(f"{verb} {len(docs)} document(s), {sum(d.chunks for d in docs)} chunks; {kb.count()} chunks left in the KB")
    return EXIT_OK


def remove(kb, targets: list[str], yes: bool) -> int:
    from ..kb.manage import documents, matching

    docs = documents(kb)
    chosen: dict[str, object] = {}
    unmatched = 0
    for t in targets:
        found = matching(docs, t)
        if not found:
            unmatched += 1
            _err(f"nothing in the knowledge base comes from {t} (kb list shows what does)")
        chosen.update((d.source, d) for d in found)
    status = remove_documents(kb, list(chosen.values()), yes)
    return status or (EXIT_FAILED if unmatched else EXIT_OK)


def forget(kb, older_than: str | None, dry_run: bool, yes: bool, kind: str = "web") -> int:
    """Drop the remembered pages (kind "web") or the stored feedback (kind "feedback")."""
    from ..kb.manage import documents
    from ..kb.manage import older_than as stored_before
    from .housekeeping import cutoff, parse_age

    what = "remembered page(s)" if kind == "web" else "stored feedback document(s)"
    pages = [d for d in documents(kb) if d.kind == kind]
    if older_than:
        try:
            pages = stored_before(pages, cutoff(parse_age(older_than)))
        except ValueError as exc:
            _err(f"--older-than: {exc}")
            return EXIT_USAGE
    if dry_run:
        for d in pages:
            out(f"would forget {_name(d)}")
        out(f"would forget {len(pages)} {what}, {sum(d.chunks for d in pages)} chunks")
        return EXIT_OK
    if not pages:
        out(f"no {what} to forget")
        return EXIT_OK
    return remove_documents(kb, pages, yes, verb="forgot")


def sync(kb, paths: list[str], yes: bool) -> int:
    """After `kb ingest --sync`: remove the ingested files that no longer exist under the given folders
    (folders that exist: a folder that is missing altogether, e.g. an unmounted drive, is left alone)."""
    from ..kb.manage import documents, missing_under

    folders = [p for p in paths if Path(p).is_dir()]
    if not folders:
        return EXIT_OK
    docs = documents(kb)
    gone: dict[str, object] = {}
    for f in folders:
        gone.update((d.source, d) for d in missing_under(docs, f))
    if not gone:
        out("--sync: every ingested file under the folder(s) still exists")
        return EXIT_OK
    return remove_documents(kb, list(gone.values()), yes)
