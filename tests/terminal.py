"""Sleuth at a terminal, for the tests: `python main.py ARGS` in a pseudo-terminal (pexpect)."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import ROOT, cli_env


def spawn_sleuth(args: list[str], tmp_path: Path, *, columns: int = 120, rows: int = 40, **env: str):
    """The CLI in a terminal of `rows` x `columns` (TERM=xterm-256color), run in `tmp_path` with the
    tests' CLI environment plus `env`. pexpect waits with poll(), not select(): a test process that
    holds over 1,024 descriptors still reads its child."""
    import pexpect

    return pexpect.spawn(
        sys.executable,
        [str(ROOT / "main.py"), *args],
        env=cli_env(tmp_path, TERM="xterm-256color", **env),
        cwd=str(tmp_path),
        dimensions=(rows, columns),
        encoding="utf-8",
        timeout=60,
        use_poll=True,
    )
