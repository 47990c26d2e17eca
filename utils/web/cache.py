"""Persistent cache for search results and fetched pages, in one SQLite file.

Built on the standard library's ``sqlite3`` rather than a cache package:
``diskcache`` (the obvious candidate) has had no release since 2023 and pickles values by
default (CVE-2025-69872), and ``requests-cache`` only caches raw ``requests`` responses, while
Sleuth caches *results* from three different HTTP stacks (ddgs/primp, googleapiclient/httplib2,
requests). What we need is small: JSON values, a TTL with an injectable clock, WAL mode for many
threads and processes, and recovery from a corrupt file.

- Key = namespace (``"duckduckgo"``, ``"google"``, ``"page"`` ...) + a key (a string, or any
  JSON-serialisable value such as a dict of parameters, canonicalised with sorted keys).
- Values are JSON; nothing is ever unpickled or executed.
- Every statement is its own short transaction (autocommit); ``busy_timeout`` waits out other
  writers; WAL lets readers and writers in several processes work at once.
- A file that is not a database, or is damaged, is moved aside (``*.corrupt-<time>``) with a
  warning and a fresh one is created. Any other cache failure is logged and treated as a miss:
  the cache can make Sleuth faster, never make it fail.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..storage import WriteProblems, no_room

log = logging.getLogger(__name__)

DB_NAME = "sleuth-cache.sqlite3"
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_PURGE_EVERY = 200  # writes between sweeps of expired rows

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    created REAL NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (namespace, key)
)
"""


