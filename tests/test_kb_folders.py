"""`kb ingest` of folders a user really has: one thousands of levels deep, one that cannot be read.
The files beside them are ingested; each folder that cannot be read is named once; status 1."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, assert_no_network, cli_env

EXIT_PARTIAL = 1
LEVELS = 2100


def make_deep(top, levels: int) -> None:
    """`levels` nested folders `d/d/d/...` under `top` (made relative to an open folder: the whole
    path is longer than the system lets one path be)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir("d", dir_fd=fd)
            below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
    finally:
        os.close(fd)


def remove_deep(top) -> None:
    """Remove what make_deep made, bottom up, without recursion."""
    fds = [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    while True:
        try:
            fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    while len(fds) > 1:
        os.close(fds.pop())  # the deepest folder left, now empty
        os.rmdir("d", dir_fd=fds[-1])
    os.close(fds.pop())


def ingest(tmp_path, *paths, drop_root_powers: bool = False) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(ROOT / "main.py"), "kb", "ingest", *map(str, paths)]
    if drop_root_powers:  # root reads any folder: without these capabilities it obeys the folder's mode
        caps = "-dac_override,-dac_read_search"
        cmd = ["setpriv", "--bounding-set", caps, "--inh-caps", caps, *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=cli_env(tmp_path), cwd=tmp_path, timeout=300)
    assert_no_network(tmp_path)
    return proc


def test_a_folder_thousands_of_levels_deep_does_not_stop_the_files_beside_it(tmp_path):
    docs = tmp_path / "docs"
    (docs / "deep").mkdir(parents=True)
    (docs / "kites.md").write_text("# Kites\n\nA box kite has two open boxes.\n")
    (docs / "zeppelins.md").write_text("# Zeppelins\n\nA zeppelin is a rigid airship.\n")
    make_deep(docs / "deep", LEVELS)
    try:
        proc = ingest(tmp_path, docs)
    finally:
        remove_deep(docs / "deep")
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == EXIT_PARTIAL, proc.stderr
    assert "2 added" in proc.stdout
    named = [line for line in proc.stderr.splitlines() if "cannot read this folder" in line]
    assert len(named) == 1 and "/deep/d/d/" in named[0], proc.stderr


def test_a_folder_without_read_permission_is_named_once(tmp_path):
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip("root reads every folder, and setpriv is not here to drop that power")
    docs = tmp_path / "docs"
    locked = docs / "private"
    locked.mkdir(parents=True)
    (locked / "secret.md").write_text("# Secret\n\nNobody may read this.\n")
    (docs / "kites.md").write_text("# Kites\n\nA box kite has two open boxes.\n")
    locked.chmod(0)
    try:
        proc = ingest(tmp_path, docs, drop_root_powers=os.geteuid() == 0)
    finally:
        locked.chmod(0o755)
    assert proc.returncode == EXIT_PARTIAL, proc.stderr
    assert "1 added" in proc.stdout
    named = [line for line in proc.stderr.splitlines() if str(locked) in line]
    assert len(named) == 1 and "Permission denied" in named[0], proc.stderr
