"""Session persistence: one JSON file per session, rewritten atomically after every step
(temp file in the same folder, fsync, rename), so a crash loses at most the step in flight."""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
from pathlib import Path

from .errors import SessionNotFound
from .text import valid_text

_ID = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write the whole file or nothing (temp file, fsync, rename): a reader never sees half of it.
    Sessions and report files (-o) are written this way. A lone surrogate, which UTF-8 cannot hold
    (a "\\ud800" in a search API's JSON), is written as U+FFFD."""
    text = valid_text(text)
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class SessionStore:
    def __init__(self, data_dir: Path):
        self.dir = Path(data_dir) / "sessions"
        self._lock = threading.Lock()

    def path(self, session_id: str) -> Path:
        if not _ID.match(session_id or ""):
            raise SessionNotFound(f"invalid session id {session_id!r}")
        return self.dir / f"{session_id}.json"

    def save(self, shared: dict) -> Path:
        from .research.state import now_iso, saved_form

        shared["updated_at"] = now_iso()
        data = json.dumps(saved_form(shared), ensure_ascii=False, indent=1)
        target = self.path(shared["session_id"])
        with self._lock:
            self.dir.mkdir(parents=True, exist_ok=True)
            write_text_atomic(target, data)
        return target

    def load(self, session_id: str) -> dict:
        p = self.path(session_id)
        if not p.is_file():
            matches = sorted(self.dir.glob(f"{session_id}*.json")) if self.dir.is_dir() else []
            if len(matches) != 1:
                raise SessionNotFound(f"no session {session_id!r} in {self.dir}")
            p = matches[0]
        from .research.state import restored

        try:
            return restored(json.loads(p.read_text(encoding="utf-8")))
        except (json.JSONDecodeError, RecursionError) as exc:  # RecursionError: nested too deeply
            raise SessionNotFound(f"session file {p} is unreadable: {exc}") from exc
        except ValueError as exc:
            raise SessionNotFound(f"session file {p} is not a Sleuth session: {exc}") from exc

    def list(self) -> list[dict]:
        """The saved sessions, newest first; files that are not sessions are left out
        (`sessions show ID` says what is wrong with one)."""
        from .research.state import restored

        out = []
        if not self.dir.is_dir():
            return out
        for p in self.dir.glob("*.json"):
            try:
                d = restored(json.loads(p.read_text(encoding="utf-8")))
            except (OSError, ValueError, RecursionError):  # JSONDecodeError is a ValueError
                continue
            out.append(
                {
                    k: d.get(k)
                    for k in (
                        "session_id",
                        "created_at",
                        "updated_at",
                        "original_query",
                        "stop_reason",
                        "confidence_score",
                        "status",
                        "iteration_count",
                    )
                }
            )
        out.sort(key=lambda d: d.get("created_at") or "", reverse=True)
        return out
