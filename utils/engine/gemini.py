"""Gemini through google-genai: JSON constrained by a response schema, validated with pydantic.
google-genai is imported only when a call is made."""

from __future__ import annotations

import threading
from collections.abc import Callable

from pydantic import BaseModel, ValidationError

from ..clients import gemini_client
from ..errors import EngineError
from .base import (
    AnalyzerModel,
    DecisionModel,
    EngineResult,
    clean_analysis,
    render_analyzer_prompt,
    render_decision_prompt,
    render_report_prompt,
)
from .parse import ParseError, describe_error, parse_model
from .pricing import cost_usd

RETRY_STATUS = [408, 429, 500, 502, 503, 504]
DEFAULT_CONTEXT = 32000  # tokens per prompt: far below Gemini's window, a cap on cost
MAX_OUTPUT = {"decide": 512, "analyze": 2048, "report": 2048}  # room kept for the answer in the window


class GeminiEngine:
    """Gemini through google-genai. JSON output is constrained by a response schema and validated
    with pydantic; one retry carries the validation error, then the caller falls back."""

    name = "gemini"
    streams = True

    def __init__(
        self,
        api_key: str,
        model: str = "gemini-2.5-flash",
        base_url: str = "",
        timeout_s: float = 60.0,
        attempts: int = 3,
        retry_delay: float = 1.0,
        context_tokens: int | None = None,
        price: tuple[float, float] | None = None,
    ):
        if not api_key:
            raise EngineError("GEMINI_API_KEY is not set")
        self.api_key, self.model, self.base_url = api_key, model, base_url
        self.timeout_s, self.attempts, self.retry_delay = timeout_s or 60.0, attempts, retry_delay
        self.context_tokens = context_tokens or DEFAULT_CONTEXT
        self.price = price
        self.stats = {k: {"replies": 0, "valid": 0} for k in MAX_OUTPUT}
        self._client = None
        self._lock = threading.Lock()

    def client(self):
        """One client for every thread (batch jobs): one built twice by racing jobs would be closed,
        when dropped, under the other job's request in flight."""
        with self._lock:
            if self._client is None:
                self._client = gemini_client(
                    self.api_key, self.base_url, self.timeout_s, attempts=self.attempts, retry_delay=self.retry_delay
                )
            return self._client

    def budget(self, kind: str) -> tuple[int, int]:
        """(prompt budget, max output tokens) for one call of this kind."""
        out = MAX_OUTPUT[kind]
        return self.context_tokens - out, out

    def _usage(self, resp) -> dict:
        um = getattr(resp, "usage_metadata", None)
        prompt = getattr(um, "prompt_token_count", 0) or 0
        output = getattr(um, "candidates_token_count", 0) or 0
        return {
            "calls": 1,
            "prompt": prompt,
            "output": output,
            "total": getattr(um, "total_token_count", 0) or 0,
            "cost_usd": cost_usd(self.price, prompt, output),
        }

    def _json_call(self, kind: str, prompt: str, schema: type[BaseModel]) -> tuple[BaseModel, dict]:
        from google.genai import types

        config = types.GenerateContentConfig(
            response_mime_type="application/json",
            response_schema=schema,
            temperature=0.2,
        )
        usage = {"calls": 0, "prompt": 0, "output": 0, "total": 0, "cost_usd": 0.0}
        contents = prompt
        last_error = ""
        for _attempt in range(2):
            resp = self.client().models.generate_content(model=self.model, contents=contents, config=config)
            for k, v in self._usage(resp).items():
                if k == "cost_usd":
                    usage[k] = None if v is None or usage[k] is None else usage[k] + v
                else:
                    usage[k] += v
            try:
                obj = parse_model(resp.text or "", schema)
                self.stats[kind]["replies"] += 1
                self.stats[kind]["valid"] += 1
                return obj, usage
            except (ParseError, ValidationError) as exc:
                self.stats[kind]["replies"] += 1
                last_error = describe_error(exc)
                contents = (
                    f"{prompt}\n\nYour previous answer was not valid ({last_error}). "
                    "Answer again with only a JSON object that matches the schema exactly."
                )
        err = EngineError(f"invalid JSON from Gemini after retry: {last_error}")
        err.usage = usage  # the tokens were spent all the same
        raise err

    def decide(self, ctx: dict) -> EngineResult:
        prompt = render_decision_prompt(ctx, self.budget("decide")[0])
        obj, usage = self._json_call("decide", prompt, DecisionModel)
        return EngineResult(obj.model_dump(), self.name, usage)

    def analyze(self, ctx: dict) -> EngineResult:
        prompt = render_analyzer_prompt(ctx, self.budget("analyze")[0])
        obj, usage = self._json_call("analyze", prompt, AnalyzerModel)
        return EngineResult(clean_analysis(obj.model_dump(), ctx), self.name, usage)

    def report(self, ctx: dict, on_chunk: Callable[[str], None] | None = None) -> EngineResult:
        from google.genai import types

        budget, _out = self.budget("report")  # not sent as a limit: thinking models count thoughts in it
        config = types.GenerateContentConfig(temperature=0.2)
        prompt = render_report_prompt(ctx, budget)
        if on_chunk is None:
            resp = self.client().models.generate_content(model=self.model, contents=prompt, config=config)
            return EngineResult(resp.text or "", self.name, self._usage(resp))
        parts, last = [], None
        for chunk in self.client().models.generate_content_stream(model=self.model, contents=prompt, config=config):
            if chunk.text:
                parts.append(chunk.text)
                on_chunk(chunk.text)
            last = chunk
        return EngineResult("".join(parts), self.name, self._usage(last) if last is not None else None)
