"""`sessions list` whatever happened to the index or the session files behind Sleuth's back: it lists
what reads, names what does not, and never ends in a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

from test_sessions_cli import ids_listed, write_session

from tests.test_disk_full import fill, full_disk  # noqa: F401 - the fixture: a real tmpfs to fill


def listed_ids(proc) -> list[str]:
    return ids_listed("\n".join(proc.stdout.splitlines()[:-1]))


def test_an_index_folder_that_is_a_file_is_set_aside(cli, tmp_path):
    sessions = tmp_path / "data" / "sessions"
    write_session(sessions, "d1", "What is a kite?", days_ago=1)
    write_session(sessions, "d2", "Who flew the first kite?")
    (sessions / ".index").write_text("not a folder")
    proc = cli("sessions", "list")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert listed_ids(proc) == ["d2", "d1"]
    kept = list(sessions.glob(".index.damaged-*"))
    assert len(kept) == 1 and kept[0].read_text() == "not a folder"


def test_a_truncated_and_an_all_nul_session_are_named_not_listed(cli, tmp_path):
    sessions = tmp_path / "data" / "sessions"
    write_session(sessions, "e1", "What is a kite?", days_ago=2)
    cut = write_session(sessions, "e2", "What is a box kite?", days_ago=1)
    nul = write_session(sessions, "e3", "Who flew the first kite?")
    assert listed_ids(cli("sessions", "list")) == ["e3", "e2", "e1"]  # indexed while whole
    size = cut.stat().st_size
    with open(cut, "r+b") as fh:  # damaged in place: the folder's own time does not move
        fh.truncate(size // 2)
    nul.write_bytes(b"\0" * nul.stat().st_size)
    proc = cli("sessions", "list")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert listed_ids(proc) == ["e1"]
    named = [line for line in proc.stderr.splitlines() if "cannot be read" in line]
    assert len(named) == 1 and "e2.json" in named[0] and "e3.json" in named[0], proc.stderr
    assert cut.exists() and nul.exists()  # left on disk


DAMAGER = """
import sys, time
path, stop = sys.argv[1], sys.argv[2]
import os
while not os.path.exists(stop):
    try:
        with open(path, "r+b") as fh:
            fh.write(b"garbage, not a database " * 8)
    except OSError:
        pass
"""


def test_listing_while_the_index_is_being_damaged_always_lists(cli, tmp_path):
    sessions = tmp_path / "data" / "sessions"
    for i in range(5):
        write_session(sessions, f"f{i}", f"Question {i}", days_ago=5 - i)
    assert cli("sessions", "list").returncode == 0
    stop = tmp_path / "stop"
    damager = subprocess.Popen([sys.executable, "-c", DAMAGER, str(sessions / ".index" / "index.sqlite"), str(stop)])
    try:
        for _ in range(12):
            proc = cli("sessions", "list")
            assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
            assert listed_ids(proc) == ["f4", "f3", "f2", "f1", "f0"], proc.stdout + proc.stderr
    finally:
        stop.touch()
        damager.wait(timeout=30)


def test_sessions_list_on_a_full_disk_lists(cli, full_disk):  # noqa: F811 - the fixture
    data = full_disk / "data"
    write_session(data / "sessions", "g1", "What is a kite?", days_ago=1)
    write_session(data / "sessions", "g2", "Who flew the first kite?")
    fill(full_disk)
    proc = cli("sessions", "list", data_dir=data)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert listed_ids(proc) == ["g2", "g1"]
    os.remove(full_disk / "filler")
