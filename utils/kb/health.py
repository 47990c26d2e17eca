"""The knowledge base's files on disk: a damaged file is named with the way out, a full disk is told
once, and `kb reset --yes` sets damaged files aside so that the KB can start again.

* Damage: the lexical SQLite file (`kb/lexical.sqlite`) or the embedded Chroma store's database
  (`kb/chroma/chroma.sqlite3`) does not start with SQLite's header (garbage written over it), or
  SQLite/Chroma report it malformed. Every KB command then ends with one line naming the file and
  saying what to do (`kb reset --yes`, then ingest the files again), status 2; research goes on
  without the KB and says so (utils/cli/runner.py).
* Rebuild: there is no second copy of the chunks' text (the embedded Chroma store keeps vectors
  only), so a damaged KB is not repaired in place: `kb reset --yes` moves the damaged file (with
  its -wal/-shm companions) or the damaged Chroma folder aside as `NAME.damaged-<time>`, for a
  look or a backup tool, and starts empty; `kb ingest` then puts the files back.
* Damaged vectors only (the Chroma store; the lexical file intact): `kb search` and research go on
  with the lexical index alone and say the vectors are unavailable (`vectors_problem`).
* No room: a write that fails for lack of space (utils/storage.py) becomes KBNoRoom, a KBError
  whose message names the KB folder, and is recorded for the end of a research run. Reading needs
  no room: the lexical file is opened read-only when it cannot be opened to write (utils/kb/sync.py).
* A Chroma server that is not there (`--chroma-url`): a bad address or one where nothing answers is
  one line naming the server and the setting (`server_problem`, checked before research); a server
  that goes away mid-command is the same line (`explain`), not a traceback.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import KBDamaged, KBError, KBNoRoom
from ..storage import no_room
from . import sync

SQLITE_HEADER = b"SQLite format 3\x00"
_DAMAGE_TEXT = ("not a database", "malformed", "file is encrypted", "disk image")


def not_a_database(path: Path) -> str | None:
    """Why the SQLite file at `path` is damaged, or None (absent, empty, or with SQLite's header)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return "a folder where a database file belongs"
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if head and head != SQLITE_HEADER:
        return "not a database"
    return None


def chroma_file(kb) -> Path | None:
    """The embedded Chroma store's database file (None for a Chroma server)."""
    return None if kb.chroma_url else kb.path / "chroma" / "chroma.sqlite3"


def damaged(file: Path, why: str) -> KBDamaged:
    return KBDamaged(
        f"the knowledge base file {file} is damaged ({why}); run `sleuth kb reset --yes` to set it aside and "
        f"start an empty knowledge base, then `sleuth kb ingest` your files again"
    )


def check_lexical(file: Path) -> None:
    why = not_a_database(file)
    if why:
        raise damaged(file, why)


def check_chroma(kb) -> None:
    file = chroma_file(kb)
    why = not_a_database(file) if file is not None else None
    if why and file is not None:
        raise damaged(file, why)


def problem(kb) -> KBError | None:
    """Why research cannot use `kb` at all, as the error to show, or None: its lexical file is
    damaged, or its Chroma server cannot be reached (reads a few bytes or asks one heartbeat; no
    chromadb). Damaged vectors alone are `vectors_problem`: the lexical index still answers."""
    if kb.chroma_url:
        return server_problem(kb.chroma_url)
    try:
        check_lexical(kb.lexical_file)
    except KBDamaged as exc:
        return exc
    return None


def vectors_problem(kb) -> KBDamaged | None:
    """The embedded Chroma store's damage, or None: searching by words goes on without it."""
    try:
        check_chroma(kb)
    except KBDamaged as exc:
        return exc
    return None


def unreachable(chroma_url: str, reason: str) -> KBError:
    return KBError(
        f"cannot reach the Chroma server at {chroma_url} ({reason}); start it, or point --chroma-url / "
        "SLEUTH_CHROMA_URL at one that runs"
    )


def server_problem(chroma_url: str, timeout: float = 5.0) -> KBError | None:
    """Why the Chroma server at `chroma_url` cannot be used (not an address; nothing answers its
    heartbeat), or None."""
    import urllib.error
    import urllib.request

    try:
        scheme, host, port = sync.server_address(chroma_url)
    except KBError as exc:
        return exc
    try:
        with urllib.request.urlopen(f"{scheme}://{host}:{port}/api/v2/heartbeat", timeout=timeout):
            return None
    except urllib.error.HTTPError:  # something answers: an older server, a proxy; the client says more
        return None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        return unreachable(chroma_url, str(getattr(reason, "strerror", None) or reason))


def _lost_server(exc: BaseException | None) -> str | None:
    """What an exception from talking to a Chroma server says, when it means the server is gone
    (refused, reset, closed mid-answer, timed out), or None."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, (ConnectionError, TimeoutError)) or type(exc).__module__.split(".")[0] in (
            "httpx",
            "httpcore",
        ):
            return str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
        if "could not connect to" in str(exc).lower():
            return "connection refused"
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def explain(kb, exc: BaseException) -> KBError | None:
    """A one-line KBError for an exception from SQLite or Chroma that means a damaged file or a full
    disk, or None for anything else."""
    if isinstance(exc, KBError):
        return exc
    lost = _lost_server(exc) if kb.chroma_url else None
    if lost:
        return unreachable(kb.chroma_url, lost)
    reason = no_room(exc)
    if reason:
        return no_room_error(kb, reason)
    text = str(exc).lower()
    if any(t in text for t in _DAMAGE_TEXT):
        chroma = chroma_file(kb)
        from_chroma = not isinstance(exc, sqlite3.Error) and chroma is not None
        file = chroma if from_chroma and chroma is not None else kb.lexical_file
        return damaged(file, str(exc).strip().splitlines()[0][:120])
    return None


def no_room_error(kb, reason: str) -> KBNoRoom:
    problems = getattr(kb, "write_problems", None)
    if problems is not None:
        problems.add("the knowledge base", kb.path, reason)
    return KBNoRoom(
        f"cannot write the knowledge base in {kb.path}: {reason}; free some space there, or give another --data-dir"
    )


@contextmanager
def writing(kb) -> Iterator[None]:
    """Around a KB write: a failure for lack of room becomes KBNoRoom (recorded for the run's end)."""
    try:
        yield
    except KBError:
        raise
    except Exception as exc:
        reason = no_room(exc)
        why = getattr(getattr(kb, "_db", None), "why", "")  # opened read-only (sync.ReadOnly): that is why
        if why and isinstance(exc, sqlite3.Error):
            reason = why
        if reason is None:
            lost = _lost_server(exc) if kb.chroma_url else None
            if lost:
                raise unreachable(kb.chroma_url, lost) from exc
            raise
        raise no_room_error(kb, reason) from exc


def guarded(write: Callable) -> Callable:
    """Decorates the KB's one write method (`KnowledgeBase._write`) with `writing`."""

    @functools.wraps(write)
    def guarded_write(kb, *args, **kwargs):
        with writing(kb):
            return write(kb, *args, **kwargs)

    return guarded_write


def connect(kb) -> sqlite3.Connection:
    """The KB's lexical SQLite file, opened: a damaged file is named (KBDamaged), a full disk told."""
    check_lexical(kb.lexical_file)
    with writing(kb):
        return sync.connect(kb.lexical_file)


def client(kb):
    """The Chroma client (embedded store or server): a damaged embedded store named, a full disk told."""
    check_chroma(kb)
    with writing(kb):
        return sync.make_client(kb.chroma_url, kb.path / "chroma")


def vector_count(kb) -> int | None:
    """The vectors `kb` holds, or None when its Chroma store cannot open for lack of room (Chroma
    writes as it opens): `kb stats` on a full disk still reads the lexical side."""
    try:
        col = kb._open()
        return 0 if col is None else col.count()  # None: a KB that keeps no vectors (--embedding none)
    except KBNoRoom:
        return None


def set_aside(kb) -> list[Path]:
    """Move the KB's damaged files aside (`NAME.damaged-<time>`); returns where they went."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    moved: list[Path] = []
    lexical = kb.lexical_file
    if not_a_database(lexical):
        for suffix in ("", "-wal", "-shm"):
            f = lexical.with_name(lexical.name + suffix)
            if f.exists():
                target = f.with_name(f"{f.name}.damaged-{stamp}")
                os.replace(f, target)
                moved.append(target)
    chroma = chroma_file(kb)
    if chroma is not None and not_a_database(chroma):
        folder = chroma.parent
        target = folder.with_name(f"{folder.name}.damaged-{stamp}")
        os.replace(folder, target)
        moved.append(target)
    return moved
