"""The type checker (mypy, configured in pyproject.toml, run by .ci/typecheck in CI) in the mode the
program is checked in: it finds a misspelt key of the shared store (a TypedDict) and an engine whose
call does not match the engine protocol, and it finds nothing in code that keeps to both."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

GOOD = """
from collections.abc import Callable

from sleuth.utils.engine.protocol import Answer, BaseEngine, Engine, EngineContext, EngineResult
from sleuth.utils.research.loopdata import Analysis, Choice
from sleuth.utils.research.state import Shared


def stop(shared: Shared) -> None:
    shared["stop_reason"] = None


class Keeps(BaseEngine):
    def decide(self, ctx: EngineContext) -> EngineResult[Choice]:
        return EngineResult(Choice("x", ctx.query), "keeps")

    def analyze(self, ctx: EngineContext) -> EngineResult[Analysis]:
        return EngineResult(Analysis([], "", 0.0), "keeps")

    def report(self, ctx: EngineContext, on_chunk: Callable[[str], None] | None = None) -> EngineResult[Answer]:
        return EngineResult(Answer(""), "keeps")


engine: Engine = Keeps()
"""

BAD = GOOD.replace('shared["stop_reason"]', 'shared["stop_reasn"]').replace(
    "def analyze(self, ctx: EngineContext)", "def analyze(self, ctx: EngineContext, step: int)"
)


def test_the_type_checker_finds_a_wrong_store_key_and_an_engine_off_the_protocol(tmp_path):
    (tmp_path / "sleuth").symlink_to(ROOT)  # the checkout as the `sleuth` package, as .ci/typecheck does
    (tmp_path / "good.py").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad.py").write_text(BAD, encoding="utf-8")
    cmd = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "good.py", "bad.py"]
    cmd += ["--cache-dir", str(tmp_path / "cache")]
    env = {**os.environ, "MYPYPATH": str(tmp_path)}
    found = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    errors = [line for line in found.stdout.splitlines() if ": error:" in line]
    assert not [e for e in errors if e.startswith("good.py")], found.stdout
    assert any('bad.py:10: error: TypedDict "Shared" has no key "stop_reasn"' in e for e in errors), found.stdout
    assert any('Signature of "analyze" incompatible with supertype' in e for e in errors), found.stdout
    assert any("Incompatible types in assignment" in e and '"Engine"' in e for e in errors), found.stdout
