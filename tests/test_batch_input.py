"""Batch input as files from elsewhere write it: a byte order mark, bytes that are not UTF-8 in an id,
lines that are not questions. Output stays UTF-8 JSON; every record has every key; each failed line
is named on stderr."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT, assert_no_network, cli_env

EXIT_SOME_FAILED = 3


def batch(tmp_path, data: bytes) -> subprocess.CompletedProcess:
    """`sleuth batch --tools kb` fed raw bytes, over a knowledge base of one note."""
    notes = tmp_path / "kites.md"
    notes.write_text("# Kites\n\nA box kite is a kite with two open boxes, built first by Lawrence Hargrave.\n")
    env = cli_env(tmp_path, NO_COLOR="1")
    main = [sys.executable, str(ROOT / "main.py")]
    subprocess.run([*main, "kb", "ingest", str(notes)], env=env, cwd=tmp_path, check=True, capture_output=True)
    proc = subprocess.run(
        [*main, "batch", "--tools", "kb", "--max-iterations", "1"],
        input=data,
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert_no_network(tmp_path)
    return proc


def test_a_first_line_with_a_byte_order_mark_is_read_as_json(tmp_path):
    data = b'\xef\xbb\xbf{"id": "q1", "query": "Who built the first box kite?"}\n'  # saved by Windows Notepad
    proc = batch(tmp_path, data)
    assert proc.returncode == 0, proc.stderr
    (rec,) = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert (rec["id"], rec["query"], rec["error"]) == ("q1", "Who built the first box kite?", None)


def test_an_id_that_is_not_utf8_is_printed_as_utf8(tmp_path):
    proc = batch(tmp_path, b'{"id": "q\xff\xfe2", "query": "What is a box kite?"}\n')
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode("utf-8")  # strict: raises if a raw byte got through
    (rec,) = [json.loads(line) for line in text.splitlines()]
    assert rec["id"] == "q\ufffd\ufffd2" and not rec["error"]


def test_an_error_record_has_every_key_and_each_failed_line_is_named_on_stderr(tmp_path):
    data = b'What is a kite?\n{"id": 2, "query": \n\n{"id": "empty"}\n'
    proc = batch(tmp_path, data)
    assert proc.returncode == EXIT_SOME_FAILED, proc.stderr
    recs = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    good, broken, empty = recs
    assert not good["error"] and broken["error"] and empty["error"]
    assert set(broken) == set(good) == set(empty)  # every key, whichever way the line went
    assert broken["confidence"] == 0.0 and broken["sources"] == [] and broken["answer"] is None
    said = [line for line in proc.stderr.decode().splitlines() if "not answered" in line]
    assert len(said) == 2 and "line 2" in said[0] and "line 4" in said[1], proc.stderr
    assert "Traceback" not in proc.stderr.decode()