def _is_corruption(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if getattr(exc, "sqlite_errorcode", None) in _CORRUPT_CODES:
        return True
    msg = str(exc).lower()
    return "not a database" in msg or "malformed" in msg


def canonical_key(key: Any) -> str:
    """A stable string for a key: strings as-is, anything else as sorted-key JSON."""
    if isinstance(key, str):
        return key
    return json.dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class Cache:
    """A namespaced key/value cache with a time-to-live, safe across threads and processes.

    ``path`` is a directory (the database is ``DB_NAME`` inside it) or a file path ending in
    ``.sqlite3``/``.sqlite``/``.db``. ``clock`` is injectable so tests can expire entries
    without sleeping.
    """

    def __init__(
        self,
        path: str | os.PathLike | None,
        ttl: float = 86400.0,
        enabled: bool = True,
        clock: Callable[[], float] = time.time,
        problems: WriteProblems | None = None,
    ):
        self.ttl = float(ttl)
        self.problems = problems  # a write that finds no room (a full disk) is recorded there, not logged
        self.enabled = bool(enabled) and path is not None
        self.clock = clock
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._writes = 0
        self.file: Path | None = None
        if not self.enabled or path is None:
            return
        p = Path(path)
        self.file = p if p.suffix.lower() in (".sqlite3", ".sqlite", ".db") else p / DB_NAME
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if not self._no_room(exc):
                log.warning("cache disabled: cannot create %s (%s)", self.file.parent, exc)
            self.enabled = False
            return
        with self._lock:
            self._open()

    @classmethod
    def disabled(cls) -> Cache:
        """A cache that stores nothing and always misses."""
        return cls(None, enabled=False)

    # -- connection management ------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.file), timeout=10.0, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA busy_timeout=10000")
            try:
                conn.execute("PRAGMA journal_mode=WAL")
            except sqlite3.OperationalError as exc:  # e.g. another process holds a lock right now
                if _is_corruption(exc):
                    raise
                log.debug("cache: could not switch to WAL yet: %s", exc)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
        except BaseException:
            conn.close()
            raise
        return conn

    def _open(self) -> None:
        """Open the database; move a corrupt file aside and start over (once)."""
        try:
            self._conn = self._connect()
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                if not self._no_room(exc):
                    log.warning("cache disabled: cannot open %s (%s)", self.file, exc)
                self.enabled = False
                return
            self._quarantine(exc)
            try:
                self._conn = self._connect()
            except sqlite3.Error as exc2:
                log.warning("cache disabled: cannot rebuild %s (%s)", self.file, exc2)
                self.enabled = False

    def _drop_conn(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None

    def _no_room(self, exc: BaseException) -> bool:
        """True when `exc` is a write that found no room and there is a record to keep it in (the
        run says it once, at the end); False to log it as any other failure."""
        reason = no_room(exc)
        if not reason or self.problems is None or self.file is None:
            return False
        self.problems.add("the cache", self.file.parent, reason)
        return True

    def _quarantine(self, exc: BaseException) -> None:
        assert self.file is not None
        self._drop_conn()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        moved = self.file.with_name(f"{self.file.name}.corrupt-{stamp}-{os.getpid()}")
        try:
            os.replace(self.file, moved)
            log.warning("cache file %s is corrupt (%s); moved it to %s and started a new one", self.file, exc, moved)
        except FileNotFoundError:
            pass  # another process already moved it
        except OSError as err:
            log.warning("cache file %s is corrupt (%s) and could not be moved (%s)", self.file, exc, err)
        for suffix in ("-wal", "-shm"):
            side = self.file.with_name(self.file.name + suffix)
            try:
                os.replace(side, moved.with_name(moved.name + suffix))
            except OSError:
                pass

    def _run(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run one short operation; on corruption rebuild and retry once; other errors -> None."""
        if not self.enabled:
            return None
        with self._lock:
            for attempt in range(2):
                if self._conn is None:
                    self._open()
                    if not self.enabled or self._conn is None:
                        return None
                try:
                    return fn(self._conn)
                except sqlite3.DatabaseError as exc:
                    if _is_corruption(exc) and attempt == 0:
                        self._quarantine(exc)
                        continue
                    if not self._no_room(exc):
                        log.warning("cache operation failed (%s); treating as a miss", exc)
                    return None
                except (TypeError, ValueError) as exc:  # value not JSON-serialisable, bad JSON
                    log.warning("cache: %s", exc)
                    return None
        return None

    # -- public API -----------------------------------------------------------------------

    def get(self, namespace: str, key: Any) -> Any | None:
        """The stored value, or None when absent, expired or the cache is disabled."""
        if not self.enabled:
            return None
        k = canonical_key(key)

        def op(conn: sqlite3.Connection):
            row = conn.execute(
                "SELECT created, value FROM entries WHERE namespace=? AND key=?", (namespace, k)
            ).fetchone()
            if row is None:
                return None
            created, value = row
            if self.clock() - created > self.ttl:
                conn.execute("DELETE FROM entries WHERE namespace=? AND key=? AND created=?", (namespace, k, created))
                return None
            return json.loads(value)

        return self._run(op)

    def age(self, namespace: str, key: Any) -> float | None:
        """Seconds since the entry was stored, or None when there is none (for saying a hit's age)."""
        if not self.enabled:
            return None
        k = canonical_key(key)

        def op(conn: sqlite3.Connection):
            row = conn.execute("SELECT created FROM entries WHERE namespace=? AND key=?", (namespace, k)).fetchone()
            return None if row is None else max(0.0, self.clock() - row[0])

        return self._run(op)

    def set(self, namespace: str, key: Any, value: Any) -> None:
        """Store a JSON-serialisable value (silently skipped if it is not serialisable)."""
        if not self.enabled:
            return
        try:
            k = canonical_key(key)
            data = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            log.warning("cache: value for %s not stored (%s)", namespace, exc)
            return
        now = self.clock()

        def op(conn: sqlite3.Connection):
            conn.execute(
                "INSERT OR REPLACE INTO entries(namespace, key, created, value) VALUES (?,?,?,?)",
                (namespace, k, now, data),
            )
            self._writes += 1
            if self._writes % _PURGE_EVERY == 0:
                conn.execute("DELETE FROM entries WHERE created < ?", (now - self.ttl,))

        self._run(op)

    def delete(self, namespace: str, key: Any) -> None:
        k = canonical_key(key)
        self._run(lambda conn: conn.execute("DELETE FROM entries WHERE namespace=? AND key=?", (namespace, k)))

    def clear(self, namespace: str | None = None) -> None:
        if namespace is None:
            self._run(lambda conn: conn.execute("DELETE FROM entries"))
        else:
            self._run(lambda conn: conn.execute("DELETE FROM entries WHERE namespace=?", (namespace,)))

    def __len__(self) -> int:
        n = self._run(lambda conn: conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
        return int(n or 0)

    def close(self) -> None:
        with self._lock:
            self._drop_conn()

    def __repr__(self) -> str:
        state = str(self.file) if self.enabled else "disabled"
        return f"Cache({state}, ttl={self.ttl:g})"


def open_cache(
    data_dir: str | os.PathLike, ttl: float = 86400.0, no_cache: bool = False, problems: WriteProblems | None = None
) -> Cache:
    """The cache Sleuth uses: ``data_dir/cache/``; disabled when ``no_cache``."""
    if no_cache:
        return Cache.disabled()
    return Cache(Path(data_dir) / "cache", ttl=ttl, problems=problems)
