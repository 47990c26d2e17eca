"""docs/design.md names the code as it is: every path it gives exists, and every module under
utils/ has a row in its table of modules (where a reader looks for one)."""

from __future__ import annotations

import fnmatch
import re

from conftest import ROOT

DESIGN = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
PATH = re.compile(r"(?<![\w/.])((?:utils|tests|bench|prompts|docs)/[\w/*.-]*[\w*/])")


def test_every_path_the_design_names_exists():
    missing = []
    for path in sorted(set(PATH.findall(DESIGN))):
        found = list(ROOT.glob(path)) if "*" in path else [ROOT / path] if (ROOT / path).exists() else []
        if not found:
            missing.append(path)
    assert not missing, f"docs/design.md names paths that do not exist: {missing}"


def module_table() -> str:
    """The rows of the design's table of modules (the one headed `| module | inputs → outputs |`)."""
    lines = DESIGN.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| module |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1])  # the module column
    return "\n".join(rows)


def test_every_module_under_utils_is_in_the_design_table_of_modules():
    table = module_table()
    named = set(re.findall(r"[\w*]+\.py", table))
    folders = set(re.findall(r"(\w+)/`", table))  # `utils/web/search.py`, `backends/`: the folder's modules
    missing = []
    for f in sorted((ROOT / "utils").rglob("*.py")):
        if f.name == "__init__.py" or f.parent.name in folders:
            continue
        if not any(fnmatch.fnmatch(f.name, n) for n in named):
            missing.append(str(f.relative_to(ROOT)))
    assert not missing, f"modules missing from the table of modules in docs/design.md: {missing}"
