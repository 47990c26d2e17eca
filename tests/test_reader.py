"""The offline reader seam (utils/engine/reader.py), through the CLI on made-up documents: each reader
(the default, and the trained ones SLEUTH_READER names) answers from the passage that holds the
answer; and shipped weights that fail their sha256 check are never used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sleuth.utils.engine import reader as R

ROOT = Path(__file__).resolve().parent.parent

KETTLES = """# Kettle daemon

The kettle daemon watches every kettle on the office network and reports when one boils.

## Boil timeout

A kettle that does not boil within the boil timeout is reported to the facilities team as broken.
Reports are grouped by floor so that one walk fixes them all.
The boil timeout is 240 seconds unless the configuration file sets another value.

## Descaling

Kettles are descaled every spring. The daemon keeps a list of the kettles that were descaled and when.
"""

LAMPS = """# Lamp registry

The lamp registry lists the desk lamps of every floor and who borrowed them.

## Borrowing

A lamp can be borrowed for a week. Borrowed lamps are marked with a green sticker, and a lamp that
comes back late is marked red. The registry was written by the office's own volunteers.
"""


def run(args: list[str], data: Path, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SLEUTH_DATA_DIR": str(data), **(env_extra or {})}
    return subprocess.run(
        [sys.executable, str(ROOT / "main.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("reader")
    docs = root / "docs"
    docs.mkdir()
    (docs / "kettles.md").write_text(KETTLES)
    (docs / "lamps.md").write_text(LAMPS)
    data = root / "data"
    done = run(["kb", "ingest", str(docs)], data)
    assert done.returncode == 0, done.stderr
    return data


def ask(data: Path, question: str, **env) -> dict:
    done = run(["--engine", "offline", "--tools", "kb", "--json", question], data, env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_default_reader_answers_from_the_passage_that_holds_the_answer(kb):
    out = ask(kb, "For how long may someone borrow a lamp from the registry?")
    assert "borrowed for a week" in out["answer"], out["answer"]
    assert any(s["cited"] and s["url"].endswith("lamps.md") for s in out["sources"])


@pytest.mark.parametrize("reader", ["model", "lexical"])
def test_a_trained_reader_can_be_chosen_and_answers_from_the_right_document(kb, reader):
    # The trained readers are not the default: on the development doc sets they chose the answering
    # sentence less often than the sentence model's closeness (docs/reader.md). Chosen, they still run
    # the whole loop and cite the document that holds the answer.
    out = ask(kb, "For how long may someone borrow a lamp from the registry?", SLEUTH_READER=reader)
    assert out["answer"] and any(s["cited"] and s["url"].endswith("lamps.md") for s in out["sources"])


def test_weights_that_fail_their_checksum_are_not_used(tmp_path, monkeypatch):
    good = R.WEIGHTS_FILE.read_bytes()
    damaged = tmp_path / "reader_weights.json"
    damaged.write_bytes(good.replace(b'"cover": ', b'"cover": 9', 1))
    monkeypatch.setattr(R, "WEIGHTS_FILE", damaged)
    monkeypatch.setattr(R._Weights, "_loaded", None)
    assert R._Weights.get() is None
    assert R.default_reader().name == "similarity"  # a trained reader is never built on damaged weights
