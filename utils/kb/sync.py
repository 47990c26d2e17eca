"""Keeping the KB's two sides in step: Chroma's vectors and the SQLite lexical index (chunk rows + FTS5).

* The lexical SQLite file (`connect`, `SCHEMA`) is the KB's record of what is stored; `kb_meta`
  holds the embedding the KB was built with and a generation stamp that changes in every write.
* Embedded mode: `repair` on open makes Chroma hold exactly one vector per chunk row (after a crash
  between the two steps of a write, or a lost folder): it re-embeds chunks without a vector and
  deletes vectors without a chunk.
* Server mode: the collection on the server is complete on its own (vectors, documents, metadata);
  the local lexical index is a cache of it. Every write stamps a new generation into the
  collection's metadata (`stamp_server`); when the local stamp differs (another machine wrote, or
  the cache is new) the cache is rebuilt from the server's documents (`rebuild_lexical`). The stamp
  is checked at most every SERVER_SYNC_SECONDS.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import KBError
from .write import CHROMA_BATCH, ChunkRow, insert_chunks

log = logging.getLogger(__name__)

SERVER_SYNC_SECONDS = 5.0
MMAP_BYTES = 256 * 2**20  # the lexical file mapped for reading (not while ingesting: `bounded_memory`)

SCHEMA = """
CREATE TABLE IF NOT EXISTS kb_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sources(
    source TEXT PRIMARY KEY, title TEXT, source_type TEXT, doc_hash TEXT, chunks INTEGER,
    ingested_at TEXT, session_id TEXT, stamp TEXT);
CREATE TABLE IF NOT EXISTS chunks(
    rid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, source TEXT NOT NULL, chunk INTEGER NOT NULL,
    title TEXT, text TEXT, content_hash TEXT, doc_hash TEXT, source_type TEXT, ingested_at TEXT,
    session_id TEXT, section TEXT);
CREATE INDEX IF NOT EXISTS chunks_by_source ON chunks(source);
CREATE INDEX IF NOT EXISTS sources_by_hash ON sources(doc_hash);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(title, body, tokenize='unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_instances USING fts5vocab(chunks_fts, 'instance');
CREATE TABLE IF NOT EXISTS postings(term TEXT, seg INTEGER, rids BLOB, tfs BLOB, PRIMARY KEY(term, seg)) WITHOUT ROWID;
"""


# --------------------------------------------------------------------------------------------
# The lexical side
# --------------------------------------------------------------------------------------------


class ReadOnly(sqlite3.Connection):
    """The lexical file opened for reading only, because it could not be opened to write (a full
    disk: SQLite cannot even size its shared-memory file); `why` says what stopped the writing."""

    why = ""


def connect(file: Path) -> sqlite3.Connection:
    """The lexical SQLite file, created with its schema if new (autocommit: callers open transactions).
    An existing file that cannot be opened to write (a full or read-only disk) is opened to read
    (`ReadOnly`): searching it works; a write then fails, and says why."""
    try:
        return _connect_to_write(file)
    except sqlite3.OperationalError as exc:
        try:
            existing = file.is_file() and file.stat().st_size > 0
        except OSError:
            existing = False
        db = read_only(file) if existing else None
        if db is None:
            raise
        from ..storage import no_room

        db.why = no_room(exc, file.parent) or str(exc)
        # not told here: searching works, and a write that fails says why in the command's one line
        log.debug("the knowledge base file %s is open read-only: %s", file, db.why)
        return db


def _connect_to_write(file: Path) -> sqlite3.Connection:
    file.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(file), check_same_thread=False, isolation_level=None, timeout=30)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA cache_size=-32768")  # 32 MB page cache, 256 MB mmap: faster FTS5 queries
        db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
        db.executescript(SCHEMA)
        if "section" not in {r[1] for r in db.execute("PRAGMA table_info(chunks)")}:
            db.execute("ALTER TABLE chunks ADD COLUMN section TEXT")  # a KB from before heading paths
        if get_meta(db, "postings") is None and not db.execute("SELECT 1 FROM chunks LIMIT 1").fetchone():
            db.execute("INSERT OR REPLACE INTO kb_meta(key, value) VALUES('postings', '1')")  # write.py
        if "stamp" not in {r[1] for r in db.execute("PRAGMA table_info(sources)")}:
            db.execute("ALTER TABLE sources ADD COLUMN stamp TEXT")  # a KB from before file stamps (ingest.py)
    except BaseException:
        db.close()
        raise
    return db


def give_back_memory() -> None:
    """Return the C heap's free pages to the system (glibc's malloc_trim; nothing elsewhere). A write
    batch's analysis and arrays come and go (~100-150 MB at WRITE_BATCH_CHUNKS), and glibc keeps what
    they freed: a bulk ingest grew by what the batches left behind, not by one batch."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, looked up once; None where the C library has none."""
    try:
        import ctypes

        return getattr(ctypes.CDLL(None), "malloc_trim", None)  # the C library the interpreter runs on
    except OSError:  # none to ask: nothing to give back this way
        return None


