"""Sleuth, a research agent for the terminal — and its Python API.

    import sleuth

    sleuth.KnowledgeBase().ingest(["notes/"])
    report = sleuth.research("What did I write about sourdough?", tools=["kb"])
    print(report.answer)  # cited [n]; report.sources[n-1] is source n

- `research(question, *, tools=None, engine=None, data_dir=None, progress=None, **settings) -> Report`
- `resume(session_id, feedback=None, **same) -> Report`
- `KnowledgeBase(data_dir=None)` with `.ingest(paths)`, `.search(query, k=10)`, `.stats()`
- `Report`: `.answer .confidence .stop_reason .sources .session_id .markdown .to_dict()`
- errors: `sleuth.errors` (UsageError, SessionNotFound, EngineError, KBError, Interrupted, ...)

Settings are the CLI's flags as keywords (`max_iterations=3`, `confidence=0.8`, `time_limit=60`,
`model=...`, `remember=False`, ...); the environment and a `.env` file apply as for the CLI. Nothing
prints: pass `progress=callable(progress, total, message)` to follow a run. Importing this package
loads nothing heavy (the graph, engines and the knowledge base load on first use).

In a checkout this folder is the package root (see utils/checkout.py); main.py is the CLI.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

__version__ = "0.2.0"
__all__ = ["KnowledgeBase", "Report", "Source", "errors", "research", "resume"]

if __package__:  # imported as the package (pytest also imports this file on its own, as `__init__`)
    from .utils import errors

    sys.modules.setdefault(f"{__name__}.errors", errors)  # `from sleuth.errors import SessionNotFound`

if TYPE_CHECKING:
    import threading

    from .utils.api import KnowledgeBase, Progress, Report, Source


def research(
    question: str,
    *,
    tools: list[str] | str | None = None,
    engine=None,
    data_dir: str | Path | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    **settings,
) -> Report:
    """Research `question` and return its `Report` (the session is saved in the data folder).

    `tools`: which of duckduckgo, google, crawl, kb, wiki to offer (default all that are configured);
    `engine`: "auto", "offline", "gemini", "openai", or an engine object; `data_dir`: sessions, cache
    and knowledge base (default SLEUTH_DATA_DIR or the per-user folder); `cancel`: set this event to
    stop the run at its next step (`errors.Interrupted`; its session resumes). Raises `errors.UsageError`
    for a bad setting, `errors.EngineError` for an engine that cannot start."""
    from .flow import run_flow
    from .utils import api

    s = api.load(tools=tools, engine=engine, data_dir=data_dir, **settings)
    return api.research(question, s, run_flow=run_flow, engine=engine, progress=progress, cancel=cancel)


def resume(
    session_id: str,
    feedback: str | None = None,
    *,
    tools: list[str] | str | None = None,
    engine=None,
    data_dir: str | Path | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    **settings,
) -> Report:
    """Continue a saved session: an interrupted run goes on; a finished one is researched again with
    `feedback` (or returned as it is without). It runs with the settings it was started with (tools,
    engine, model, confidence, budgets) but for those given here. Raises `errors.SessionNotFound`
    for an unknown id."""
    from .flow import run_flow
    from .utils import api

    s = api.load(tools=tools, engine=engine, data_dir=data_dir, **settings)
    given = {k for k, v in {"tools": tools, "engine": engine, **settings}.items() if v is not None}
    return api.resume(
        session_id, s, feedback, run_flow=run_flow, engine=engine, progress=progress, cancel=cancel, given=given
    )


def __getattr__(name: str):
    if name in ("KnowledgeBase", "Report", "Source"):
        from .utils import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
