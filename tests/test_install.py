"""The dev install is whole: every requirement the project's files pin is installed at that
version and imports (a package whose extra went missing fails here, not in a bench later)."""

from __future__ import annotations

import importlib
import importlib.metadata as md
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pins() -> dict[str, str]:
    out = {}
    for name in ("requirements.txt", "requirements-dev.txt", "requirements-model.txt"):
        for line in (ROOT / name).read_text().splitlines():
            m = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;]+)", line.strip())
            if m:
                out[m.group(1)] = m.group(2)
    return out


def modules_of(dist: str) -> list[str]:
    by_dist: dict[str, list[str]] = {}
    for mod, dists in md.packages_distributions().items():
        for d in dists:
            by_dist.setdefault(re.sub(r"[-_.]+", "-", d).lower(), []).append(mod)
    mods = by_dist.get(re.sub(r"[-_.]+", "-", dist).lower(), [])
    return sorted(m for m in mods if not m.startswith("_") and m.isidentifier())


@pytest.mark.parametrize("dist", sorted(pins()))
def test_every_pinned_requirement_is_installed_and_imports(dist):
    assert md.version(dist) == pins()[dist], f"{dist}: installed {md.version(dist)}, pinned {pins()[dist]}"
    mods = modules_of(dist)
    assert mods, f"{dist} provides no importable module"
    for mod in mods[:3]:
        importlib.import_module(mod)


def test_the_package_metadata_matches_the_pins():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'requires-python = ">=3.11"' in text  # numpy, google-genai and platformdirs need 3.11
    assert "license = {" not in text and "license = { " not in text  # PEP 639 string, not the table
