#!/usr/bin/env python3
"""Sleuth — a research agent for the terminal.

  sleuth "QUESTION"                 research a question and print a cited report
  sleuth                            interactive: asks for a question (or reads a batch from stdin)
  sleuth batch < questions.txt      one JSON line per question
  sleuth sessions list|show|export  saved sessions
  sleuth kb ingest|search|stats|reset
  sleuth fetch URL...               the crawler on its own

A table of commands, each `utils/cli/<command>.py main(argv)`. Nothing imports this module, and
only the standard library is imported here: `--help` must stay fast.
"""

from __future__ import annotations

import signal
import sys


def _run_flow(rt, shared: dict, start: str) -> dict:
    from .flow import run_flow  # the graph (pydantic, pocketflow) loads only when a question runs

    return run_flow(rt, shared, start)


def _research(argv: list[str]) -> int:
    from .utils.cli import research

    return research.main(argv, run_flow=_run_flow)


def _batch(argv: list[str]) -> int:
    return _research(["--batch", *argv])


def _sessions(argv: list[str]) -> int:
    from .utils.cli import sessions

    return sessions.main(argv)


def _kb(argv: list[str]) -> int:
    from .utils.cli import kb

    return kb.main(argv)


def _fetch(argv: list[str]) -> int:
    from .utils.cli import fetch

    return fetch.main(argv)


COMMANDS = {"kb": _kb, "fetch": _fetch, "sessions": _sessions, "batch": _batch}
# Exit statuses: the table is utils/cli/output.py (and the README); 130/143 and 141 are set there too.


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = COMMANDS.get(argv[0]) if argv else None
    from .utils.cli.output import on_sigterm

    try:
        signal.signal(signal.SIGTERM, on_sigterm)  # SIGTERM takes the Ctrl-C path
    except ValueError:  # not the main thread (main() called from a test's thread): leave the default
        pass
    try:
        return command(argv[1:]) if command else _research(argv)
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
