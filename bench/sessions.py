#!/usr/bin/env python3
"""`sessions list` at scale: writes N session files (default 20,000, each padded to ~31 KB, the
average size of a batch's sessions) into a fresh data folder, then times the command as a user
runs it (`main.py sessions list`, a new process each time):

  * first: no index yet (as after an upgrade): built once from the files
  * then: the index is current (median of --runs), with `--grep`, and after a session was saved
  * the listing alone, in-process (no interpreter start-up), and an empty list (start-up alone)
  * for comparison: reading every file, as `sessions list` did before the index

  .venv/bin/python bench/sessions.py [-n 20000] [--runs 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
from utils.checkout import as_package  # noqa: E402 - the checkout as the `sleuth` package

as_package()

from sleuth.utils.research.loopdata import StopReason  # noqa: E402
from sleuth.utils.research.state import new_shared  # noqa: E402
from sleuth.utils.sessions import SessionStore  # noqa: E402


def write_sessions(folder: Path, n: int, pad: int) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    total = 0
    for i in range(n):
        shared = new_shared(f"Question number {i}: who designed bridge {i % 977} and when?")
        sid = f"20260101-{i:06d}-{i % 4096:03x}"
        shared.update(
            session_id=sid,
            created_at=f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00.000+00:00",
            status="done",
            stop_reason=StopReason.CONFIDENT,
            confidence_score=0.74,
            final_answer="x" * pad,
        )
        data = json.dumps(shared, ensure_ascii=False, indent=1)
        (folder / f"{sid}.json").write_text(data, encoding="utf-8")
        total += len(data)
    return total


def timed(args: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(ROOT / "main.py"), *args], capture_output=True, text=True, env=env)
    secs = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"{args} failed: {proc.stderr}")
    return secs, proc


def read_every_file(folder: Path) -> float:
    """What `sessions list` did before the index: open, parse and restore every session file."""
    from sleuth.utils.research.state import restored

    t0 = time.perf_counter()
    rows = []
    for p in folder.glob("*.json"):
        rows.append(restored(json.loads(p.read_text(encoding="utf-8")))["session_id"])
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20000, help="sessions to write (default 20000)")
    ap.add_argument("--pad", type=int, default=29000, help="report characters per session (default 29000)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per case (median printed)")
    ap.add_argument("--keep", help="write the data folder here and keep it")
    a = ap.parse_args()
    base = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="sleuth-bench-sessions-"))
    data = base / "data"
    env = {**os.environ, "SLEUTH_DATA_DIR": str(data), "NO_COLOR": "1"}
    try:
        t0 = time.perf_counter()
        size = write_sessions(data / "sessions", a.n, a.pad)
        print(f"wrote {a.n} sessions, {size / 2**20:.0f} MB, in {time.perf_counter() - t0:.1f} s")
        first, proc = timed(["sessions", "list"], env)
        print(f"sessions list, no index yet (built once):  {first:.2f} s")
        print(f"  it ends: {proc.stdout.strip().splitlines()[-1]}")
        warm = statistics.median(timed(["sessions", "list"], env)[0] for _ in range(a.runs))
        print(f"sessions list, index current (median of {a.runs}):  {warm:.3f} s")
        grep = statistics.median(timed(["sessions", "list", "--grep", "bridge 42"], env)[0] for _ in range(a.runs))
        print(f"sessions list --grep (median of {a.runs}):  {grep:.3f} s")
        store = SessionStore(data)
        shared = store.load("20260101-000007-007")
        shared["original_query"] = "Edited question 7: who designed it?"
        store.save(shared)  # as a resumed session is saved: the file replaced, its index row updated
        after, proc = timed(["sessions", "list", "--grep", "edited question"], env)
        print(f"sessions list --grep after a session was saved (the folder's names compared):  {after:.3f} s")
        assert "Edited question 7" in proc.stdout, proc.stdout
        inproc = []
        for _ in range(a.runs):
            t1 = time.perf_counter()
            store.listing(limit=20)
            inproc.append(time.perf_counter() - t1)
        print(
            f"the listing alone, in-process, without start-up (median of {a.runs}):  {statistics.median(inproc):.3f} s"
        )
        empty, _ = timed(["sessions", "list"], {**env, "SLEUTH_DATA_DIR": str(base / "empty")})
        print(f"sessions list with no sessions at all (process start-up):  {empty:.3f} s")
        print(f"reading every file instead (the old way, in-process):  {read_every_file(data / 'sessions'):.2f} s")
    finally:
        if not a.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
