"""utils/deadline.call_within: a bounded call returns, raises, or is abandoned at its limit; a worker
that finished in time serves the next call (per-thread clients survive from one step to the next)."""

from __future__ import annotations

import threading

import pytest

from sleuth.utils.deadline import call_within
from sleuth.utils.errors import TimeLimitExceeded


def test_a_call_in_time_returns_its_value_and_its_errors():
    assert call_within(5, lambda a, b=0: a + b, 2, b=3) == 5
    with pytest.raises(ZeroDivisionError):
        call_within(5, lambda: 1 / 0)
    assert call_within(None, threading.get_ident) == threading.get_ident()  # no limit: no thread


def test_a_call_past_its_limit_is_abandoned_and_its_worker_is_not_reused_meanwhile():
    release = threading.Event()
    with pytest.raises(TimeLimitExceeded):
        call_within(0.05, release.wait, 30)
    busy = [t for t in threading.enumerate() if t.name == "sleuth-bounded"]
    other = call_within(5, threading.get_ident)  # served while the abandoned call still runs
    release.set()
    assert busy and other in {t.ident for t in threading.enumerate() if t.name == "sleuth-bounded"}
    with pytest.raises(TimeLimitExceeded):
        call_within(0, lambda: None)


def test_consecutive_calls_in_time_run_on_the_same_worker_thread():
    first = call_within(5, threading.get_ident)
    assert call_within(5, threading.get_ident) == first != threading.get_ident()
