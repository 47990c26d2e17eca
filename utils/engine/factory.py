"""One factory: the engine the settings ask for, wrapped so that the offline engine catches failures."""

from __future__ import annotations

from collections.abc import Callable

from ..config import DEFAULT_LLM_TIMEOUT_S
from ..errors import EngineError
from .offline import OfflineEngine
from .pricing import engine_price
from .protocol import Engine
from .resilient import ResilientEngine


def pick_engine(settings) -> tuple[str, str]:
    """(engine, why) for `settings.engine`; `auto` prefers Gemini, then an OpenAI-compatible server."""
    if settings.engine != "auto":
        return settings.engine, f"--engine {settings.engine}"
    if settings.gemini_api_key:
        return "gemini", "GEMINI_API_KEY is set"
    if settings.openai_base_url:
        return "openai", f"server {settings.openai_base_url}"
    if settings.openai_api_key:
        return "openai", "OPENAI_API_KEY is set"
    return "offline", "no GEMINI_API_KEY, OPENAI_BASE_URL or OPENAI_API_KEY set; answers are extractive"


def make_engine(settings, warn: Callable[[str], None] | None = None) -> Engine:
    """Pick the engine for `settings.engine` (auto | gemini | openai | offline) and say which on stderr
    when auto chose it."""
    offline = OfflineEngine()
    choice, why = pick_engine(settings)
    if choice == "offline":
        if settings.engine == "auto" and warn:
            warn(f"engine: offline ({why})")
        return offline
    primary: Engine
    if choice == "gemini":
        from .gemini import GeminiEngine

        if not settings.gemini_api_key:
            raise EngineError("--engine gemini needs GEMINI_API_KEY (set it in the environment or .env)")
        model = settings.model or settings.gemini_model
        primary = GeminiEngine(
            settings.gemini_api_key,
            model,
            settings.gemini_base_url,
            timeout_s=settings.llm_timeout or DEFAULT_LLM_TIMEOUT_S,
            context_tokens=settings.context_tokens or None,
            price=settings.price or engine_price("gemini", model, settings.gemini_base_url),
        )
    else:
        from .openai import OpenAIEngine

        primary = OpenAIEngine(
            model=settings.model,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key,
            timeout_s=settings.llm_timeout or None,
            context_tokens=settings.context_tokens or None,
            price=settings.price or engine_price("openai", settings.model or "gpt-4o-mini", settings.openai_base_url),
            warn=warn,
        )
    if warn:
        if settings.engine == "auto":
            model = primary.model or "the server's first model"
            warn(f"engine: {choice} ({why}; model {model})")
        if settings.max_cost and primary.price is None:
            warn("--max-cost has no effect: no price is known for this model (set SLEUTH_PRICE=IN,OUT)")
    return ResilientEngine(primary, offline)
