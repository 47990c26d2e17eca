"""One factory: the engine the settings ask for, wrapped so that the offline engine catches failures."""

from __future__ import annotations

from collections.abc import Callable

from utils.engine.gemini import GeminiEngine
from utils.engine.offline import OfflineEngine
from utils.engine.resilient import ResilientEngine
from utils.errors import EngineError


def make_engine(settings, warn: Callable[[str], None] | None = None):
    """Pick the engine for `settings.engine` (auto | gemini | offline)."""
    offline = OfflineEngine()
    choice = settings.engine
    if choice == "auto":
        choice = "gemini" if settings.gemini_api_key else "offline"
        if choice == "offline" and warn:
            warn("engine: offline (no GEMINI_API_KEY set; answers are extractive)")
    if choice == "offline":
        return offline
    if not settings.gemini_api_key:
        raise EngineError("--engine gemini needs GEMINI_API_KEY (set it in the environment or .env)")
    gem = GeminiEngine(settings.gemini_api_key, settings.gemini_model, settings.gemini_base_url)
    return ResilientEngine(gem, offline)
