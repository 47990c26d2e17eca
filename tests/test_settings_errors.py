"""A setting that cannot be read is one line naming the variable (or file) and what it takes, status 2."""

from __future__ import annotations

import pytest

EXIT_USAGE = 2


@pytest.mark.parametrize(
    ("var", "takes"),
    [
        ("SLEUTH_MAX_ITERATIONS", "a whole number"),
        ("SLEUTH_TIME_LIMIT", "a number"),
        ("SLEUTH_MEMORY_LIMIT", "a whole number"),
        ("SLEUTH_CONTEXT_TOKENS", "a whole number"),
        ("SLEUTH_MAX_COST", "a number"),
    ],
)
def test_a_numeric_variable_that_is_not_a_number_is_named(cli, var, takes):
    proc = cli("--tools", "kb", "What is a kite?", env={var: "abc"})
    assert proc.returncode == EXIT_USAGE
    (line,) = proc.stderr.strip().splitlines()
    assert f"{var}=abc" in line and takes in line and "invalid literal" not in line, line


def test_a_numeric_setting_in_dotenv_is_named_with_the_file(cli, tmp_path):
    (tmp_path / ".env").write_text("SLEUTH_MAX_ITERATIONS=lots\n")
    proc = cli("kb", "stats")
    assert proc.returncode == EXIT_USAGE
    (line,) = proc.stderr.strip().splitlines()
    assert "SLEUTH_MAX_ITERATIONS=lots" in line and ".env" in line, line


def test_a_dotenv_that_is_not_utf8_is_named(cli, tmp_path):
    (tmp_path / ".env").write_bytes(b"SLEUTH_ENGINE=offline\nSLEUTH_MODEL=caf\xff\n")
    for args in (("--tools", "kb", "What is a kite?"), ("kb", "stats"), ("sessions", "list")):
        proc = cli(*args)
        assert proc.returncode == EXIT_USAGE, (args, proc.stderr)
        (line,) = proc.stderr.strip().splitlines()
        assert str(tmp_path / ".env") in line and "UTF-8" in line and "codec" not in line, line
