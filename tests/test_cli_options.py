"""Options anywhere, as in git: the command word is found past the global options, a known command
word is never researched, a bad option is one line with a suggestion, each command's --help lists
only its own options. Subprocesses of `python main.py`, as a user runs it."""

from __future__ import annotations

import json

import pytest

from sleuth.utils.cli.args import invoked_as
from tests.webfixtures import LocalServer, page, send


def sessions_of(data_dir):
    folder = data_dir / "sessions"
    return sorted(p.name for p in folder.glob("*.json")) if folder.is_dir() else []


def test_global_options_before_kb_ingest_ingest_instead_of_researching(cli, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "starter.md").write_text("# Starter\n\nA sourdough starter is fed flour and water daily.\n")
    data = tmp_path / "elsewhere"
    proc = cli("--data-dir", str(data), "kb", "ingest", str(notes), input="")
    assert proc.returncode == 0, proc.stderr
    assert "1 added" in proc.stdout
    assert sessions_of(data) == [] and sessions_of(tmp_path / "data") == []  # nothing was researched
    stats = cli("kb", "stats", "--json", "--data-dir", str(data), input="")  # and after the command word too
    assert json.loads(stats.stdout)["sources"] == 1


def test_global_options_before_sessions_list_list_that_folder(cli, tmp_path):
    data = tmp_path / "other"
    (data / "sessions").mkdir(parents=True)
    (data / "sessions" / "s1.json").write_text(json.dumps({"session_id": "s1", "original_query": "Who wrote Dune?"}))
    proc = cli("--data-dir", str(data), "sessions", "list", input="")
    assert proc.returncode == 0 and "s1" in proc.stdout and "Who wrote Dune?" in proc.stdout
    assert sessions_of(data) == ["s1.json"]


def test_a_network_option_before_fetch_applies_to_the_fetch(cli, tmp_path):
    routes = {"/guide": lambda req: send(req, 200, page("Research guide", "<p>Cite your sources.</p>"))}
    with LocalServer(routes) as site:
        proc = cli("--allow-private-hosts", "--crawl-interval", "0", "fetch", site.url("/guide"), input="")
    assert proc.returncode == 0, proc.stderr
    assert "Cite your sources." in proc.stdout
    assert sessions_of(tmp_path / "data") == []


def test_ask_researches_a_question_that_starts_with_a_command_word(cli, tmp_path):
    proc = cli("--tools", "kb", "ask", "--json", "kb", "ingest", input="")
    assert proc.returncode == 2  # the knowledge base is empty: said, not researched (see test_cli_messages)
    proc = cli("ask", "--json", "--tools", "duckduckgo", "kb ingest docs", input="")
    assert proc.returncode == 1, proc.stderr  # researched (no network here: every tool failed, status 1)
    assert json.loads(proc.stdout)["query"] == "kb ingest docs"


def test_a_known_command_word_alone_is_never_researched(cli, tmp_path):
    proc = cli("--data-dir", str(tmp_path / "data"), "kb", input="")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert sessions_of(tmp_path / "data") == []


def test_a_misspelt_option_is_one_line_with_a_suggestion(cli, tmp_path):
    proc = cli("--confidance", "0.5", "Who wrote Dune?", input="")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "unknown option --confidance" in lines[0] and "did you mean --confidence?" in lines[0]
    assert sessions_of(tmp_path / "data") == []  # the value was not taken for the question


def test_an_abbreviated_option_is_not_guessed(cli, tmp_path):
    proc = cli("--conf", "0.5", "Who wrote Dune?", input="")
    assert proc.returncode == 2 and "did you mean --confidence?" in proc.stderr


def test_an_option_another_command_uses_is_named_as_not_applying(cli):
    proc = cli("kb", "stats", "-o", "stats.md", input="")  # -o is the research command's alone
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "kb stats` does not use -o" in proc.stderr
    assert cli("kb", "stats", "--engine", "offline", input="").returncode == 0  # a global setting is taken


def test_each_command_help_lists_only_its_options(cli):
    ingest = cli("kb", "ingest", "--help").stdout
    assert "--data-dir" in ingest and "--embedding" in ingest
    for other in ("--crawl-interval", "--allow-private-hosts", "--searxng-url", "--engine", "--no-cache"):
        assert other not in ingest
    sessions = cli("sessions", "list", "--help").stdout
    assert "--data-dir" in sessions and "--embedding" not in sessions and "--cache-ttl" not in sessions
    fetch = cli("fetch", "--help").stdout
    assert "--allow-private-hosts" in fetch and "--engine" not in fetch and "--embedding" not in fetch
    top = cli("--help").stdout
    for word in ("ask", "batch", "sessions", "kb", "fetch"):
        assert f"\n  {word} " in top  # the commands are listed with the research options


def test_version(cli):
    proc = cli("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("sleuth 0.")


@pytest.mark.parametrize("args", [[""], ["  "], []])
def test_an_empty_question_with_an_empty_stdin_is_a_usage_error(cli, tmp_path, args):
    proc = cli(*args, input="")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "question" in proc.stderr
    assert sessions_of(tmp_path / "data") == []


def test_an_empty_question_with_a_piped_stdin_is_a_usage_error(cli, tmp_path):
    proc = cli("", input="Who wrote Dune?\n")
    assert proc.returncode == 2 and "the question is empty" in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("jobs", ["0", "-2"])
def test_jobs_below_one_is_a_usage_error(cli, jobs):
    proc = cli("--jobs", jobs, input="Who wrote Dune?\n")
    assert proc.returncode == 2 and "--jobs" in proc.stderr and proc.stdout == ""


def test_sessions_export_without_o_prints_the_markdown(cli, tmp_path):
    sessions = tmp_path / "data" / "sessions"
    sessions.mkdir(parents=True)
    report = "# Who wrote Dune?\n\n## Answer\n\nFrank Herbert [1].\n"
    (sessions / "s1.json").write_text(
        json.dumps({"session_id": "s1", "original_query": "Who wrote Dune?", "final_answer": report})
    )
    proc = cli("sessions", "export", "s1")
    assert proc.returncode == 0 and proc.stdout == report


def test_hints_name_the_command_the_user_ran(tmp_path):
    venv_bin = tmp_path / "bin"
    venv_bin.mkdir()
    python = venv_bin / "python"
    python.write_text("")
    assert invoked_as("main.py", str(python)).endswith(" main.py")
    assert invoked_as("/x/sleuth/__main__.py", str(python)).endswith(" -m sleuth")
    # a `sleuth` script that is not on PATH is named by the path the user typed
    assert invoked_as(".venv/bin/sleuth", str(python)) == ".venv/bin/sleuth"


def test_the_readme_main_command_installs_the_sleuth_command_it_then_uses():
    import re

    from conftest import ROOT

    blocks = re.findall(r"^```bash\n(.*?)^```", (ROOT / "README.md").read_text(), re.M | re.S)
    main_job = blocks[0].splitlines()[0]
    assert "pip install -q -e ." in main_job
    assert main_job.index("pip install -q -e .") < main_job.index(".venv/bin/sleuth ")
    assert "main.py" not in main_job
