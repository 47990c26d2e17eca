"""One price table: USD per million input and output tokens, list prices for standard (not batch,
not cached) text use, as the vendors published them in 2025. Used only to *estimate* a run's cost.
A model not in the table, or any model behind a server other than its vendor's own API (a local
server, a router), has no price: the cost is reported as unknown, never guessed."""

from __future__ import annotations

# model name (or the start of a dated/versioned name) -> (input USD/M tokens, output USD/M tokens)
PRICES: dict[str, tuple[float, float]] = {
    # Gemini API (prompts up to 200k tokens)
    "gemini-2.5-pro": (1.25, 10.00),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.0-flash-lite": (0.075, 0.30),
    "gemini-2.0-flash": (0.10, 0.40),
    "gemini-1.5-flash": (0.075, 0.30),
    "gemini-1.5-pro": (1.25, 5.00),
    # OpenAI API
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5": (1.25, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "o4-mini": (1.10, 4.40),
    "o3-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
}

VENDOR_HOSTS = {"gemini": ("generativelanguage.googleapis.com",), "openai": ("api.openai.com",)}


def price_for(model: str) -> tuple[float, float] | None:
    """The exact name, else the longest table entry the name starts with ("gpt-4o-2024-08-06")."""
    model = (model or "").strip().lower()
    if model.startswith("models/"):
        model = model[len("models/") :]
    if model in PRICES:
        return PRICES[model]
    best = max((k for k in PRICES if model.startswith(k + "-")), key=len, default=None)
    return PRICES[best] if best else None


def engine_price(engine: str, model: str, base_url: str = "") -> tuple[float, float] | None:
    """The price of `model` as served by `engine`; None when unknown (other host, unknown model)."""
    if base_url:
        from urllib.parse import urlsplit

        host = (urlsplit(base_url).hostname or "").lower()
        if host not in VENDOR_HOSTS.get(engine, ()):
            return None
    return price_for(model)


def cost_usd(price: tuple[float, float] | None, prompt_tokens: int, output_tokens: int) -> float | None:
    if price is None:
        return None
    return (prompt_tokens * price[0] + output_tokens * price[1]) / 1_000_000