@contextmanager
def bounded_memory(db: sqlite3.Connection):
    """No memory-mapped reads while inside: a bulk ingest touches the whole index, and its mapped pages
    would count in the process's memory (up to MMAP_BYTES) on top of the page cache."""
    db.execute("PRAGMA mmap_size=0")
    try:
        yield
    finally:
        db.execute(f"PRAGMA mmap_size={MMAP_BYTES}")


def read_only(file: Path) -> ReadOnly | None:
    """`file` opened to read, or None. Read-only first; then immutable, which a full disk still allows
    (no shared-memory file, no lock; it reads what the file holds, not a journal a crash left)."""
    for options in ("mode=ro", "mode=ro&immutable=1"):
        try:
            db = sqlite3.connect(
                f"{file.as_uri()}?{options}",
                uri=True,
                check_same_thread=False,
                isolation_level=None,
                timeout=30,
                factory=ReadOnly,
            )
        except sqlite3.Error:
            continue
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.Error:
            db.close()
    return None


def quick_count(file: Path) -> int:
    """Chunks in the lexical file, read without writing anything (a full disk too); 0 if unreadable."""
    con = read_only(file)
    if con is None:
        return 0
    try:
        return count_chunks(con)
    except sqlite3.Error:
        return 0
    finally:
        con.close()


def get_meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM kb_meta WHERE key=?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    """Store `value` under `key` (nothing is written when it is already there: a KB opened only to
    read, on a full disk, opens all the same)."""
    if get_meta(db, key) == value:
        return
    db.execute("INSERT OR REPLACE INTO kb_meta(key, value) VALUES(?, ?)", (key, value))


def clear_lexical(db: sqlite3.Connection) -> None:
    db.execute("DELETE FROM chunks")
    db.execute("DELETE FROM sources")
    db.execute("DELETE FROM chunks_fts")
    db.execute("DELETE FROM postings")
    db.execute("INSERT OR REPLACE INTO kb_meta(key, value) VALUES('postings', '1')")  # empty: kept from now on


def wipe_lexical(db: sqlite3.Connection, *, keep_meta: bool) -> None:
    """Empty the lexical index in one transaction and forget its generation stamp (all of kb_meta
    unless `keep_meta`)."""
    db.execute("BEGIN IMMEDIATE")
    clear_lexical(db)
    db.execute("DELETE FROM kb_meta WHERE key " + ("= 'generation'" if keep_meta else "!= 'postings'"))
    db.execute("COMMIT")


def count_chunks(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])


# --------------------------------------------------------------------------------------------
# The Chroma side
# --------------------------------------------------------------------------------------------


def make_client(chroma_url: str, folder: Path):
    """A Chroma client: HttpClient for a server URL, else a PersistentClient in `folder`."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if chroma_url:
        scheme, host, port = server_address(chroma_url)
        try:
            return chromadb.HttpClient(host=host, port=port, ssl=scheme == "https", settings=settings)
        except Exception as exc:  # noqa: BLE001 - connection problems become one clear error
            raise KBError(f"cannot reach the Chroma server at {chroma_url}: {exc}") from exc
    folder.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(folder), settings=settings)


def server_address(chroma_url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a Chroma server URL (`http://HOST:PORT`, or `HOST:PORT`); a value that
    is not one is a KBError naming the setting."""
    url = chroma_url.strip()
    parts = urlsplit(url if "//" in url else f"http://{url}")
    try:
        port = parts.port or 8000
    except ValueError:
        port = 0
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or not host or not port or any(c.isspace() or c in "<>\"'" for c in url):
        raise KBError(
            f"--chroma-url / SLEUTH_CHROMA_URL {chroma_url!r} is not a Chroma server address; give http://HOST:PORT"
        )
    return parts.scheme, host, port


