"""A small SQLite index of session metadata (``sessions/index.sqlite``), so listing, finding and
pruning sessions never reads every session file.

The session files stay the record; the index is a cache of their metadata keyed by file name, with
each file's size and modification time. Every save updates its row in one transaction
(`record`); `listing` compares the index with the folder (see there: usually one stat call) and
reads only the files that are new since, so sessions copied in by hand, written by an older Sleuth
or deleted outside Sleuth are picked up. A missing index is
rebuilt from the files; a damaged one is set aside (renamed, never deleted) and rebuilt. A file
that is not a readable session gets a row with its error, so it is reported, not read again and
again, and never deleted by a prune. An index that cannot be kept on disk (a full or read-only
disk, a file where its folder belongs, one damaged again as soon as it is rebuilt) is built in
memory for the listing at hand: listing never depends on writing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .research.state import Shared

INDEX_DIR, INDEX_NAME = ".index", "index.sqlite"  # in a folder of its own: its writes leave the sessions
# folder's modification time alone
LOCKS_DIR = ".locks"  # lock files of the sessions in use (utils/sessions.py)
STALE = "stale"  # a file in INDEX_DIR: a save could not update the index
RACY_NS = 2_000_000_000  # a folder time this recent may hide a change made in the same tick
VERSION = 1  # PRAGMA user_version: an index of another layout is rebuilt, not read
COLUMNS = (
    "session_id",
    "created_at",
    "updated_at",
    "original_query",
    "stop_reason",
    "confidence_score",
    "status",
    "iteration_count",
)
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS sessions(
    name TEXT PRIMARY KEY, session_id TEXT, created_at TEXT, updated_at TEXT, original_query TEXT,
    stop_reason TEXT, confidence_score REAL, status TEXT, iteration_count INTEGER,
    bytes INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, error TEXT);
CREATE INDEX IF NOT EXISTS sessions_by_created ON sessions(created_at);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER);
PRAGMA user_version={VERSION};
"""


class FileState(NamedTuple):
    bytes: int
    mtime_ns: int


def row_of(shared: Mapping[str, Any]) -> dict:
    """The indexed metadata of a session (the shared store, or a restored session file)."""
    return {k: shared.get(k) for k in COLUMNS}


