"""What the research and batch commands share: settings from flags, the runtime, a new session,
the JSON record of a result, and the report file."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..api import (  # noqa: F401 - shared with the Python API
    kb_damage,
    new_session,
    one_shot,
    result_json,
    without_damaged_kb,
    without_kb,
)
from ..sessions import write_text_atomic
from .output import EXIT_USAGE, err


def settings_or_exit(args):
    from ..config import load_settings

    try:
        return load_settings(args)
    except ValueError as exc:
        err(str(exc))
        raise SystemExit(EXIT_USAGE) from exc


def make_runtime(settings, ui, feedback=None, store=True):
    from ..engine.factory import make_engine
    from ..errors import EngineError
    from ..runtime import Runtime, Tools
    from ..sessions import SessionStore

    def warn(text: str) -> None:  # -q: no progress, and no line saying which engine auto chose
        if not (getattr(ui, "quiet", False) and text.startswith("engine: ")):
            ui.warn(text)

    try:
        engine = make_engine(settings, warn=warn)
    except EngineError as exc:
        err(str(exc))
        raise SystemExit(EXIT_USAGE) from exc
    settings = without_damaged_kb(settings, ui)
    return Runtime(
        settings=settings,
        engine=engine,
        ui=ui,
        tools=Tools(settings),
        store=SessionStore(settings.data_dir) if store else None,
        feedback=feedback,
    )


def tools_problem(settings) -> str | None:
    """Why none of the tools asked for (--tools) can run, in one line saying what to do; None when
    one can. Checked before research starts, so that a run never ends on `no_tools` unexplained."""
    from ..registry import HITL
    from ..research.actions import offered_actions
    from ..runtime import Tools
    from .args import invoked_as

    damage = kb_damage(settings)  # a damaged knowledge base is left out of the run (without_damaged_kb)
    usable = without_kb(settings) if damage is not None else settings
    if offered_actions(usable, Tools(usable).kb_available) != [HITL]:
        return None
    why = []
    if damage is not None:
        why.append(str(damage))
    elif "kb" in settings.tools:
        why.append(f"the knowledge base in {settings.data_dir} is empty: add files with {invoked_as()} kb ingest PATH")
    if "google" in settings.tools:
        why.append("Google searches need GEMINI_API_KEY (or GOOGLE_API_KEY and GOOGLE_CSE_ID)")
    return "no tool can run: " + "; ".join(why) + "; or offer other tools with --tools duckduckgo,crawl"


def output_problem(path: str | None) -> str | None:
    """Why the report file ``-o PATH`` could not be written, or None: checked before any research,
    so that a long run does not end on a path that was never usable."""
    if not path:
        return None
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        return f"-o {path} is a folder; give a file name, e.g. -o {target / 'report.md'}"
    if not folder.is_dir():
        return f"-o {path}: the folder {folder} does not exist; create it or give another path"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"-o {path}: cannot write in the folder {folder}; give another path"
    return None


def write_output(path: str | None, shared: Mapping[str, Any]) -> str | None:
    """Write the session's report to ``path`` (if both exist); a one-line error instead of raising."""
    if path and shared.get("final_answer"):
        try:
            write_text_atomic(path, shared["final_answer"])
        except OSError as exc:
            return f"could not write {path}: {exc.strerror or exc}"
    return None


def write_reports(path: str, reports: list[str]) -> None:
    """Several reports in one Markdown file (batch -o), in the order given, separated by rules."""
    write_text_atomic(path, "\n\n---\n\n".join(r.strip() + "\n" for r in reports))
