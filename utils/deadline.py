"""Calls bounded by a wall-clock budget: the call runs on a daemon worker thread and, when the time
is spent, is abandoned rather than waited for (the worker finishes it on its own; a daemon thread
never keeps the process alive). Used for LLM calls (engine/resilient.py) and tool steps (nodes.py).

Workers are reused: a call that finished in time leaves its worker idle for the next one, so
per-thread clients (search backends' HTTP clients, the crawler's session) live across steps
instead of being built again for every step. An abandoned worker rejoins once its call ends."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from .errors import TimeLimitExceeded

_idle: list[_Worker] = []  # list.append / list.pop are atomic: no lock needed


class _Worker:
    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="sleuth-bounded", daemon=True).start()

    def _loop(self) -> None:
        while True:
            fn, box, done = self.jobs.get()
            try:
                box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                box["error"] = exc
            finally:
                _idle.append(self)  # idle again before the caller wakes: its next call finds this worker
                done.set()


def call_within(seconds: float | None, fn: Callable[..., Any], *args, **kwargs) -> Any:
    """fn(*args, **kwargs), or TimeLimitExceeded once `seconds` have passed (None: no limit)."""
    if seconds is None:
        return fn(*args, **kwargs)
    if seconds <= 0:
        raise TimeLimitExceeded("not started: the time limit for this round (--time-limit) was already spent")
    try:
        worker = _idle.pop()
    except IndexError:
        worker = _Worker()
    box: dict[str, Any] = {}
    done = threading.Event()
    worker.jobs.put((lambda: fn(*args, **kwargs), box, done))
    if not done.wait(seconds):
        raise TimeLimitExceeded("stopped: the time limit for this round (--time-limit) ran out")
    if "error" in box:
        raise box["error"]
    return box["value"]
