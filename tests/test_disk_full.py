"""A full disk under the data folder (a real tmpfs filled to the last byte): every command ends with
the answer it computed, one line naming the folder and the problem, and status 2; no traceback."""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.webfixtures import LocalServer, page, send

EXIT_USAGE = 2


def fill(folder: Path) -> None:
    """Write zeros into `folder` until the file system says it is full."""
    block = b"\0" * 65536
    with open(folder / "filler", "wb", buffering=0) as fh:
        while True:
            try:
                fh.write(block)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                if len(block) == 1:
                    return
                block = block[: len(block) // 2]


@pytest.fixture
def full_disk(tmp_path):
    """A 4 MB tmpfs at tmp_path/disk (root and mount(2) needed: skipped otherwise); `fill()` it when ready."""
    mount = shutil.which("mount")
    disk = tmp_path / "disk"
    disk.mkdir()
    if mount is None:
        pytest.skip("no mount command: cannot make a small file system to fill")
    made = subprocess.run([mount, "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root in a sandbox that allows it): {made.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def one_line(stderr: str, folder: Path) -> str:
    assert "Traceback" not in stderr, stderr
    said = [line for line in stderr.splitlines() if "no space left on device" in line]
    assert len(said) == 1, stderr
    assert str(folder) in said[0] and "--data-dir" in said[0]
    return said[0]


def test_research_on_a_full_disk_prints_the_answer_one_line_and_exits_2(cli, full_disk):
    data = full_disk / "data"
    first = cli("--json", "--tools", "duckduckgo", "What is an okapi?", data_dir=data)
    assert first.returncode == 1, first.stderr  # no network here: every tool failed (the session is saved)
    earlier = json.loads(first.stdout)["session_id"]
    saved = (data / "sessions" / f"{earlier}.json").read_bytes()
    fill(full_disk)

    proc = cli("--json", "--tools", "duckduckgo", "What is a giraffe?", data_dir=data)
    assert proc.returncode == EXIT_USAGE, proc.stderr
    assert json.loads(proc.stdout)["answer"]  # the answer computed is still printed
    assert "the session" in one_line(proc.stderr, data)
    assert (data / "sessions" / f"{earlier}.json").read_bytes() == saved  # earlier sessions intact
    files = [p.name for p in (data / "sessions").iterdir() if p.is_file()]  # not the .index and .locks folders
    assert files == [f"{earlier}.json"]  # no half-written file left


def test_a_batch_on_a_full_disk_prints_every_answer_then_one_line(cli, full_disk):
    data = full_disk / "data"
    data.mkdir()
    fill(full_disk)
    proc = cli(
        "batch", "--jobs", "2", "--tools", "duckduckgo", input="What is an okapi?\nWho wrote Dune?\n", data_dir=data
    )
    assert proc.returncode == EXIT_USAGE, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["query"] for r in records] == ["What is an okapi?", "Who wrote Dune?"]
    assert all(r["answer"] and not r["error"] for r in records)
    one_line(proc.stderr, data)


def test_a_report_file_on_a_full_disk_is_one_line_and_status_2(cli, full_disk, tmp_path):
    fill(full_disk)
    report = full_disk / "report.md"
    proc = cli("--json", "--tools", "duckduckgo", "-o", str(report), "What is an okapi?", data_dir=tmp_path / "data")
    assert proc.returncode == EXIT_USAGE, proc.stderr
    assert json.loads(proc.stdout)["answer"] and "Traceback" not in proc.stderr
    said = [line for line in proc.stderr.splitlines() if str(report) in line]
    assert len(said) == 1 and "No space left on device" in said[0]
    assert not report.exists()

    batch = cli(
        "batch", "--tools", "duckduckgo", "-o", str(report), input="What is an okapi?\n", data_dir=tmp_path / "data"
    )
    assert batch.returncode == EXIT_USAGE, batch.stderr  # a batch's report file too
    assert json.loads(batch.stdout)["answer"] and "Traceback" not in batch.stderr
    assert len([line for line in batch.stderr.splitlines() if str(report) in line]) == 1


def test_kb_ingest_on_a_full_disk_is_one_line_and_status_2(cli, full_disk, tmp_path):
    data = full_disk / "data"
    data.mkdir()
    fill(full_disk)
    notes = tmp_path / "notes.md"
    notes.write_text("# Okapis\n\nThe okapi is a giraffid of the Congo rainforest.\n")
    proc = cli("kb", "ingest", str(notes), data_dir=data)
    assert proc.returncode == EXIT_USAGE, proc.stderr
    line = one_line(proc.stderr, data / "kb")
    assert "knowledge base" in line


def test_a_cache_on_a_full_disk_is_one_line_and_status_2(cli, full_disk):
    data = full_disk / "data"
    data.mkdir()
    fill(full_disk)
    routes = {
        "/robots.txt": lambda req: send(req, 404, "", "text/plain"),
        "/okapi": lambda req: send(req, 200, page("Okapi", "<p>The okapi is a giraffid of the rainforest.</p>")),
    }
    with LocalServer(routes) as site:
        proc = cli("fetch", site.url("/okapi"), "--allow-private-hosts", "--crawl-interval", "0", data_dir=data)
    assert proc.returncode == EXIT_USAGE, proc.stderr
    assert "giraffid" in proc.stdout  # the page is still printed
    assert "the cache" in one_line(proc.stderr, data)
