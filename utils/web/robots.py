"""robots.txt as RFC 9309 reads it (protego), and the rules of each origin a fetcher has read,
kept once per origin and shared by its threads (Fetcher loads them: utils/web/fetcher.py)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

DEFAULT_UA = "Sleuth/0.1 (+https://github.com/sleuth-research/sleuth; research agent)"
ROBOTS_MAX_BYTES = 512_000


class RobotsRules:
    """Each origin's robots.txt, loaded once by `load(origin)` (a parser, or None: everything allowed)."""

    def __init__(self, user_agent: str, load: Callable[[str], Any]):
        self.user_agent, self._load = user_agent, load
        self._lock = threading.Lock()
        self._parsers: dict[str, Any] = {}  # origin -> protego.Protego | None (None = allow all)
        self._locks: dict[str, threading.Lock] = {}

    def allow(self, url: str) -> bool:
        parts = urlsplit(url)
        origin = f"{parts.scheme.lower()}://{parts.netloc.lower()}"
        with self._lock:
            lock = self._locks.setdefault(origin, threading.Lock())
        with lock:
            with self._lock:
                known = origin in self._parsers
                parser = self._parsers.get(origin)
            if not known:
                parser = self._load(origin)
                with self._lock:
                    self._parsers[origin] = parser
        if parser is None:
            return True
        try:
            return bool(parser.can_fetch(url, robots_token(self.user_agent)))
        except Exception:  # noqa: BLE001
            return True


def parse_robots(text: str):
    """robots.txt parsed as RFC 9309 says (protego): ``*`` and ``$`` wildcards, and the longest
    matching rule wins (``Allow`` on a tie) — the standard library's ``urllib.robotparser`` takes
    the first matching rule and treats wildcards literally."""
    from protego import Protego

    return Protego.parse(text)


def robots_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against ("Sleuth" for "Sleuth/0.1 (...)")."""
    m = re.match(r"[A-Za-z_-]+", user_agent.strip())
    return m.group(0) if m else user_agent


def robots_allows(text: str, url: str, user_agent: str = DEFAULT_UA) -> bool:
    """Whether robots.txt ``text`` lets ``user_agent`` fetch ``url``."""
    return bool(parse_robots(text).can_fetch(url, robots_token(user_agent)))
