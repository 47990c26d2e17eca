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


class _Worker:
    def __init__(self, idle: list[_Worker]) -> None:
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.idle = idle
        threading.Thread(target=self._loop, name="sleuth-bounded", daemon=True).start()

    def _loop(self) -> None:
        while True:
            fn, box, done = self.jobs.get()
            try:
                box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                box["error"] = exc
            finally:
                self.idle.append(self)  # idle again before the caller wakes: its next call finds this worker
                done.set()
                del fn, box, done  # an idle worker keeps nothing of its last call alive (its clients, files)


class WorkerPool:
    """Workers waiting for the next bounded call. The process shares one (`call_within`); a pool of
    its own sees no worker another caller abandoned rejoin at an unforeseeable moment."""

    def __init__(self) -> None:
        self._idle: list[_Worker] = []  # list.append / list.pop are atomic: no lock needed

    def call_within(self, seconds: float | None, fn: Callable[..., Any], *args, **kwargs) -> Any:
        """fn(*args, **kwargs), or TimeLimitExceeded once `seconds` have passed (None: no limit)."""
        if seconds is None:
            return fn(*args, **kwargs)
        if seconds <= 0:
            raise TimeLimitExceeded("not started: the time limit for this round (--time-limit) was already spent")
        try:
            worker = self._idle.pop()
        except IndexError:
            worker = _Worker(self._idle)
        box: dict[str, Any] = {}
        done = threading.Event()
        worker.jobs.put((lambda: fn(*args, **kwargs), box, done))
        if not done.wait(seconds):
            raise TimeLimitExceeded("stopped: the time limit for this round (--time-limit) ran out")
        if "error" in box:
            raise box["error"]
        return box["value"]


_POOL = WorkerPool()


def call_within(seconds: float | None, fn: Callable[..., Any], *args, **kwargs) -> Any:
    """fn(*args, **kwargs), or TimeLimitExceeded once `seconds` have passed (None: no limit)."""
    return _POOL.call_within(seconds, fn, *args, **kwargs)