class SessionIndex:
    """The index of the session files in `folder`. The caller serialises calls within a process;
    SQLite's own locking covers other processes."""

    def __init__(self, folder: Path, warn: Callable[[str], None] | None = None) -> None:
        self.folder = Path(folder)
        self.file = self.folder / INDEX_DIR / INDEX_NAME
        self.warn = warn or (lambda _msg: None)
        self._db: sqlite3.Connection | None = None
        self.in_memory = False  # the index file cannot be used: this process keeps one in memory

    # ---- opening ---------------------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        if self._db is None and self.in_memory:
            db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            db.executescript(SCHEMA)
            db.create_function("fold", 1, lambda t: (t or "").casefold(), deterministic=True)
            self._db = db
        if self._db is None:
            self._make_folder()
            db = sqlite3.connect(str(self.file), check_same_thread=False, isolation_level=None, timeout=30)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version not in (0, VERSION):
                    db.executescript("DROP TABLE IF EXISTS sessions; DROP TABLE IF EXISTS meta;")
                db.executescript(SCHEMA)
                db.create_function("fold", 1, lambda t: (t or "").casefold(), deterministic=True)
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def _make_folder(self) -> None:
        """The index's folder; a file in its place is set aside (renamed, never deleted) first."""
        folder = self.file.parent
        if folder.exists() and not folder.is_dir():
            stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
            kept = folder.with_name(f"{INDEX_DIR}.damaged-{stamp}")
            os.replace(folder, kept)
            self.warn(f"{folder} was a file, not the session index's folder; kept it as {kept.name}")
        folder.mkdir(parents=True, exist_ok=True)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def set_aside(self, exc: Exception) -> Path:
        """The index file is damaged: keep it beside, under another name, and start a new one."""
        self.close()
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        kept = self.file.with_name(f"{INDEX_NAME}.damaged-{stamp}")
        os.replace(self.file, kept)
        for extra in ("-wal", "-shm"):  # its journal goes with it
            if Path(f"{self.file}{extra}").exists():
                os.replace(f"{self.file}{extra}", f"{kept}{extra}")
        self.warn(f"the session index {self.file} is damaged ({exc}); kept it as {kept.name} and rebuilt it")
        return kept

    # ---- writing ---------------------------------------------------------------------------------

    def _upsert(self, db: sqlite3.Connection, name: str, meta: dict, state: FileState, error: str | None) -> None:
        db.execute(
            "INSERT OR REPLACE INTO sessions(name, session_id, created_at, updated_at, original_query, stop_reason, "
            "confidence_score, status, iteration_count, bytes, mtime_ns, error) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
            (name, *(meta.get(k) for k in COLUMNS), state.bytes, state.mtime_ns, error),
        )

    def record(self, name: str, shared: Mapping[str, Any], path: Path) -> None:
        """After a save: the session's row, from the shared store and the file just written."""
        st = path.stat()
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        try:
            self._upsert(db, name, row_of(shared), FileState(st.st_size, st.st_mtime_ns), None)
            db.execute("COMMIT")
        except BaseException:
            _rollback(db)
            raise

    def forget(self, names: list[str]) -> None:
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("DELETE FROM sessions WHERE name=?", [(n,) for n in names])
            db.execute("COMMIT")
        except BaseException:
            _rollback(db)
            raise

    # ---- reading ---------------------------------------------------------------------------------

    def names(self) -> set[str]:
        """The session files' stems: one pass over the folder's names, nothing statted or opened."""
        try:
            entries = os.scandir(self.folder)
        except FileNotFoundError:
            return set()
        with entries:
            return {
                e.name[:-5]
                for e in entries
                if e.name.endswith(".json") and not e.name.startswith(".") and e.is_file(follow_symlinks=False)
            }

    def _state(self, name: str) -> FileState | None:
        try:
            st = os.stat(self.folder / f"{name}.json")
        except OSError:
            return None
        return FileState(st.st_size, st.st_mtime_ns)

    def other_bytes(self) -> int:
        """Bytes beside the session files: this index (and any damaged one set aside) and lock files."""
        total = 0
        for sub in (self.file.parent, self.folder / LOCKS_DIR):
            try:
                with os.scandir(sub) as entries:
                    total += sum(e.stat(follow_symlinks=False).st_size for e in entries if e.is_file())
            except OSError:
                continue
        return total

    def mark_stale(self) -> None:
        """A save could not update its row: the next listing compares every file's size and time."""
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            (self.file.parent / STALE).touch()
        except OSError:
            pass

    def _reconcile(self, read: Callable[[Path], Mapping[str, Any]]) -> int:
        """Bring the index in line with the folder; `read(path)` restores a session or raises
        ValueError or OSError. Returns the bytes the sessions folder holds.

        Every save renames a file into the folder, which moves the folder's modification time, and
        updates its own row. So when the folder's time has not moved since the last comparison nothing
        was added or removed and the folder is not read at all; when it has, the names are compared
        (files added or removed outside Sleuth are read or dropped). Sizes and times of every file are
        compared only after a save failed to update the index (`mark_stale`) -- 20,000 stat calls
        cost more than the rest of a listing. (A folder time less than RACY_NS old is not trusted: a
        change in the same clock tick would not move it.)"""
        seen = os.stat(self.folder).st_mtime_ns
        db = self._conn()
        marker = self.file.parent / STALE
        full = not self.in_memory and marker.exists()
        row = db.execute("SELECT value FROM meta WHERE key='folder_mtime_ns'").fetchone()
        if full or row is None or row[0] != seen:
            self._compare(self.names(), read, full)
            if full:
                marker.unlink(missing_ok=True)
            if time.time_ns() - seen > RACY_NS:
                db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('folder_mtime_ns', ?)", (seen,))
        return int(db.execute("SELECT coalesce(sum(bytes), 0) FROM sessions").fetchone()[0]) + self.other_bytes()

    def _compare(self, names: set[str], read: Callable[[Path], Mapping[str, Any]], full: bool) -> None:
        db = self._conn()
        known = {n for (n,) in db.execute("SELECT name FROM sessions")}
        gone = list(known - names)
        fresh = list(names - known)
        if full:
            was = {n: FileState(b, m) for n, b, m in db.execute("SELECT name, bytes, mtime_ns FROM sessions")}
            fresh += [n for n in names & known if self._state(n) != was[n]]
        if not gone and not fresh:
            return
        if len(fresh) > 500:
            self.warn(f"indexing {len(fresh)} session files (once)")
        rows: list[tuple[str, dict, FileState, str | None]] = []
        for name in fresh:
            state = self._state(name)
            if state is None:  # deleted since the folder was read
                continue
            try:
                rows.append((name, row_of(read(self.folder / f"{name}.json")), state, None))
            except (OSError, ValueError, RecursionError) as exc:
                reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
                rows.append((name, {"session_id": name}, state, reason[:300]))
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany("DELETE FROM sessions WHERE name=?", [(n,) for n in gone])
            for row in rows:
                self._upsert(db, *row)
            db.execute("COMMIT")
        except BaseException:
            _rollback(db)
            raise

    def listing(
        self, read: Callable[[Path], Mapping[str, Any]], *, limit: int | None = None, grep: str = ""
    ) -> tuple[int, list[dict], int, int, list[tuple[str, str]]]:
        """(bytes the folder holds, `rows(limit, grep)`, `unreadable()`), with the index brought in
        line with the folder first and every row shown checked against its file (a file changed in
        place -- truncated, overwritten -- moves no folder time: it is read again, and named when it
        no longer reads). A damaged index is set aside and rebuilt; one that cannot be written or
        keeps being damaged is rebuilt in memory (said once)."""
        attempts = 0
        while True:
            try:
                size = self._reconcile(read)
                for _ in range(3):
                    rows, matched, everything = self.rows(limit=limit, grep=grep)
                    if not self._refresh(rows, read):
                        break
                for r in rows:
                    del r["mtime_ns"]
                return size, rows, matched, everything, self.unreadable()
            except (sqlite3.Error, OSError) as exc:
                attempts += 1
                if self.in_memory or _busy(exc):
                    raise
                if isinstance(exc, sqlite3.DatabaseError) and damaged(exc) and attempts < 3:
                    try:
                        if self.file.exists():
                            self.set_aside(exc)
                            continue
                    except OSError:
                        pass
                self.close()
                self.in_memory = True
                self.warn(f"the session index {self.file} cannot be used ({exc}); listing from the session files")

    def _refresh(self, rows: list[dict], read: Callable[[Path], Mapping[str, Any]]) -> bool:
        """Read again the files among `rows` whose size or time is not the one indexed; True if any."""
        changed: list[tuple[str, dict, FileState, str | None]] = []
        for r in rows:
            state = self._state(r["name"])
            if state is not None and state != FileState(r["bytes"], r["mtime_ns"]):
                try:
                    changed.append((r["name"], row_of(read(self.folder / f"{r['name']}.json")), state, None))
                except (OSError, ValueError, RecursionError) as exc:
                    reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
                    changed.append((r["name"], {"session_id": r["name"]}, state, reason[:300]))
        if changed:
            db = self._conn()
            db.execute("BEGIN IMMEDIATE")
            try:
                for row in changed:
                    self._upsert(db, *row)
                db.execute("COMMIT")
            except BaseException:
                _rollback(db)
                raise
        return bool(changed)

    def rows(self, *, limit: int | None = None, grep: str = "") -> tuple[list[dict], int, int]:
        """(readable sessions newest first, whose question holds `grep` in any case, at most `limit`;
        how many match; how many readable sessions there are)."""
        where, params = "WHERE error IS NULL", list[object]()
        db = self._conn()
        everything = db.execute(f"SELECT count(*) FROM sessions {where}").fetchone()[0]
        if grep:  # the matches are read whole (one pass of the function) and counted here
            where += " AND instr(fold(original_query), ?) > 0"
            params.append(grep.casefold())
        sql = (
            f"SELECT name, {', '.join(COLUMNS)}, bytes, mtime_ns FROM sessions {where} "
            "ORDER BY created_at DESC, name DESC"
        )
        if limit is not None and not grep:
            sql += " LIMIT ?"
            params.append(limit)
        out = []
        for r in db.execute(sql, params):
            d = dict(zip(("name", *COLUMNS, "bytes", "mtime_ns"), r, strict=True))
            d["session_id"] = d["name"]  # the file's name is what show, resume and delete take
            out.append(d)
        matched = len(out) if grep else everything
        if limit is not None:
            out = out[:limit]
        return out, matched, everything

    def unreadable(self) -> list[tuple[str, str]]:
        """(file name, why) of the session files that could not be read."""
        return [
            (f"{n}.json", e)
            for n, e in self._conn().execute("SELECT name, error FROM sessions WHERE error IS NOT NULL")
        ]


def _rollback(db: sqlite3.Connection) -> None:
    """Undo the open transaction, if any: a Ctrl-C that lands just after COMMIT must stay a Ctrl-C,
    not become "cannot rollback - no transaction is active" (which a save would log and go on)."""
    if db.in_transaction:
        db.execute("ROLLBACK")


def _busy(exc: BaseException) -> bool:
    """Another process holds the index: wait or try again, nothing to rebuild."""
    return getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def damaged(exc: sqlite3.Error) -> bool:
    """The error says the file is not a (sound) database, as opposed to busy, locked or read-only."""
    return getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def read_session(path: Path) -> Shared:
    """A session file restored (ValueError or OSError when it cannot be)."""
    from .research.state import restored

    return restored(json.loads(path.read_text(encoding="utf-8")))
