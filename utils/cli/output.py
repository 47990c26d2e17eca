"""The one output path for every command: exit statuses and sanitised printing.

Everything a command prints that came from the web or a file (page text, titles, KB passages,
session reports) goes through `out`, which strips control characters and escape sequences, so no
terminal escape from a page reaches the screen. JSON output is safe by construction (json.dumps
escapes control characters) and goes through `out_json`.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from typing import TextIO

# Exit statuses, the same for every command (README, "Exit status").
EXIT_OK = 0  # done
EXIT_FAILED = 1  # partial failure: some URLs/files failed, a session without a report
EXIT_USAGE = 2  # usage or environment error: bad flag, bad path, missing key, unknown session
EXIT_ITEMS_FAILED = 3  # batch: at least one question produced an error record
EXIT_INTERRUPTED = 130  # Ctrl-C (the session can be resumed)
EXIT_PIPE_CLOSED = 141  # stdout closed by its reader (`| head`): 128 + SIGPIPE, as a Unix tool killed by it
EXIT_TERMINATED = 143  # SIGTERM: 128 + 15; the Ctrl-C path otherwise (the session can be resumed)

# C0 controls except \t \n, DEL, C1 controls, and bidi overrides that can disguise text.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

WRITE_LOCK = threading.Lock()  # one for every writer: batch jobs must not interleave their lines


def on_sigint(signum, frame) -> None:
    """The SIGINT handler main.py installs: Ctrl-C is remembered (utils/interrupt.py: a run then stops
    at its next step even if this KeyboardInterrupt is swallowed mid-step), then raised."""
    from ..interrupt import remember

    remember()
    raise KeyboardInterrupt


def on_sigterm(signum, frame) -> None:
    """The SIGTERM handler main.py installs: a KeyboardInterrupt (Terminated) in the main thread."""
    from ..errors import Terminated

    raise Terminated


def interrupted_status(exc: BaseException) -> int:
    """The exit status for a KeyboardInterrupt: 143 when it came from SIGTERM, 130 for Ctrl-C."""
    from ..errors import Terminated

    return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED


def stdout_closed() -> int:
    """stdout's reader has gone (`| head -1`): point stdout at /dev/null, so that nothing more is
    written and the interpreter's last flush cannot complain, and return the exit status (141)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (a test's StringIO)
        pass
    return EXIT_PIPE_CLOSED


def safe_text(text: str) -> str:
    """Remove control characters and escape sequences (ESC is removed, so nothing is interpreted)."""
    return _CONTROL.sub("", text or "")


def short(text: str, n: int = 80) -> str:
    text = " ".join(safe_text(text).split())
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def write_raw(stream: TextIO, text: str) -> None:
    """Write text even to a terminal whose encoding cannot show every character."""
    try:
        stream.write(text)
    except UnicodeEncodeError:
        enc = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(enc, errors="replace").decode(enc, errors="replace"))


def out(text: str = "", *, end: str = "\n", stream: TextIO | None = None, flush: bool = False) -> None:
    """Print text that may hold web or file content: sanitised, to stdout by default."""
    stream = stream or sys.stdout
    with WRITE_LOCK:
        write_raw(stream, safe_text(str(text)) + end)
        if flush:
            stream.flush()


def json_text(obj, indent: int | None = None) -> str:
    """JSON that is safe on a terminal: json escapes C0 controls; C1 controls and bidi overrides,
    which it leaves raw, are escaped too (they can only occur inside strings, so this stays JSON).
    Bytes that were not UTF-8 (read as lone surrogates) become U+FFFD, so the output is UTF-8."""
    from ..text import valid_text

    text = valid_text(json.dumps(obj, ensure_ascii=False, indent=indent))
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def out_json(obj, *, stream: TextIO | None = None, indent: int | None = None) -> None:
    """One JSON document on one line (or indented), through the same lock as every other line."""
    stream = stream or sys.stdout
    with WRITE_LOCK:
        write_raw(stream, json_text(obj, indent) + "\n")
        stream.flush()


def err(message: str, prog: str = "sleuth") -> None:
    """One line on stderr: `prog: message` (sanitised: messages may quote paths or URLs)."""
    out(f"{prog}: {message}", stream=sys.stderr, flush=True)
