"""Runtime dependencies handed to the nodes at construction: settings, engine, UI, session store
and the tool clients. Nothing here is research state (that lives in the shared store); tool
clients are created lazily so that start-up stays light, and are shared by batch jobs so that
caches, rate limits and per-host intervals are shared too."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from .config import Settings
from .storage import WriteProblems, no_room

if TYPE_CHECKING:
    from .engine.protocol import Engine, EngineContext
    from .kb.store import KnowledgeBase
    from .research.state import Shared
    from .sessions import SessionStore
    from .web.cache import Cache
    from .web.fetcher import Fetcher
    from .web.search import SearchClient
    from .web.wiki import WikiClient


class Progress(Protocol):
    """What the nodes tell the person watching (utils/cli/ui.py: PlainUI and the live RichUI)."""

    def warn(self, text: str) -> None: ...
    def started(self, shared: dict) -> None: ...
    def step(self, step: int, budget: int, action: str, query: str) -> None: ...
    def step_done(self, entry: dict) -> None: ...
    def analyzed(self, confidence: float, n_sources: int, n_facts: int, fallback: bool = False) -> None: ...
    def stopping(self, reason: str, detail: str) -> None: ...
    def report_chunk(self, text: str) -> None: ...
    def report(self, markdown: str) -> None: ...


class Tools:
    """Lazily built, thread-safe tool clients (search, crawler, wiki, knowledge base, cache)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._lock = threading.RLock()
        self._cache: Cache | None = None
        self._search: SearchClient | None = None
        self._fetcher: Fetcher | None = None
        self._kb: KnowledgeBase | None = None
        self._wiki: WikiClient | None = None
        self._kb_nonempty = False
        self.problems = WriteProblems()  # what could not be written (a full disk): one line at the end

    def cache(self):
        with self._lock:
            if self._cache is None:
                from .web.cache import Cache

                s = self.settings
                self._cache = Cache(
                    s.data_dir / "cache", ttl=s.cache_ttl, enabled=not s.no_cache, problems=self.problems
                )
            return self._cache

    def search(self):
        with self._lock:
            if self._search is None:
                from .web.search import SearchClient

                self._search = SearchClient.from_settings(self.settings, cache=self.cache())
            return self._search

    def fetcher(self):
        with self._lock:
            if self._fetcher is None:
                from .web.fetcher import Fetcher

                s = self.settings
                self._fetcher = Fetcher(
                    allow_private_hosts=s.allow_private_hosts,
                    ignore_robots=s.ignore_robots,
                    per_host_interval=s.crawl_interval,
                    cache=self.cache(),
                )
            return self._fetcher

    def wiki(self):
        with self._lock:
            if self._wiki is None:
                from .web.wiki import WikiClient

                self._wiki = WikiClient(self.settings.wiki_url, cache=self.cache())
            return self._wiki

    def kb(self):
        with self._lock:
            if self._kb is None:
                from .kb.store import KnowledgeBase

                self._kb = KnowledgeBase.for_settings(self.settings)
                self._kb.write_problems = self.problems  # a write that finds no room is told at the end
            return self._kb

    def term_idf(self, text: str) -> dict[str, float]:
        """How rare `text`'s words are in the knowledge base (word -> IDF; empty for a small KB)."""
        return self.kb().term_idf(text)

    def close_kb(self) -> None:
        """Close the knowledge base if it is open (the next use opens it again)."""
        with self._lock:
            kb, self._kb = self._kb, None
        if kb is not None:
            kb.close()

    def close(self) -> None:
        """Close what the clients hold open (the knowledge base, the cache, the crawler's connections);
        a later use opens them again. For the Python API and the tests, which outlive a run."""
        self.close_kb()
        with self._lock:
            cache, fetcher = self._cache, self._fetcher
            self._cache = self._search = self._fetcher = self._wiki = None
        if fetcher is not None:
            fetcher.close()
        if cache is not None:
            cache.close()

    def kb_available(self) -> bool:
        """True when the knowledge base has something to search (checked cheaply when embedded)."""
        if self._kb_nonempty:
            return True
        try:
            if self.settings.chroma_url:
                n = self.kb().count()
            else:
                from .kb.store import KnowledgeBase

                n = KnowledgeBase.quick_count(self.settings.data_dir / "kb")
        except Exception:  # noqa: BLE001 - an unreachable KB is simply not offered
            return False
        self._kb_nonempty = n > 0
        return self._kb_nonempty


@dataclass
class Runtime:
    settings: Settings
    engine: Engine
    ui: Progress
    tools: Tools
    store: SessionStore | None = None  # None keeps nothing on disk
    feedback: Callable[[dict], str | None] | None = None  # asks for feedback; None means "no feedback"
    stream_report: bool = False
    cancel: threading.Event = field(default_factory=threading.Event)  # set on Ctrl-C: jobs stop at their next step
    deadline: float | None = None  # time.monotonic() at which this round's --time-limit is spent

    def start_round(self) -> None:
        """A research run or feedback round begins: its wall-clock budget (--time-limit) restarts.
        The step, token and cost budgets count from the round's start marks in the shared store."""
        limit = self.settings.time_limit
        self.deadline = time.monotonic() + limit if limit else None

    def time_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def context(self, shared: Shared, actions: Sequence[str]) -> EngineContext:
        """What the engine is told for this step (`actions`: those offered): the shared store, the
        run's settings and deadline, and the knowledge base to ask how rare words are."""
        from .engine.protocol import EngineContext

        s = self.settings
        return EngineContext.of(
            shared,
            actions=actions,
            threshold=s.confidence,
            max_iterations=s.max_iterations,
            deadline=self.deadline,
            term_idf=self.tools.term_idf,
        )

    def for_job(self, **changes) -> Runtime:
        """A copy for one batch job: same engine and tool clients, its own UI/feedback."""
        return replace(self, **changes)

    def checkpoint(self, shared: Shared) -> None:
        """Save the session; one that cannot be written (a full disk) is recorded and the run goes
        on, so that its answer is still printed (the command then ends with one line and status 2)."""
        if self.store is not None:
            try:
                self.store.save(shared)
            except OSError as exc:
                self.tools.problems.add("the session", self.store.dir, no_room(exc) or exc.strerror or str(exc))

    def close(self) -> None:
        """Close the session store's index and the tool clients (a run's own, not shared ones)."""
        if self.store is not None:
            self.store.close()
        self.tools.close()