def is_not_found(exc: Exception) -> bool:
    """Chroma raises different types for "no such collection"."""
    return "does not exist" in str(exc) or "not found" in str(exc).lower()


def get_collection(client, name: str, chroma_url: str = ""):
    """The collection, or None if it does not exist."""
    try:
        return client.get_collection(name)
    except Exception as exc:  # noqa: BLE001 - Chroma raises different types for "not found"
        if is_not_found(exc):
            return None
        if chroma_url:
            raise KBError(f"cannot use the Chroma server at {chroma_url}: {exc}") from exc
        raise


# --------------------------------------------------------------------------------------------
# Keeping them in step
# --------------------------------------------------------------------------------------------


def repair(col, db: sqlite3.Connection, embed) -> None:
    """Embedded mode: make Chroma hold exactly one vector per chunk row. `embed(pairs)` -> vectors for
    (title, text) pairs."""
    n_lex = count_chunks(db)
    if col.count() == n_lex:
        return
    log.warning("KB vectors and chunks differ (%d vs %d); repairing", col.count(), n_lex)
    have: set[str] = set()
    offset = 0
    while True:
        page = col.get(include=[], limit=10000, offset=offset)
        if not page["ids"]:
            break
        have.update(page["ids"])
        offset += len(page["ids"])
    ids = {r[0] for r in db.execute("SELECT id FROM chunks")}
    orphans = list(have - ids)
    for i in range(0, len(orphans), CHROMA_BATCH):
        col.delete(ids=orphans[i : i + CHROMA_BATCH])
    missing = list(ids - have)
    for i in range(0, len(missing), CHROMA_BATCH):
        part = missing[i : i + CHROMA_BATCH]
        marks = ",".join("?" * len(part))
        rows = db.execute(
            f"SELECT id, coalesce(nullif(section, ''), title), text FROM chunks WHERE id IN ({marks})", part
        ).fetchall()
        vecs = embed([(r[1] or "", r[2] or "") for r in rows])
        col.upsert(ids=[r[0] for r in rows], embeddings=vecs)


def rebuild_lexical(col, db: sqlite3.Connection, generation: str) -> None:
    """Server mode: replace the local lexical index with the collection's documents, stamped `generation`."""
    log.info("rebuilding the local lexical index from the Chroma server")
    db.execute("BEGIN IMMEDIATE")
    try:
        clear_lexical(db)
        offset = 0
        while True:
            page = col.get(include=["documents", "metadatas"], limit=2000, offset=offset)
            if not page["ids"]:
                break
            offset += len(page["ids"])
            rows = [
                ChunkRow.from_server(cid, doc, md)
                for cid, doc, md in zip(page["ids"], page["documents"], page["metadatas"], strict=True)
            ]
            insert_chunks(db, rows)
        db.execute(
            "INSERT OR REPLACE INTO sources(source, title, source_type, doc_hash, chunks, ingested_at, "
            "session_id) SELECT source, max(title), max(source_type), max(doc_hash), count(*), "
            "max(ingested_at), max(session_id) FROM chunks GROUP BY source"
        )
        set_meta(db, "generation", generation)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def stamp_server(client, name: str, embedding: str, generation: str, local_generation: str | None) -> bool:
    """Server mode, after a write's vectors: stamp the collection with the write's new `generation`.
    True if another writer stamped it since this KB last synced (its lexical cache must be rebuilt)."""
    fresh = client.get_collection(name)
    meta = dict(fresh.metadata or {})
    raced = meta.get("sleuth_generation") != local_generation
    meta.update(sleuth_embedding=embedding, sleuth_generation=generation)
    fresh.modify(metadata=meta)
    return raced
