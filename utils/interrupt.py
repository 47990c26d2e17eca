"""Ctrl-C, remembered. The SIGINT handler main.py installs (cli/output.on_sigint) raises the
KeyboardInterrupt as usual and also keeps the press here (`remember`): a KeyboardInterrupt that
lands where Python cannot raise it (a finaliser, or a callback that reports "Exception ignored in
..." and goes on) would otherwise be lost, and the run go on to its end. Each research step checks
`interrupted()` before it starts (nodes.SleuthNode), so one Ctrl-C always stops a run, at the
latest at its next step."""

from __future__ import annotations

import threading

INTERRUPTED = threading.Event()  # set on Ctrl-C, never cleared: the process is ending


def remember() -> None:
    INTERRUPTED.set()


def interrupted() -> bool:
    return INTERRUPTED.is_set()
