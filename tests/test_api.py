"""The Python API, `import sleuth`: the README's example runs as written, importing is light and
silent, a report's record is the CLI's --json record, bad input raises sleuth.errors types, and a
cancelled run leaves a session that resumes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, assert_no_network, cli_env

import sleuth
from sleuth.errors import Interrupted, SessionNotFound, SleuthError, UsageError

QUESTION = "When was the Beacon of Tarvel built?"
NOTES = {
    "skerrow.md": "# Skerrow\n\nThe Beacon of Tarvel was built between 312 and 298 BC on the island of "
    "Skerrow. It was one of the Five Marvels of the Old Coast.\n",
    "orsk.md": "# Giant\n\nThe Giant of Orsk was a statue of the sea god Varro, erected in 312 BC.\n",
}


def _as_installed(tmp_path) -> str:
    """A PYTHONPATH on which `import sleuth` finds this checkout the way an installed package is
    found (no bootstrap), plus the network guard."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sleuth").symlink_to(ROOT, target_is_directory=True)
    return os.pathsep.join([str(site), str(ROOT / "tests" / "netguard")])


def _readme_example() -> str:
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Python API", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture
def notes_kb(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    data = tmp_path / "data"
    with sleuth.KnowledgeBase(data_dir=data) as kb:
        report = kb.ingest([folder])
    assert report.files_added == 2 and not report.errors
    return data


def test_the_readme_example_runs_as_written(tmp_path):
    code = _readme_example()
    assert len(code.strip().splitlines()) == 5
    env = cli_env(tmp_path, PYTHONPATH=_as_installed(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # nothing printed but what the example prints
    answer, confidence, cited = re.fullmatch(r"(.+) \((\d\.\d\d)\) (\[\d+\] .+)\n", proc.stdout, re.S).groups()
    assert re.search(r"\w+.*\[\d+\]", answer)  # an answer that cites its sources
    assert 0 < float(confidence) <= 1
    assert re.fullmatch(r"(\[\d+\] /\S+/(README\.md|docs/\S+) ?)+", cited), cited  # the files it cites
    assert_no_network(tmp_path)


def test_importing_sleuth_is_light_and_prints_nothing(tmp_path):
    code = (
        "import json, sys, sleuth, sleuth.errors\n"
        "assert callable(sleuth.research) and callable(sleuth.resume) and sleuth.KnowledgeBase\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    env = cli_env(tmp_path, PYTHONPATH=_as_installed(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    loaded = {m.split(".")[0] for m in json.loads(proc.stdout)}
    heavy = {"chromadb", "google", "openai", "mcp", "pocketflow", "pydantic", "rich", "numpy", "requests"}
    assert not loaded & heavy


def test_a_reports_record_is_the_cli_json_record(cli, notes_kb):
    report = sleuth.research(QUESTION, tools=["kb"], data_dir=notes_kb)
    assert "312" in report.answer and report.stop_reason
    cited = [s for s in report.sources if s.cited]
    assert cited and cited[0].url.endswith("skerrow.md") and "Skerrow" in cited[0].quote
    assert report.markdown.startswith("#") and report.answer in report.markdown

    proc = cli("--tools", "kb", "--json", QUESTION, data_dir=notes_kb)
    assert proc.returncode == 0, proc.stderr
    from_cli = json.loads(proc.stdout)
    mine = report.to_dict()
    for varies in ("session_id", "elapsed_ms"):
        from_cli.pop(varies), mine.pop(varies)
    assert mine == from_cli


def test_bad_input_raises_the_errors_the_cli_reports(tmp_path):
    data = tmp_path / "data"
    with pytest.raises(UsageError, match="question is empty"):
        sleuth.research("   ", data_dir=data)
    with pytest.raises(UsageError, match="max-iterations"):
        sleuth.research(QUESTION, data_dir=data, max_iterations=0)
    with pytest.raises(UsageError, match="unknown tool"):
        sleuth.research(QUESTION, data_dir=data, tools=["kb", "telepathy"])
    with pytest.raises(ValueError):  # a UsageError is a ValueError too
        sleuth.research(QUESTION, data_dir=data, confidence=1.5)
    with pytest.raises(TypeError, match="unknown setting"):
        sleuth.research(QUESTION, data_dir=data, max_iteration=3)
    with pytest.raises(SessionNotFound):
        sleuth.resume("20000101-000000-abcdef", data_dir=data)
    with pytest.raises(SleuthError, match="GEMINI_API_KEY"):
        sleuth.research(QUESTION, data_dir=data, engine="gemini")
    with pytest.raises(UsageError, match="k must be"):
        sleuth.KnowledgeBase(data_dir=data).search("skerrow", k=0)


def test_a_cancelled_run_raises_interrupted_and_resumes(notes_kb):
    cancel = __import__("threading").Event()
    seen: list[tuple[float, float, str]] = []

    def progress(value, total, message):
        seen.append((value, total, message))
        if message.startswith("step 1/"):
            cancel.set()  # as another thread would: the run stops at its next step

    with pytest.raises(Interrupted) as caught:
        sleuth.research(QUESTION, tools=["kb"], data_dir=notes_kb, progress=progress, cancel=cancel)
    session_id = caught.value.session_id
    assert [m for _, _, m in seen][0].startswith("researching:")
    assert session_id in seen[0][2]

    report = sleuth.resume(session_id, tools=["kb"], data_dir=notes_kb)  # offline, as the run began
    assert report.session_id == session_id
    assert report.stop_reason and "312" in report.answer


def test_feedback_researches_a_finished_session_again(notes_kb):
    first = sleuth.research(QUESTION, tools=["kb"], data_dir=notes_kb)
    again = sleuth.resume(first.session_id, "the Giant of Orsk too", tools=["kb"], data_dir=notes_kb)
    assert again.session_id == first.session_id and again.stop_reason
    saved = json.loads((notes_kb / "sessions" / f"{first.session_id}.json").read_text(encoding="utf-8"))
    assert [f["text"] for f in saved["feedback_history"]] == ["the Giant of Orsk too"]
    assert len(saved["reports"]) == 2
    unchanged = sleuth.resume(first.session_id, data_dir=notes_kb)  # no feedback: the saved report
    assert unchanged.markdown == again.markdown


def test_knowledge_base_search_and_stats(notes_kb):
    kb = sleuth.KnowledgeBase(data_dir=notes_kb)
    hits = kb.search("Giant Varro statue", k=3)
    assert hits[0].source.endswith("orsk.md") and "Varro" in hits[0].text
    assert kb.stats()["sources"] == 2
    kb.close()


def test_research_goes_on_without_a_damaged_knowledge_base(tmp_path, notes_kb):
    """As on the command line: the damaged file is named once in the report's warnings, the KB is
    left out, and the run answers from the other tools instead of failing part-way."""
    (notes_kb / "kb" / "lexical.sqlite").write_bytes(b"not a database, garbage from a bad disk\n" * 200)
    code = (
        "import sleuth, sys\n"
        f"r = sleuth.research({QUESTION!r}, tools=['kb', 'duckduckgo'], data_dir=sys.argv[1])\n"
        "print(r.stop_reason); print(*r.warnings, sep='\\n')\n"
    )
    env = cli_env(tmp_path, PYTHONPATH=_as_installed(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-c", code, str(notes_kb)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    damaged = [line for line in proc.stdout.splitlines() if "damaged" in line]
    assert len(damaged) == 1 and "lexical.sqlite" in damaged[0] and "without the knowledge base" in damaged[0]
    assert_no_network(tmp_path)
