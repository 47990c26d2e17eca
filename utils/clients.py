"""Clients for remote APIs, each built by one factory from values that come from utils.config.Settings.

The SDKs are imported inside the factories, so importing this module costs nothing (`main.py --help`
never loads google-genai). Callers pass the key and endpoint they were given; nothing here reads the
environment.
"""

from __future__ import annotations

# HTTP statuses worth another attempt: timeouts, rate limits and passing server errors.
RETRY_STATUS = (408, 429, 500, 502, 503, 504)


def gemini_client(
    api_key: str,
    base_url: str = "",
    timeout_s: float = 60.0,
    attempts: int = 3,
    retry_delay: float = 1.0,
):
    """A google-genai Client: `timeout_s` per request, up to `attempts` tries on RETRY_STATUS with
    exponential backoff from `retry_delay` seconds (at most 20 s), `base_url` to use another endpoint
    (a proxy, or a fake one in tests; empty = Google's)."""
    from google import genai
    from google.genai import types

    http = types.HttpOptions(
        timeout=int(timeout_s * 1000),
        base_url=base_url or None,
        retry_options=types.HttpRetryOptions(
            attempts=attempts,
            initial_delay=retry_delay,
            max_delay=20.0,
            http_status_codes=list(RETRY_STATUS),
        ),
    )
    return genai.Client(api_key=api_key, http_options=http)
