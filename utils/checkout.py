"""Load a source checkout as the `sleuth` package.

An installed Sleuth is the `sleuth` package (main, flow, nodes, utils, prompts inside it); a
checkout keeps the design card's flat layout. `python main.py`, the tests and the bench scripts
call `as_package()` so that the checkout's folder is imported under the same `sleuth` name, and
the package's relative imports work unchanged. Standard library only: `--help` stays fast.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def as_package(root: Path = ROOT) -> ModuleType:
    """Register `root` as the `sleuth` package (once) and return it."""
    pkg = sys.modules.get("sleuth")
    if pkg is not None and list(getattr(pkg, "__path__", [])) == [str(root)]:
        return pkg
    spec = importlib.util.spec_from_file_location(
        "sleuth", root / "__init__.py", submodule_search_locations=[str(root)]
    )
    assert spec is not None and spec.loader is not None  # a file location always has a spec and loader
    pkg = importlib.util.module_from_spec(spec)
    sys.modules["sleuth"] = pkg
    spec.loader.exec_module(pkg)
    return pkg
