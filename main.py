#!/usr/bin/env python3
"""Sleuth — a research agent for the terminal.

  sleuth "QUESTION"                 research a question and print a cited report
  sleuth ask "QUESTION"             the same, unambiguously (a question may start with a command word)
  sleuth                            interactive: asks for a question (or reads a batch from stdin)
  sleuth batch < questions.txt      one JSON line per question
  sleuth sessions list|show|export|delete|prune            saved sessions
  sleuth kb ingest|search|list|remove|forget|stats|reset  the knowledge base
  sleuth fetch URL...               the crawler on its own
  sleuth mcp [--allow-ingest DIR]   an MCP server over stdio (research, feedback, kb_search, ...)

A table of commands, each `utils/cli/<module>.py main(argv)`: a new command is one entry in
COMMANDS. Options may come before or after the command word (utils/cli/args.py moves them).
Nothing imports this module, and only the standard library is imported here: `--help` must stay fast.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from typing import NamedTuple

# One BLAS thread, fixed before numpy loads: the offline engine's sentence model (utils/engine/semantic.py)
# multiplies small matrices, where threads waiting on a busy core were 3-5x slower; and changing the
# thread count at run time while batch jobs were inside BLAS hung a `--jobs 4` batch.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


class Command(NamedTuple):
    module: str  # utils/cli/<module>.py, whose main(argv) runs it
    summary: str  # one line in `sleuth --help`
    preset: tuple[str, ...] = ()  # arguments put before the user's
    flow: bool = False  # main(argv, run_flow=...): the command runs the research graph


COMMANDS = {
    "ask": Command("research", "research a question (the same as sleuth QUESTION)", ("--ask",), flow=True),
    "batch": Command("research", "questions from stdin, one JSON line out per question", ("--batch",), flow=True),
    "sessions": Command("sessions", "saved sessions: list, show, export, delete, prune"),
    "kb": Command("kb", "the knowledge base: ingest, search, list, remove, forget, stats, reset"),
    "fetch": Command("fetch", "fetch web pages and print their main text"),
    "mcp": Command("mcp_server", "serve research to MCP clients (Claude, Cursor, ...) over stdio", flow=True),
}
# Exit statuses: the table is utils/cli/output.py (and the README); 130/143 and 141 are set there too.


def _run_flow(rt, shared: dict, start: str) -> dict:
    from .flow import run_flow  # the graph (pydantic, pocketflow) loads only when a question runs

    return run_flow(rt, shared, start)


def main(argv: list[str] | None = None) -> int:
    from .utils.cli.args import split_command

    argv = list(sys.argv[1:] if argv is None else argv)
    word, rest = split_command(argv, COMMANDS)
    command = COMMANDS[word] if word else COMMANDS["ask"]
    module = importlib.import_module(f".utils.cli.{command.module}", __package__)
    extra = {"run_flow": _run_flow, "commands": COMMANDS} if command.flow else {}
    if command.flow:
        extra["version"] = getattr(sys.modules.get(__package__), "__version__", "unknown")
    from .utils.cli.output import on_sigint, on_sigterm

    try:
        signal.signal(signal.SIGINT, on_sigint)  # Ctrl-C, remembered: never lost in a finaliser
        signal.signal(signal.SIGTERM, on_sigterm)  # SIGTERM takes the Ctrl-C path
    except ValueError:  # not the main thread (main() called from a test's thread): leave the default
        pass
    try:
        return module.main([*(command.preset if word else ()), *rest], **extra)
    except KeyboardInterrupt as exc:
        from .utils.cli.output import interrupted_status

        print("\nsleuth: interrupted", file=sys.stderr)
        return interrupted_status(exc)
    except BrokenPipeError:  # stdout's reader is gone (`| head`): stop quietly
        from .utils.cli.output import stdout_closed

        return stdout_closed()


if __name__ == "__main__":
    if not __package__:  # `python main.py` in a checkout: run it as the `sleuth` package
        from utils.checkout import as_package

        as_package()
        from sleuth.main import main
    sys.exit(main())
