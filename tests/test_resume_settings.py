"""A resumed session runs with the settings it was started with (tools, engine, model, budgets)
unless the command line gives one again: Ctrl-C in step 2 of a `--tools kb` run, then `--resume ID`."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading

from conftest import ROOT, assert_no_network, cli_env
from openai_fake import FakeOpenAI, Reply, kind_of

QUESTION = "What is the default brine level of a Quillwort press?"
NOTE = """# Quillwort press

The Quillwort press keeps its brine at level 7 by default. Operators may raise the brine level to 9
for dense fibres, but level 7 is the factory setting.

## Cleaning

Rinse the Quillwort press drum with cold water after each batch.
"""


class HeldModel:
    """A model that searches the knowledge base twice, then reports; the second analysis waits
    until `release` is set, so that the run can be interrupted in its second step."""

    def __init__(self):
        self.release = threading.Event()
        self.decisions = 0
        self.analyses = 0

    def __call__(self, body):
        kind = kind_of(body)
        if kind == "decide":
            self.decisions += 1
            queries = ["Quillwort press brine level", "Quillwort default setting"]
            if self.decisions <= len(queries):
                q = queries[self.decisions - 1]
                return json.dumps({"next_action": "search_kb", "query_or_url": q, "reasoning": "notes"})
            return json.dumps({"next_action": "send_to_hitl", "query_or_url": "", "reasoning": "enough"})
        if kind == "analyze":
            self.analyses += 1
            if self.analyses == 2 and not self.release.is_set():
                return Reply(hang=True)
            facts = [{"fact": "The Quillwort press keeps its brine at level 7 by default.", "source": 1}]
            return json.dumps(
                {
                    "extracted_info": facts,
                    "assessment": "partial",
                    "confidence_score": 0.5,
                    "suggestions_for_next_step": [],
                    "new_potential_urls": [],
                    "inconsistencies_found": "",
                }
            )
        return "The brine is kept at level 7 by default [1]."


def test_resume_keeps_the_tools_engine_and_budgets_it_was_started_with(tmp_path, cli):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "press.md").write_text(NOTE)
    assert cli("kb", "ingest", str(notes)).returncode == 0
    model = HeldModel()
    with FakeOpenAI(model, models=("press-model",)) as fake:
        env = cli_env(tmp_path, NO_COLOR="1")
        args = ["--engine", "openai", "--base-url", fake.url, "--tools", "kb", "--max-iterations", "5"]
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "main.py"), "--json", *args, "--confidence", "0.95", QUESTION],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen = []
        for line in proc.stderr:  # the progress: step 2 is searched, its analysis is held
            seen.append(line)
            if line.lstrip().startswith("\u2713") and any(x.startswith("[2/") for x in seen):
                break
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=60)
        assert proc.returncode == 130, "".join(seen) + rest
        sid = json.loads(next((tmp_path / "data" / "sessions").glob("*.json")).read_text())["session_id"]
        model.release.set()

        resumed = cli("--json", "--resume", sid)  # no flags: the session's own settings
    assert resumed.returncode == 0, resumed.stderr
    data = json.loads(resumed.stdout)
    assert data["engine"] == "openai" and data["model"] == "press-model"
    assert data["answer"].startswith("The brine is kept at level 7 by default [1].")
    assert data["sources"] and all(s["kind"] == "internal" for s in data["sources"])
    assert "--tools kb" not in resumed.stderr  # not advised to use what it was started with
    saved = json.loads((tmp_path / "data" / "sessions" / f"{sid}.json").read_text())
    assert {h["action"] for h in saved["research_history"]} == {"search_kb"}
    assert saved["settings"]["tools"] == ["kb"] and saved["settings"]["max_iterations"] == 5
    assert saved["settings"]["confidence"] == 0.95
    assert_no_network(tmp_path)


def test_a_flag_given_again_overrides_the_session(tmp_path, cli):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "press.md").write_text(NOTE)
    assert cli("kb", "ingest", str(notes)).returncode == 0
    first = cli("--json", "--engine", "offline", "--tools", "kb", "--max-iterations", "2", QUESTION)
    assert first.returncode == 0, first.stderr
    sid = json.loads(first.stdout)["session_id"]
    again = cli("--json", "--resume", sid, "--feedback", "look for the cleaning", "--max-iterations", "3")
    assert again.returncode == 0, again.stderr
    saved = json.loads((tmp_path / "data" / "sessions" / f"{sid}.json").read_text())
    assert saved["settings"]["max_iterations"] == 3 and saved["settings"]["tools"] == ["kb"]
    assert {h["action"] for h in saved["research_history"]} == {"search_kb"}


def test_the_python_api_resumes_with_the_session_settings_but_for_the_keywords_given(tmp_path, cli):
    import sleuth

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "press.md").write_text(NOTE)
    data = tmp_path / "data"
    with sleuth.KnowledgeBase(data_dir=data) as kb:
        kb.ingest([notes])
    first = sleuth.research(QUESTION, tools=["kb"], engine="offline", max_iterations=1, data_dir=data)
    again = sleuth.resume(first.session_id, "look for the cleaning", data_dir=data, confidence=0.9)
    assert again.sources and all(s.kind == "internal" for s in again.sources)
    saved = json.loads((data / "sessions" / f"{first.session_id}.json").read_text())
    assert saved["settings"]["tools"] == ["kb"] and saved["settings"]["max_iterations"] == 1
    assert saved["settings"]["confidence"] == 0.9 and saved["settings"]["engine"] == "offline"
