"""Calls bounded by a wall-clock budget: the call runs in a daemon thread and, when the time is
spent, is abandoned rather than waited for (its thread ends on its own; a daemon thread never
keeps the process alive). Used for LLM calls (engine/resilient.py) and tool steps (nodes.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .errors import TimeLimitExceeded


def call_within(seconds: float | None, fn: Callable[..., Any], *args, **kwargs) -> Any:
    """fn(*args, **kwargs), or TimeLimitExceeded once `seconds` have passed (None: no limit)."""
    if seconds is None:
        return fn(*args, **kwargs)
    if seconds <= 0:
        raise TimeLimitExceeded("the time limit was already spent; the call was not started")
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="sleuth-bounded", daemon=True).start()
    if not done.wait(seconds):
        raise TimeLimitExceeded(f"abandoned after {seconds:.1f} s: the time limit was reached")
    if "error" in box:
        raise box["error"]
    return box["value"]
