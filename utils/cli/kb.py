"""`sleuth kb ...`: manage the knowledge base from the command line.

    kb ingest PATH... [--sync] [--follow-links]   files and folders (documents, man pages, info), recursive;
                                           --sync also removes files gone from those folders
    kb list [--json]                       the documents: source, kind, chunks, when added
    kb remove PATH_OR_URL... [--yes]       remove documents (a folder: everything under it)
    kb forget --remembered [--older-than 30d]   drop remembered web pages (--feedback: stored feedback)
    kb stats [--json]
    kb search "QUERY" [-k N] [--json] [--mode bm25|vector|fused]
    kb search - [--json]                   one query per line from stdin (one JSON line per query)
    kb reset --yes                         also sets damaged files aside (utils/kb/health.py)

`main(argv)` takes the words after `kb` and returns the exit status: 0 ok, 1 some files could not
be ingested or some documents to remove matched nothing, 2 bad usage or environment (reset, or
removing several documents from a script, without --yes; another embedding, a damaged KB file, a
full disk, an unreachable server).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..config import add_data_args, add_kb_args, load_settings
from .args import invoked_as
from .output import EXIT_USAGE, err, out, out_json


def _parser() -> argparse.ArgumentParser:
    from .args import Parser, accept_global_options, positive_int

    common = Parser(add_help=False)
    add_data_args(common)
    add_kb_args(common)
    p = Parser(prog=f"{invoked_as()} kb", description="Manage Sleuth's knowledge base.")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True
    from ..kb.readers import FILE_TYPES

    read = " ".join(sorted(FILE_TYPES))
    ing = sub.add_parser("ingest", parents=[common], help="add files and folders (recursive)")
    ing.add_argument(
        "paths", nargs="+", metavar="PATH", help=f"files and folders: {read} (each also gzipped), man pages, info"
    )
    ing.add_argument("--sync", action="store_true", help="also remove files that no longer exist under the folders")
    ing.add_argument("--yes", action="store_true", help="--sync: do not ask before removing more than one")
    ing.add_argument("--follow-links", action="store_true", help="follow symlinks that lead out of the folders given")
    st = sub.add_parser("stats", parents=[common], help="what the knowledge base holds")
    st.add_argument("--json", action="store_true", help="print JSON")
    se = sub.add_parser("search", parents=[common], help="search; QUERY '-' reads one query per line from stdin")
    se.add_argument("query", metavar="QUERY")
    se.add_argument("-k", type=positive_int, default=5, help="hits per query (default 5)")
    se.add_argument("--json", action="store_true", help="one JSON line per query")
    se.add_argument("--mode", choices=["bm25", "vector", "fused"], help="ranking (default bm25)")
    rs = sub.add_parser("reset", parents=[common], help="delete everything in the knowledge base")
    rs.add_argument("--yes", action="store_true", help="really delete")
    from .kb_manage import add_parsers

    add_parsers(sub, common)
    for q in sub.choices.values():  # the global settings of an alias (--engine, --tools...) are taken
        accept_global_options(q)
    return p


def _err(msg: str) -> None:
    err(msg, prog="sleuth kb")


def _ingest(kb, paths: list[str], follow_links: bool = False) -> int:
    from ..kb.store import IngestReport

    report: IngestReport
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        console = Console(stderr=True)
        with Progress(
            TextColumn("[bold]ingest"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.description}"),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task("opening the knowledge base", total=None)  # until the first file is read

            def progress(done: int, total: int, path: str) -> None:
                name = path if len(path) <= 50 else "..." + path[-47:]
                if done == total:
                    name = "writing to the knowledge base"  # the last chunks are embedded and written
                bar.update(task, completed=done, total=total, description=name)

            report = kb.ingest_paths(paths, progress=progress, follow_links=follow_links)
    else:
        report = kb.ingest_paths(paths, follow_links=follow_links)
    for path, reason in report.errors:
        _err(f"error: {path}: {reason}")
    passed: dict[str, list[str]] = {}
    for path, reason in report.passed_over:  # loops, duplicates, links out, FIFOs: one line per reason
        passed.setdefault(reason, []).append(path)
    for reason, where in passed.items():
        _err(f"passed over {len(where)} path(s): {reason}, e.g. {where[0]}")
    from ..kb.readers import FILE_TYPES
    from .ingest_notes import empty_folders, kinds_line, skipped_lines

    for line in skipped_lines(report.skipped, list(FILE_TYPES)):
        _err(line)
    if any(Path(p).expanduser().is_dir() for p in paths):
        for folder in empty_folders(paths, report.files):  # the files the ingest's walk found
            _err(f"warning: {folder} holds no file to ingest ({' '.join(sorted(FILE_TYPES))})")
    if report.kinds:
        out(kinds_line(report.kinds))
    out(
        f"{report.files_added} added, {report.files_replaced} replaced, {report.files_unchanged} unchanged, "
        f"{len(report.errors)} failed; {report.chunks_added} chunks added; {kb.count()} chunks in the KB"
    )
    return 1 if report.errors else 0


def _stats(kb, as_json: bool) -> int:
    from .housekeeping import folder_bytes, human_size

    s = kb.stats()
    s["bytes"] = folder_bytes(kb.path)  # this machine's part: with a Chroma server, the lexical cache alone
    if as_json:
        out_json(s)
        return 0
    out(f"chunks:      {s['chunks']} from {s['sources']} source(s)")
    for st, d in s["by_source_type"].items():
        out(f"  {st:9s}  {d['chunks']} chunks, {d['sources']} source(s)")
    if s["vectors"] is None:
        out("vectors:     unavailable (no room on the disk for the vector store to open)")
    else:
        out(f"vectors:     {s['vectors']}{'' if s['in_sync'] else '  (differs from chunks: repaired on next write)'}")
    out(f"embedding:   {s['embedding']}")
    out(f"search mode: {s['search_mode']}")
    out(f"store:       {s['store']}")
    out(f"lexical:     {s['lexical_index']}")
    where = " (the local BM25 cache; the vectors are on the Chroma server)" if kb.chroma_url else ""
    out(f"space:       {human_size(s['bytes'])} in {kb.path}{where}")
    return 0


def _print_hits(query: str, hits, as_json: bool, many: bool, bm25: dict | None = None) -> None:
    """The hits, each with its 0-1 score (the one research uses: the same meaning however many
    chunks match) and, in bm25 mode, the raw BM25 score that ranked it."""
    bm25 = bm25 or {}
    if as_json:
        rows = [{**h.to_dict(), **({"bm25": round(bm25[h.id], 4)} if h.id in bm25 else {})} for h in hits]
        out_json({"query": query, "hits": rows})
        return
    if many:
        out(f"# {query}")
    if not hits:
        out("no hits")
    for h in hits:
        text = " ".join(h.text.split())
        score = f"{h.score:.3f}" + (f", bm25 {bm25[h.id]:.2f}" if h.id in bm25 else "")
        out(f"{h.rank}. [{score}] {h.title or '(untitled)'} -- {h.source} (chunk {h.chunk})")
        out(f"   {text[:240]}{'...' if len(text) > 240 else ''}")
    if many:
        out()


def _search(kb, query: str, k: int, as_json: bool, mode: str | None) -> int:
    if k < 1:
        _err("error: -k must be at least 1")
        return 2
    lexical = (mode or kb.search_mode) == "bm25"

    def show(q: str, many: bool) -> None:
        hits = kb.search(q, k=k, mode=mode)
        _print_hits(q, hits, as_json, many, kb.bm25_scores(q, hits) if lexical and hits else None)

    if query == "-":
        for line in sys.stdin:
            if line.strip():
                show(line.strip(), many=True)
        return 0
    show(query, many=False)
    return 0


def main(argv: list[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.cmd == "reset" and not args.yes:
        _err(f"refusing to delete the knowledge base without --yes ({invoked_as()} kb reset --yes)")
        return EXIT_USAGE
    try:
        settings = load_settings(args)
    except ValueError as exc:
        _err(f"error: {exc}")
        return 2
    from ..kb.store import KBError, KnowledgeBase
    from . import kb_manage

    if args.cmd == "ingest" and not any(Path(p).expanduser().exists() for p in args.paths):
        missing = ", ".join(args.paths)
        _err(f"error: no such file or folder: {missing}; give files or folders to ingest")
        return EXIT_USAGE
    kb = KnowledgeBase.for_settings(settings)
    try:
        if args.cmd == "ingest":
            status = _ingest(kb, args.paths, args.follow_links)
            return (kb_manage.sync(kb, args.paths, args.yes) or status) if args.sync else status
        if args.cmd == "list":
            return kb_manage.list_documents(kb, args.json)
        if args.cmd == "remove":
            return kb_manage.remove(kb, args.targets, args.yes)
        if args.cmd == "forget":
            kind = "feedback" if args.feedback else "web"
            return kb_manage.forget(kb, args.older_than, args.dry_run, args.yes, kind)
        if args.cmd == "stats":
            return _stats(kb, args.json)
        if args.cmd == "search":
            return _search(kb, args.query, args.k, args.json, args.mode)
        from ..kb.health import set_aside

        for moved in set_aside(kb):  # damaged files are kept, out of the way, for a look or a backup
            out(f"damaged file set aside as {moved}")
        kb.reset()
        out(f"knowledge base emptied ({kb.store})")
        return 0
    except KBError as exc:  # a mismatched embedding, an unreachable server, a damaged file, a full disk
        _err(f"error: {exc}")
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - e.g. EmbeddingUnavailable, a Chroma server that went away
        from ..kb.embeddings import EmbeddingUnavailable
        from ..kb.health import explain

        problem = exc if isinstance(exc, EmbeddingUnavailable) else explain(kb, exc)
        if problem is not None:  # a file SQLite or Chroma found damaged, a full disk
            _err(f"error: {problem}")
            return EXIT_USAGE
        raise
    finally:
        kb.close()
