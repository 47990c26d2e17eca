"""A data folder that cannot be used gives one line naming it and what to do, exit 2, for every
command — never a traceback, and nothing half-written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import ROOT, assert_no_network, cli_env

COMMANDS = [
    ["--tools", "kb", "Who wrote Dune?"],
    ["batch"],
    ["sessions", "list"],
    ["kb", "stats"],
    ["kb", "ingest", "README.md"],
    ["kb", "search", "dune"],
    ["fetch", "http://127.0.0.1:9/"],
]


def _check(proc: subprocess.CompletedProcess, folder: Path) -> None:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(folder) in lines[0] and "--data-dir" in lines[0]
    assert proc.stdout == ""


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_data_folder_under_a_regular_file(args, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file")
    folder = blocker / "sleuth"
    env = cli_env(tmp_path, SLEUTH_DATA_DIR=str(folder))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), *args],
        input="Who wrote Dune?\n", capture_output=True, text=True, env=env, cwd=ROOT, timeout=60,
    )  # fmt: skip
    _check(proc, folder)
    assert blocker.read_text() == "a file"


@pytest.fixture
def readonly_folder():
    """A folder the CLI cannot write to (as root, the CLI runs without the capabilities that let root
    write anywhere: see the test)."""
    base = Path(tempfile.mkdtemp(prefix="sleuth-ro-"))
    folder = base / "data"
    folder.mkdir()
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)
    shutil.rmtree(base)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_data_folder_without_write_permission(args, readonly_folder, tmp_path):
    # Root writes anywhere, so as root the CLI runs without the capabilities that let it: still root,
    # so it reads the checkout and the interpreter wherever they are (a clone in a private 0700
    # folder, a Python under /root), where `nobody` could not even open main.py.
    as_user = []
    if os.geteuid() == 0:
        as_user = [shutil.which("setpriv"), "--bounding-set=-all", "--inh-caps=-all"]
        assert as_user[0], "setpriv (util-linux) is needed to drop root's capabilities for this test"
    env = cli_env(tmp_path, SLEUTH_DATA_DIR=str(readonly_folder), HOME=str(readonly_folder))
    proc = subprocess.run(
        [*as_user, sys.executable, str(ROOT / "main.py"), *args],
        input="Who wrote Dune?\n", capture_output=True, text=True, env=env, cwd=ROOT, timeout=60,
    )  # fmt: skip
    _check(proc, readonly_folder)
    assert list(readonly_folder.iterdir()) == []
    assert_no_network(tmp_path)
