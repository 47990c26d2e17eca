"""Every error type Sleuth raises on purpose, in one place (callers catch these, never bare strings)."""

from __future__ import annotations


class SleuthError(Exception):
    """Base: a problem the user can act on; the CLI prints its message on one line."""


class EngineError(SleuthError, RuntimeError):
    """An LLM engine could not answer (network, quota, invalid JSON after its retry)."""

    usage: dict | None = None  # tokens spent before the failure


# "partial": results came, but part of the backend failed (SearXNG engines that did not answer)
BACKEND_ERROR_KINDS = ("no_results", "rate_limited", "timeout", "network", "auth", "config", "error", "partial")


class BackendError(SleuthError):
    """One search backend failed; ``kind`` is one of BACKEND_ERROR_KINDS."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None, network: bool = True):
        super().__init__(message)
        self.kind = kind if kind in BACKEND_ERROR_KINDS else "error"
        self.message = message
        self.retry_after = retry_after
        self.network = network  # False when no request was sent (cool-down skip, bad config)


class FetchError(SleuthError):
    """A fetch failed; ``kind`` names why (see web.fetcher.ERROR_KINDS). Deliberately not an OSError,
    so it passes straight through urllib3/requests when raised from inside a connection."""

    def __init__(
        self, kind: str, message: str, *, status: int | None = None, final_url: str = "", content_type: str = ""
    ):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.final_url = final_url
        self.content_type = content_type


class KBError(SleuthError, RuntimeError):
    """The knowledge base cannot do what was asked (bad path, unreachable server, ...)."""


class EmbeddingMismatch(KBError):
    """The knowledge base was built with another embedding than the one selected."""


class EmbeddingUnavailable(KBError):
    """The selected embedding cannot run here (no model, no key, no network)."""


class KBDamaged(KBError):
    """A file of the knowledge base is not a database any more (garbage written over it, a bad disk)."""


class KBNoRoom(KBError):
    """The knowledge base could not be written: the disk is full, over quota or read-only."""


class SessionNotFound(SleuthError, LookupError):
    """No saved session has that id."""


class PdfUnreadable(SleuthError, ValueError):
    """A PDF whose text cannot be read (broken, or encrypted with a password)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill PID`, systemd, Docker, CI runners): raised in the main thread by main.py's
    handler, so it takes the Ctrl-C path (answers printed, sessions saved resumable); exit 143."""


class TimeLimitExceeded(SleuthError):
    """The round's --time-limit was reached: the call in flight was abandoned."""


class UsageError(SleuthError, ValueError):
    """Bad input the caller must fix: a setting out of range, an empty question, an unknown tool.
    The Python API and the MCP server raise it where the CLI prints a usage line (exit status 2)."""


class Interrupted(SleuthError):
    """A research run was cancelled (another thread, an MCP client): it stopped at a step boundary
    and its session is saved; ``session_id`` resumes it."""

    def __init__(self, session_id: str):
        super().__init__(f"research interrupted; resume session {session_id}")
        self.session_id = session_id
