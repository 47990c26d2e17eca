"""utils/deadline.call_within: a bounded call returns, raises, or is abandoned at its limit; a worker
that finished in time serves the next call (per-thread clients survive from one step to the next).

Each test that looks at which worker ran a call has a WorkerPool of its own: in the process-wide
pool a worker abandoned by an earlier test rejoins whenever its call ends, and could serve the
next call in its place."""

from __future__ import annotations

import threading

import pytest

from sleuth.utils.deadline import WorkerPool, call_within
from sleuth.utils.errors import TimeLimitExceeded


def test_a_call_in_time_returns_its_value_and_its_errors():
    assert call_within(5, lambda a, b=0: a + b, 2, b=3) == 5
    with pytest.raises(ZeroDivisionError):
        call_within(5, lambda: 1 / 0)
    assert call_within(None, threading.get_ident) == threading.get_ident()  # no limit: no thread
    with pytest.raises(TimeLimitExceeded):
        call_within(0, lambda: None)  # no time left: not started


def test_a_call_past_its_limit_is_abandoned_and_its_worker_is_not_reused_meanwhile():
    pool = WorkerPool()
    started, release = threading.Event(), threading.Event()
    stuck: list[int] = []

    def blocked():
        stuck.append(threading.get_ident())
        started.set()
        release.wait(30)

    with pytest.raises(TimeLimitExceeded):
        pool.call_within(0.05, blocked)
    assert started.wait(30)  # the abandoned call is running on its worker
    other = pool.call_within(30, threading.get_ident)  # served while the abandoned call still runs
    release.set()
    assert other != stuck[0] and other != threading.get_ident()


def test_consecutive_calls_in_time_run_on_the_same_worker_thread():
    pool = WorkerPool()
    first = pool.call_within(30, threading.get_ident)
    assert pool.call_within(30, threading.get_ident) == first != threading.get_ident()
