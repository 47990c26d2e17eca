"""Writes that fail because the disk has no room (full, over quota, read-only): told once, on one line.

A full data folder must not end a run with a traceback, nor lose an answer already computed: the
session store, the cache and the knowledge base record what they could not write in one
`WriteProblems` (shared by a run's batch jobs, held by `runtime.Tools`) and go on; when the run is
over the command prints the answer, then one line naming the folder and the problem, and exits 2.

`no_room(exc)` is the one place that recognises such a failure, whichever layer raised it: an
OSError (ENOSPC, EDQUOT, EROFS, EFBIG), SQLite's "database or disk is full" / "readonly database",
or Chroma's errors that wrap them.
"""

from __future__ import annotations

import errno
import os
import shutil
import threading
from pathlib import Path

_NO_ROOM_ERRNOS = {errno.ENOSPC: "no space left on device", errno.EROFS: "the file system is read-only"}
_NO_ROOM_ERRNOS[errno.EDQUOT] = "the disk quota is exceeded"
_NO_ROOM_ERRNOS[errno.EFBIG] = "the file is too large for the file system"
_NO_ROOM_TEXT = (  # what SQLite (and Chroma, which wraps it) says
    ("disk is full", "no space left on device"),
    ("no space left", "no space left on device"),
    ("quota exceeded", "the disk quota is exceeded"),
    ("readonly database", "the file system is read-only"),
    ("read-only file system", "the file system is read-only"),
)


FULL_BELOW = 64 * 1024  # a file system with less room than this left is full (SQLite cannot size its files)


def no_room(exc: BaseException | None, folder: Path | None = None) -> str | None:
    """Why `exc` (or what caused it) is a write that found no room, in words; None if it is not. With
    the `folder` written to, SQLite's bare "disk I/O error" (it says no more when it cannot size its
    shared-memory file) is a full disk when that folder's file system has no room left."""
    if folder is not None and "disk i/o error" in str(exc).lower():
        try:
            if shutil.disk_usage(folder).free < FULL_BELOW:
                return _NO_ROOM_ERRNOS[errno.ENOSPC]
        except OSError:
            pass
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, OSError) and exc.errno in _NO_ROOM_ERRNOS:
            return _NO_ROOM_ERRNOS[exc.errno]
        text = str(exc).lower()
        for needle, reason in _NO_ROOM_TEXT:
            if needle in text:
                return reason
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def _common_folder(folders: list[Path]) -> Path:
    try:
        return Path(os.path.commonpath([str(f) for f in folders]))
    except ValueError:  # different drives
        return folders[0]


class WriteProblems:
    """What could not be written, where and why; thread-safe, so batch jobs share one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, tuple[Path, str]] = {}  # what -> (folder, reason), the first failure of each

    def add(self, what: str, folder: str | os.PathLike, reason: str) -> bool:
        """Record that `what` ("the session", "the cache"...) could not be written in `folder`;
        True the first time for `what`."""
        with self._lock:
            if what in self._items:
                return False
            self._items[what] = (Path(folder), reason)
            return True

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._items)

    def line(self) -> str:
        """One line for everything recorded (empty when nothing was), e.g. "could not save the
        session and the cache in /data: no space left on device; free some space there or ..."."""
        with self._lock:
            items = dict(self._items)
        if not items:
            return ""
        whats = list(items)
        where = _common_folder([folder for folder, _ in items.values()])
        reasons = list(dict.fromkeys(reason for _, reason in items.values()))
        said = whats[0] if len(whats) == 1 else ", ".join(whats[:-1]) + " and " + whats[-1]
        return (
            f"could not save {said} in {where}: {'; '.join(reasons)}; free some space there, or give another --data-dir"
        )
