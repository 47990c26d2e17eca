"""The persistent cache: hits, expiry, corruption recovery, concurrency."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

from sleuth.utils.web.cache import DB_NAME, Cache, open_cache

ROOT = Path(__file__).resolve().parents[1]


class Clock:
    def __init__(self, t: float = 1_000_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_values_survive_a_restart_and_namespaces_are_separate(data_dir):
    c = Cache(data_dir / "cache")
    c.set("page", "https://a.example/", {"title": "A", "links": ["x"], "n": 3})
    c.set("duckduckgo", {"q": "llm agents", "n": 8}, [{"url": "https://a.example/"}])
    c.close()

    again = Cache(data_dir / "cache")
    assert again.get("page", "https://a.example/") == {"title": "A", "links": ["x"], "n": 3}
    assert again.get("google", "https://a.example/") is None
    # dict keys are canonical: parameter order does not matter
    assert again.get("duckduckgo", {"n": 8, "q": "llm agents"}) == [{"url": "https://a.example/"}]
    assert (data_dir / "cache" / DB_NAME).is_file()


def test_entries_expire_after_the_ttl(data_dir):
    clock = Clock()
    c = Cache(data_dir / "cache", ttl=60, clock=clock)
    c.set("page", "k", "v")
    clock.t += 59
    assert c.get("page", "k") == "v"
    clock.t += 2
    assert c.get("page", "k") is None
    # a fresh write starts a new lifetime
    c.set("page", "k", "v2")
    assert c.get("page", "k") == "v2"


def test_disabled_cache_stores_nothing(data_dir):
    c = Cache(data_dir / "cache", enabled=False)
    c.set("page", "k", "v")
    assert c.get("page", "k") is None
    assert not (data_dir / "cache").exists()
    assert Cache.disabled().get("x", "y") is None
    assert open_cache(data_dir, no_cache=True).enabled is False


def test_unserialisable_value_is_skipped_not_fatal(data_dir):
    c = Cache(data_dir / "cache")
    c.set("page", "k", {"bad": object()})
    assert c.get("page", "k") is None
    c.set("page", "k", "fine")
    assert c.get("page", "k") == "fine"
    c.close()


def test_corrupt_file_is_moved_aside_and_rebuilt(data_dir, caplog):
    folder = data_dir / "cache"
    folder.mkdir()
    (folder / DB_NAME).write_bytes(b"this is not a sqlite database" * 200)
    with caplog.at_level(logging.WARNING, logger="sleuth.utils.web.cache"):
        c = Cache(folder)
        c.set("page", "k", "v")
        assert c.get("page", "k") == "v"
        c.close()
    assert any("corrupt" in r.getMessage() for r in caplog.records)
    moved = list(folder.glob(DB_NAME + ".corrupt-*"))
    assert moved and moved[0].read_bytes().startswith(b"this is not")
    # the new file is a real database
    conn = sqlite3.connect(folder / DB_NAME)
    assert conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 1
    conn.close()


def test_file_corrupted_while_open_is_recovered(data_dir, caplog):
    c = Cache(data_dir / "cache")
    c.set("page", "k", "v")
    c.close()
    c._conn = None  # simulate the damage happening under a live instance
    (data_dir / "cache" / DB_NAME).write_bytes(b"\x00garbage" * 1000)
    for side in ("-wal", "-shm"):
        (data_dir / "cache" / (DB_NAME + side)).unlink(missing_ok=True)
    with caplog.at_level(logging.WARNING, logger="sleuth.utils.web.cache"):
        assert c.get("page", "k") is None  # lost, but no exception
        c.set("page", "k", "v2")
    assert c.get("page", "k") == "v2"
    c.close()


def test_concurrent_writers_from_threads(data_dir):
    c = Cache(data_dir / "cache")
    errors: list[BaseException] = []

    def work(n: int):
        try:
            for i in range(60):
                c.set("page", f"t{n}-{i}", {"n": n, "i": i})
                assert c.get("page", f"t{n}-{i}") == {"n": n, "i": i}
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(c) == 8 * 60


_WRITER = """
import sys
sys.path.insert(0, sys.argv[1])
from utils.checkout import as_package
as_package()
from sleuth.utils.web.cache import Cache
c = Cache(sys.argv[2])
tag = sys.argv[3]
for i in range(150):
    c.set("page", f"{tag}-{i}", {"i": i})
    assert c.get("page", f"{tag}-{i}") == {"i": i}
print("ok")
"""


def test_two_processes_write_at_once(data_dir):
    folder = data_dir / "cache"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(ROOT), str(folder), tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert out.strip() == "ok"
    c = Cache(folder)
    assert len(c) == 300
    assert c.get("page", "a-149") == {"i": 149} and c.get("page", "b-0") == {"i": 0}
