"""Session persistence: one JSON file per session, rewritten atomically after every step
(temp file in the same folder, fsync, rename), so a crash loses at most the step in flight.

Beside the files: a metadata index (utils/sessions_index.py) updated in every save, and a lock
file per session in progress (``.locks/ID.lock``, an exclusive flock held from its first save until it is
done or interrupted; the kernel drops it if the process dies). `delete` takes that lock before it
removes anything, so a session another process is still writing is skipped whole, never
half-deleted or brought back by that process's next save."""

from __future__ import annotations

import atexit
import json
import logging
import os
import re
import sqlite3
import tempfile
import threading
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

from .errors import SessionNotFound
from .sessions_index import LOCKS_DIR, SessionIndex, read_session
from .text import valid_text

if TYPE_CHECKING:
    from .research.state import Shared

fcntl: ModuleType | None
try:
    import fcntl
except ImportError:  # not POSIX: sessions are not locked (delete cannot tell one in use)
    fcntl = None

log = logging.getLogger(__name__)

_ID = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write the whole file or nothing (temp file, fsync, rename): a reader never sees half of it.
    Sessions and report files (-o) are written this way. A lone surrogate, which UTF-8 cannot hold
    (a "\\ud800" in a search API's JSON), is written as U+FFFD."""
    text = valid_text(text)
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Listing(NamedTuple):
    rows: list[dict]  # newest first
    matched: int  # sessions that match the search (all readable ones without one)
    readable: int
    bytes: int  # what the sessions folder holds, index and lock files included
    unreadable: list[tuple[str, str]]  # (file name, why)


FINISHED = ("done", "interrupted")  # statuses after which a session is no longer in use


def _try_lock(path: Path) -> int | None:
    """An exclusive lock on `path` (created if missing): its descriptor, or None if another process
    holds it. A lock file unlinked by its holder between our open and flock is opened again."""
    if fcntl is None:
        return -1
    for _ in range(3):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)
    return None


def _unlock(path: Path, fd: int) -> None:
    """Remove the lock file while still holding it, then let go."""
    if fd < 0:
        return
    path.unlink(missing_ok=True)
    os.close(fd)


