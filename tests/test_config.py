"""Configuration precedence: flags > environment > .env file > defaults."""

from __future__ import annotations

import argparse

import pytest
from conftest import ROOT

from sleuth.utils.config import ENV_VARS, add_common_args, load_settings


def parse(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--engine")
    p.add_argument("--confidence", type=float)
    p.add_argument("--max-iterations", type=int)
    p.add_argument("--tools")
    add_common_args(p)
    return p.parse_args(argv)


def test_flags_beat_environment_beat_dotenv(tmp_path, monkeypatch):
    env_file = tmp_path / ".env"
    env_file.write_text("SLEUTH_CONFIDENCE=0.5\nSLEUTH_MAX_ITERATIONS=3\nSLEUTH_TOOLS=kb\nGEMINI_MODEL=from-file\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLEUTH_MAX_ITERATIONS", "5")
    s = load_settings(parse(["--tools", "duckduckgo,crawl"]))
    assert s.confidence == 0.5  # only in .env
    assert s.max_iterations == 5  # env beats .env
    assert s.tools == ("duckduckgo", "crawl")  # flag beats both
    assert s.gemini_model == "from-file"


def test_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = load_settings(parse([]))
    assert (s.engine, s.confidence, s.max_iterations, s.embedding) == ("auto", 0.7, 8, "")
    assert s.tools == ("duckduckgo", "google", "crawl", "kb", "wiki")
    assert s.wiki_url == "https://en.wikipedia.org/w/api.php"
    assert not s.google_configured


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--tools", "duckduckgo,altavista"], "unknown tool"),
        (["--confidence", "1.5"], "--confidence"),
        (["--max-iterations", "0"], "--max-iterations"),
        (["--engine", "gpt"], "unknown engine"),
    ],
)
def test_bad_values_give_clear_errors(argv, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=message):
        load_settings(parse(argv))


@pytest.mark.parametrize(
    "var, value, message",
    [
        ("SLEUTH_EMBEDDING", "bogus", "unknown embedding 'bogus'"),
        ("SLEUTH_TIME_LIMIT", "nan", "SLEUTH_TIME_LIMIT=nan is not a number"),
        ("SLEUTH_CACHE_TTL", "NaN", "SLEUTH_CACHE_TTL=NaN is not a number"),
        ("SLEUTH_CONFIDENCE", "nan", "SLEUTH_CONFIDENCE=nan is not a number"),
    ],
)
def test_bad_environment_values_give_clear_errors(var, value, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(var, value)
    with pytest.raises(ValueError, match=message):
        load_settings(parse([]))


def test_env_example_lists_every_variable():
    text = (ROOT / ".env.example").read_text()
    assert [v for v in ENV_VARS if v not in text] == []


def test_public_settings_hide_secrets(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GEMINI_API_KEY", "secret-key")
    d = load_settings(parse([])).public_dict()
    assert "secret-key" not in str(d) and d["gemini_api_key"] == "***"
