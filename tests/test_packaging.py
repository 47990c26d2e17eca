"""An installed Sleuth is one `sleuth` package with its prompts: the wheel is built from the
checkout, installed without downloading anything into a folder beside the test environment's
packages, and run from another directory as `python -m sleuth` against the fake Gemini endpoint."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, assert_no_network, cli_env

KEEP_OUT = shutil.ignore_patterns(".venv", ".git", "__pycache__", "build", "dist", "*.egg-info", "data", "tests")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, zipfile.ZipFile]:
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    shutil.copytree(ROOT, src, ignore=KEEP_OUT)  # build from a copy: the checkout stays clean
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(work / "dist"), str(src)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = (work / "dist").glob("sleuth-*.whl")
    site = work / "site"
    subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return site, zipfile.ZipFile(wheel)


def test_the_wheel_holds_one_sleuth_package_with_every_module_and_prompt(installed):
    _, wheel = installed
    names = set(wheel.namelist())
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"sleuth"}  # no generic top-level `utils`, `main`, `flow` or `nodes`
    checkout = {p.relative_to(ROOT).as_posix() for p in ROOT.glob("*.py")}
    checkout |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "utils").rglob("*.py")}
    checkout |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "prompts").glob("*.md")}
    missing = {f for f in checkout if f"sleuth/{f}" not in names}
    assert not missing, f"not in the wheel: {sorted(missing)}"


def test_installed_sleuth_answers_with_gemini_and_its_prompts_from_another_directory(installed, tmp_path):
    from gemini_fake import FakeGemini, prompt_of

    site, _ = installed
    calls = []

    def responder(body, path):
        prompt = prompt_of(body)
        calls.append(prompt[:60])
        if prompt.startswith("You are the central Decision Node"):
            if "(nothing yet)" in prompt:
                return 200, json.dumps({"next_action": "search_kb", "query_or_url": "sourdough", "reasoning": "kb"})
            return 200, json.dumps({"next_action": "send_to_hitl", "query_or_url": "", "reasoning": "enough"})
        if prompt.startswith("You are the Analyzer Node"):
            fact = {"fact": "A sourdough starter is fed flour and water daily.", "source": 1}
            return 200, json.dumps(
                {
                    "extracted_info": [fact],
                    "assessment": "answered",
                    "confidence_score": 0.8,
                    "suggestions_for_next_step": [],
                    "new_potential_urls": [],
                    "inconsistencies_found": "",
                }
            )
        return 200, "Feed the starter flour and water every day [1]."

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "sourdough.md").write_text("# Sourdough\n\nA sourdough starter is fed flour and water daily.\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = cli_env(tmp_path)
    env["PYTHONPATH"] = f"{site}:{env['PYTHONPATH']}"  # the installed package, beside the test env's packages

    def sleuth(*args, extra=None):
        e = {**env, **(extra or {})}
        cmd = [sys.executable, "-m", "sleuth", *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=e, cwd=elsewhere, timeout=120)

    ingest = sleuth("kb", "ingest", str(notes))
    assert ingest.returncode == 0, ingest.stderr
    with FakeGemini(responder) as fake:
        proc = sleuth(
            "--engine", "gemini", "--tools", "kb", "--json", "How do I feed a sourdough starter?",
            extra={"GEMINI_API_KEY": "k", "GEMINI_BASE_URL": fake.url},
        )  # fmt: skip
    assert_no_network(tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["engine"] == "gemini"
    assert data["answer"].startswith("Feed the starter flour and water every day [1].")  # the LLM's report
    # Every step was the LLM's, from the packaged prompts (a lost prompt would mean offline answers).
    kinds = ["decision" if "Decision Node" in c else "analyzer" if "Analyzer Node" in c else "report" for c in calls]
    assert kinds == ["decision", "analyzer", "report"], calls  # confidence 0.8 ends the round
    assert data["stop_reason"] == "confident"
    assert str(site) in subprocess.run(
        [sys.executable, "-c", "import sleuth, sys; print(sleuth.__file__)"],
        capture_output=True, text=True, env=env, cwd=elsewhere, check=True,
    ).stdout  # fmt: skip


def test_the_console_script_is_installed(installed):
    site, _ = installed
    script = site / "bin" / "sleuth"
    assert script.exists()
    assert "sleuth.main" in script.read_text()