class SessionStore:
    """The sessions folder. A `writer` store (the one research runs with) holds the lock of every
    session it loads or saves until that session is finished (or the process ends); the `sessions`
    command's store only reads and removes."""

    def __init__(self, data_dir: Path, warn=None, writer: bool = True):
        self.dir = Path(data_dir) / "sessions"
        self.writer = writer
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}  # session id -> descriptor of its lock file
        self._at_exit = False
        self.index = SessionIndex(self.dir, warn=warn)

    def path(self, session_id: str) -> Path:
        if not _ID.match(session_id or ""):
            raise SessionNotFound(f"invalid session id {session_id!r}")
        return self.dir / f"{session_id}.json"

    def _lock_path(self, session_id: str) -> Path:
        return self.dir / LOCKS_DIR / f"{session_id}.lock"

    def _hold(self, sid: str) -> None:
        """Take the session's lock (the caller holds self._lock); another process holding it is logged."""
        if sid in self._held or not self.writer:
            return
        self._lock_path(sid).parent.mkdir(parents=True, exist_ok=True)
        fd = _try_lock(self._lock_path(sid))
        if fd is None:
            log.warning("session %s is in use by another process too", sid)
            return
        if not self._at_exit:
            self._at_exit = True
            atexit.register(self._release_all)  # a session loaded and left unfinished: no stale lock file
        self._held[sid] = fd

    def _release(self, sid: str) -> None:
        if sid in self._held:
            _unlock(self._lock_path(sid), self._held.pop(sid))

    def _unpin(self) -> None:
        """Holding no session any more, the store is not kept alive for exit (nor its index open)."""
        if self._at_exit and not self._held:
            atexit.unregister(self._release_all)
            self._at_exit = False

    def _release_all(self) -> None:
        if self._lock.acquire(timeout=5):  # at exit: never wait on a thread that will not let go
            try:
                for sid in list(self._held):
                    self._release(sid)
            finally:
                self._lock.release()

    def save(self, shared: Shared) -> Path:
        from .research.state import now_iso, saved_form

        shared["updated_at"] = now_iso()
        data = json.dumps(saved_form(shared), ensure_ascii=False, indent=1)
        sid = shared["session_id"]
        target = self.path(sid)
        with self._lock:
            self.dir.mkdir(parents=True, exist_ok=True)
            if shared.get("status") not in FINISHED:
                self._hold(sid)
            write_text_atomic(target, data)
            try:
                self.index.record(sid, shared, target)
            except (sqlite3.Error, OSError) as exc:  # the index is a cache: the next listing catches up
                log.warning("session index not updated: %s", exc)
                self.index.mark_stale()
            if shared.get("status") in FINISHED:
                self._release(sid)
                self._unpin()
        return target

    def load(self, session_id: str) -> Shared:
        """A saved session (a writer store holds it from here: it is about to be resumed)."""
        p = self.resolve(session_id)
        with self._lock:
            self._hold(p.stem)
        try:
            return read_session(p)
        except (json.JSONDecodeError, RecursionError) as exc:  # RecursionError: nested too deeply
            raise SessionNotFound(f"session file {p} is unreadable: {exc}") from exc
        except ValueError as exc:
            raise SessionNotFound(f"session file {p} is not a Sleuth session: {exc}") from exc

    def resolve(self, session_id: str) -> Path:
        """The file of a session id, or of the one session whose id starts with it, or whose random
        last part does (`24ffeb` for 20261122-190212-24ffeb7a)."""
        p = self.path(session_id)
        if p.is_file():
            return p
        files = sorted(self.dir.glob("*.json")) if self.dir.is_dir() else []
        matches = [f for f in files if f.stem.startswith(session_id)]
        matches = matches or [f for f in files if f.stem.rsplit("-", 1)[-1].startswith(session_id)]
        if len(matches) > 1:
            some = ", ".join(f.stem for f in matches[:3]) + (", ..." if len(matches) > 3 else "")
            raise SessionNotFound(f"{session_id!r} names {len(matches)} sessions ({some}); give more of the id")
        if not matches:
            raise SessionNotFound(f"no session {session_id!r} in {self.dir}")
        return matches[0]

    def listing(self, *, limit: int | None = None, grep: str = "") -> Listing:
        """Sessions newest first (at most `limit`, questions holding `grep`), read from the index after
        bringing it up to date; with the folder's size and the files that are not readable sessions."""
        if not self.dir.is_dir():
            return Listing([], 0, 0, 0, [])
        with self._lock:
            size, rows, matched, everything, unreadable = self.index.listing(read_session, limit=limit, grep=grep)
            return Listing(rows, matched, everything, size, unreadable)

    def list(self) -> list[dict]:
        """The saved sessions, newest first; files that are not sessions are left out
        (`sessions show ID` says what is wrong with one)."""
        return self.listing().rows

    def delete(self, session_id: str) -> int | None:
        """Delete a session whole; the bytes freed, or None when another process is using it."""
        path = self.path(session_id)
        with self._lock:
            self._lock_path(session_id).parent.mkdir(parents=True, exist_ok=True)
            fd = _try_lock(self._lock_path(session_id))
            if fd is None:
                return None
            try:
                try:
                    size = path.stat().st_size
                    path.unlink()
                except FileNotFoundError:
                    size = 0
                try:
                    self.index.forget([session_id])
                except sqlite3.Error as exc:  # the next listing drops the row
                    log.warning("session index not updated: %s", exc)
            finally:
                _unlock(self._lock_path(session_id), fd)
            return size

    def close(self) -> None:
        """Close the index and let go of the sessions this store holds: its caller is done with them."""
        with self._lock:
            for sid in list(self._held):
                self._release(sid)
            self._unpin()
            self.index.close()
