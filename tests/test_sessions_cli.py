"""`sessions list | delete | prune` through the CLI: newest first, -n/--all/--grep/--json, the space
used, the metadata index (updated on save, rebuilt when missing or damaged), removals that name what
they remove, ask before removing several, and never touch a session another process is using."""

from __future__ import annotations

import json
import sqlite3
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pexpect
import pytest
from conftest import ROOT, cli_env


def write_session(folder: Path, sid: str, query: str, *, days_ago: float = 0.0, pad: int = 0) -> Path:
    when = (datetime.now(UTC) - timedelta(days=days_ago)).isoformat(timespec="milliseconds")
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        "session_id": sid,
        "original_query": query,
        "created_at": when,
        "updated_at": when,
        "status": "done",
        "stop_reason": "confident",
        "confidence_score": 0.8,
        "final_answer": "# Report\n" + "x" * pad,
    }
    path = folder / f"{sid}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def sessions(tmp_path) -> Path:
    return tmp_path / "data" / "sessions"


@pytest.fixture
def notes(cli, tmp_path) -> Path:
    """A knowledge base to research in (`--tools kb` needs one that is not empty)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "dune.md").write_text("# Dune\n\nDune is a novel by Frank Herbert, published in 1965.\n")
    assert cli("kb", "ingest", str(folder)).returncode == 0
    return folder


def ids_listed(stdout: str) -> list[str]:
    return [line.split()[0] for line in stdout.splitlines()]


def test_list_shows_the_newest_twenty_then_more_on_request_and_the_space_used(cli, sessions):
    for i in range(25):
        write_session(sessions, f"s{i:02d}", f"Question {i}", days_ago=25 - i, pad=1000)
    shown = cli("sessions", "list")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert ids_listed("\n".join(lines[:-1])) == [f"s{i:02d}" for i in range(24, 4, -1)]  # newest first, 20
    assert lines[-1].startswith("20 of 25 session(s) shown") and "--all" in lines[-1]
    assert "KB in " in lines[-1] and str(sessions) in lines[-1]
    assert ids_listed("\n".join(cli("sessions", "list", "-n", "3").stdout.splitlines()[:-1])) == ["s24", "s23", "s22"]
    assert len(cli("sessions", "list", "--all").stdout.splitlines()) == 26
    rows = [json.loads(x) for x in cli("sessions", "list", "--json", "-n", "2").stdout.splitlines()]
    assert [r["session_id"] for r in rows] == ["s24", "s23"] and rows[0]["original_query"] == "Question 24"
    assert rows[0]["bytes"] > 1000


def test_grep_finds_questions_in_any_case(cli, sessions):
    write_session(sessions, "a1", "Who founded the École Polytechnique?", days_ago=2)
    write_session(sessions, "a2", "When did the école open?", days_ago=1)
    write_session(sessions, "a3", "Who wrote Dune?")
    found = cli("sessions", "list", "--grep", "ÉCOLE")
    assert ids_listed("\n".join(found.stdout.splitlines()[:-1])) == ["a2", "a1"]
    assert "2 of 2 matching 'ÉCOLE' (of 3)" in found.stdout.splitlines()[-1]


def test_a_saved_session_is_in_the_index_before_anything_lists_it(cli, tmp_path, notes):
    proc = cli("--tools", "kb", "--json", "Who wrote Dune?")
    sid = json.loads(proc.stdout)["session_id"]
    index = tmp_path / "data" / "sessions" / ".index" / "index.sqlite"
    con = sqlite3.connect(f"{index.as_uri()}?mode=ro", uri=True)
    row = con.execute("SELECT original_query, status FROM sessions WHERE name=?", (sid,)).fetchone()
    con.close()
    assert row == ("Who wrote Dune?", "done")


def test_a_missing_or_damaged_index_is_rebuilt_and_a_damaged_one_kept(cli, sessions):
    write_session(sessions, "b1", "First question", days_ago=1)
    write_session(sessions, "b2", "Second question")
    assert ids_listed("\n".join(cli("sessions", "list").stdout.splitlines()[:-1])) == ["b2", "b1"]
    index = sessions / ".index" / "index.sqlite"
    index.write_bytes(b"this is not a database" * 100)
    write_session(sessions, "b3", "Third question")  # written while the index was unusable
    listed = cli("sessions", "list")
    assert listed.returncode == 0 and "Traceback" not in listed.stderr
    assert ids_listed("\n".join(listed.stdout.splitlines()[:-1])) == ["b3", "b2", "b1"]
    assert "session index" in listed.stderr and "damaged" in listed.stderr
    kept = list((sessions / ".index").glob("index.sqlite.damaged-*"))
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b"this is not a database")
    for extra in sessions.parent.glob("sessions/.index/index.sqlite*"):
        extra.unlink()
    (sessions / ".index").rmdir()
    assert ids_listed("\n".join(cli("sessions", "list").stdout.splitlines()[:-1])) == ["b3", "b2", "b1"]


def test_sessions_removed_or_added_behind_sleuths_back_are_noticed(cli, sessions):
    write_session(sessions, "c1", "One", days_ago=1)
    write_session(sessions, "c2", "Two")
    cli("sessions", "list")
    (sessions / "c1.json").unlink()
    write_session(sessions, "c3", "Three")
    assert ids_listed("\n".join(cli("sessions", "list").stdout.splitlines()[:-1])) == ["c3", "c2"]


def test_an_unreadable_session_is_reported_and_left_on_disk_by_prune(cli, sessions):
    write_session(sessions, "old1", "An old question", days_ago=40)
    bad = sessions / "bad1.json"
    bad.write_text('{"session_id": "bad1", "original', encoding="utf-8")
    listed = cli("sessions", "list")
    assert "bad1.json" in listed.stderr and "cannot be read" in listed.stderr and "bad1" not in listed.stdout
    pruned = cli("sessions", "prune", "--older-than", "30d", "--yes")
    assert pruned.returncode == 0 and "bad1.json" in pruned.stderr
    assert bad.exists() and not (sessions / "old1.json").exists()


def test_delete_names_what_it_deleted_and_the_space_freed(cli, sessions):
    size = write_session(sessions, "d1", "Delete me", pad=3000).stat().st_size
    write_session(sessions, "d2", "Keep me")
    proc = cli("sessions", "delete", "d1")
    assert proc.returncode == 0, proc.stderr
    assert "deleted d1" in proc.stdout and "Delete me" in proc.stdout
    assert f"freed {size / 1024:.1f} KB" in proc.stdout
    assert not (sessions / "d1.json").exists() and (sessions / "d2.json").exists()
    assert ids_listed("\n".join(cli("sessions", "list").stdout.splitlines()[:-1])) == ["d2"]
    unknown = cli("sessions", "delete", "nope")
    assert unknown.returncode == 2 and "no session 'nope'" in unknown.stderr


def test_deleting_several_from_a_script_needs_yes(cli, sessions):
    write_session(sessions, "e1", "One")
    write_session(sessions, "e2", "Two")
    refused = cli("sessions", "delete", "e1", "e2", input="y\n")
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert (sessions / "e1.json").exists() and (sessions / "e2.json").exists()
    done = cli("sessions", "delete", "e1", "e2", "--yes")
    assert done.returncode == 0 and "deleted 2 session(s)" in done.stdout
    assert not list(sessions.glob("*.json"))


def _spawn(args, tmp_path) -> pexpect.spawn:
    env = cli_env(tmp_path, NO_COLOR="1", TERM="dumb")
    return pexpect.spawn(
        sys.executable,
        [str(ROOT / "main.py"), *args],
        env=env,
        cwd=str(tmp_path),
        encoding="utf-8",
        timeout=60,
        use_poll=True,
    )


@pytest.mark.parametrize("answer, kept", [("y", False), ("n", True)])
def test_deleting_several_at_a_terminal_asks_first(tmp_path, sessions, answer, kept):
    write_session(sessions, "f1", "First to go")
    write_session(sessions, "f2", "Second to go")
    child = _spawn(["sessions", "delete", "f1", "f2"], tmp_path)
    child.expect(r"Remove these 2 sessions\? \[y/N\]")
    assert "First to go" in child.before and "Second to go" in child.before
    child.sendline(answer)
    child.expect(pexpect.EOF)
    child.close()
    assert (sessions / "f1.json").exists() is kept and (sessions / "f2.json").exists() is kept
    assert child.exitstatus == (2 if kept else 0)


def test_prune_dry_run_then_prune_by_last_use(cli, sessions):
    write_session(sessions, "g-old", "Old question", days_ago=45, pad=2048)
    write_session(sessions, "g-older", "Older question", days_ago=90, pad=2048)
    write_session(sessions, "g-new", "Recent question", days_ago=3)
    dry = cli("sessions", "prune", "--older-than", "30d", "--dry-run")
    assert dry.returncode == 0 and "would delete g-old" in dry.stdout and "would delete g-older" in dry.stdout
    assert "g-new" not in dry.stdout and "would delete 2 session(s)" in dry.stdout
    assert len(list(sessions.glob("*.json"))) == 3
    done = cli("sessions", "prune", "--older-than", "30d", "--yes")
    assert done.returncode == 0 and "pruned 2 session(s)" in done.stdout and "freed 4." in done.stdout
    assert [p.stem for p in sessions.glob("*.json")] == ["g-new"]
    bad = cli("sessions", "prune", "--older-than", "soon")
    assert bad.returncode == 2 and "30d" in bad.stderr and "Traceback" not in bad.stderr


def test_a_session_in_use_by_another_process_is_never_deleted(tmp_path, cli, sessions, notes):
    """A new question and an old session reopened with --resume, both at their feedback prompt, hold
    their sessions: delete and prune skip them whole, and delete them once those processes are done."""
    write_session(sessions, "old-one", "An old question", days_ago=40)
    reopened = _spawn(["--tools", "kb", "--plain", "--resume", "old-one"], tmp_path)
    reopened.expect("Feedback")
    asking = _spawn(["--tools", "kb", "--plain", "Who wrote Dune?"], tmp_path)
    asking.expect("Feedback")
    (new,) = [p.stem for p in sessions.glob("*.json") if p.stem != "old-one"]
    busy = cli("sessions", "delete", "old-one", new, "--yes")
    assert busy.returncode == 1 and busy.stderr.count("in use by another process") == 2
    assert "deleted 0 session(s)" in busy.stdout
    pruned = cli("sessions", "prune", "--older-than", "30d", "--yes")
    assert pruned.returncode == 1 and "skipped old-one: in use by another process" in pruned.stderr
    assert (sessions / "old-one.json").exists() and (sessions / f"{new}.json").exists()
    for child in (reopened, asking):
        child.sendline("")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
    done = cli("sessions", "delete", "old-one", new, "--yes")
    assert done.returncode == 0 and "deleted 2 session(s)" in done.stdout
    assert not list(sessions.glob("*.json")) and not list((sessions / ".locks").iterdir())
