"""What the commands that look after stored data share (sessions delete/prune, kb remove/forget,
kb ingest --sync): sizes for people, ages (`--older-than 30d`), the space a folder uses, and the
one rule for asking before a removal."""

from __future__ import annotations

import os
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from .output import out

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([hdw]?)\s*$", re.I)
_UNIT = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1), "": timedelta(days=1)}
SHOWN_BEFORE_ASKING = 10  # names listed in a confirmation prompt; --dry-run lists them all


def human_size(n: int) -> str:
    """1536 -> '1.5 KB' (powers of 1024, the way `du -h` counts)."""
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"  # pragma: no cover - the loop returns


def parse_age(text: str) -> timedelta:
    """'30d', '12h', '2w' (a bare number is days) as a timedelta; ValueError with what to write."""
    m = _AGE.match(text or "")
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"bad age {text!r}: give a number of hours, days or weeks, e.g. 12h, 30d or 2w")
    return float(m.group(1)) * _UNIT[m.group(2).lower()]


def cutoff(age: timedelta) -> datetime:
    return datetime.now(UTC) - age


def folder_bytes(path: Path) -> int:
    """Bytes of every file under `path` (0 if it does not exist); symlinks are not followed."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def confirm(names: list[str], what: str, yes: bool) -> str | None:
    """The one rule before a removal: one item goes ahead; more than one needs --yes, or a "y" typed at
    a terminal (the first names are shown first). Returns None to go ahead, else why not (for stderr)."""
    if yes or len(names) <= 1:
        return None
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return f"refusing to remove {len(names)} {what} without --yes (not asked: stdin is not a terminal)"
    for name in names[:SHOWN_BEFORE_ASKING]:
        out(f"  {name}", stream=sys.stderr)
    if len(names) > SHOWN_BEFORE_ASKING:
        out(f"  ... and {len(names) - SHOWN_BEFORE_ASKING} more (--dry-run lists them all)", stream=sys.stderr)
    out(f"Remove these {len(names)} {what}? [y/N] ", stream=sys.stderr, end="", flush=True)
    answer = sys.stdin.readline()  # Ctrl-C here ends the command (status 130) with nothing removed
    if answer.strip().lower() in ("y", "yes"):
        return None
    return f"nothing removed ({len(names)} {what} kept)"
