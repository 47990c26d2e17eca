"""What the report and the progress show: Key sources are what the answer cites (the others listed
apart, shorter), what is asked is named as the user knows it (`web search (SearXNG)`), and the
footer says when the engine fell back."""

from __future__ import annotations

import re

from conftest import QUILLWORT_NOTES as NOTES
from conftest import ingest_notes


def section(report: str, heading: str) -> str:
    part = report.split(f"## {heading}\n", 1)
    return part[1].split("\n## ", 1)[0] if len(part) == 2 else ""


def test_key_sources_are_the_cited_ones_and_the_others_are_listed_apart(tmp_path, cli):
    ingest_notes(tmp_path, cli, NOTES)
    proc = cli("--engine", "offline", "--tools", "kb", "What is the default drum gap of the Quillwort press?")
    assert proc.returncode == 0, proc.stderr
    report = proc.stdout
    cited = set(re.findall(r"\[(\d+)\]", section(report, "Answer")))
    key = re.findall(r"^- \[(\d+)\]", section(report, "Key sources"), re.M)
    also = re.findall(r"^- \[(\d+)\]", section(report, "Also read, not cited"), re.M)
    assert key and set(key) == cited
    assert also and not set(also) & cited
    assert "> " not in section(report, "Also read, not cited")  # shorter: no quotes


def test_progress_and_report_name_the_search_not_the_action(tmp_path, cli):
    proc = cli("--engine", "offline", "--tools", "duckduckgo", "--searxng-url", "http://127.0.0.1:1", "Who wrote Dune?")
    assert "web search (SearXNG)" in proc.stderr
    assert "web search" in section(proc.stdout, "Research journey")
    assert "search_duckduckgo" not in proc.stderr + proc.stdout


def test_google_through_gemini_grounding_is_named_so(tmp_path, cli):
    env = {"GEMINI_API_KEY": "k", "GEMINI_BASE_URL": "http://127.0.0.1:9"}
    proc = cli("--engine", "offline", "--tools", "google", "Who wrote Dune?", env=env)
    assert "Google (Gemini grounding)" in proc.stderr
    assert "search_google" not in proc.stderr + proc.stdout


def test_the_footer_says_the_engine_fell_back(tmp_path, cli):
    ingest_notes(tmp_path, cli, NOTES)
    env = {"GEMINI_API_KEY": "k", "GEMINI_BASE_URL": "http://127.0.0.1:9"}
    proc = cli("--tools", "kb", "--max-iterations", "1", "--llm-timeout", "2", "What drives the drums?", env=env)
    assert proc.returncode == 0, proc.stderr
    footer = next(line for line in proc.stdout.splitlines() if line.startswith("*Confidence"))
    assert "fell back" in footer and "$0.0000" not in footer
