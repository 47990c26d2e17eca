"""Gemini through google-genai: JSON constrained by a response schema, validated with pydantic.
google-genai is imported only when a call is made."""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..clients import gemini_client
from ..config import DEFAULT_CONTEXT_TOKENS, DEFAULT_GEMINI_MODEL, DEFAULT_LLM_TIMEOUT_S
from ..errors import EngineError
from ..research.loopdata import Analysis, Choice
from .base import (
    AnalyzerModel,
    DecisionModel,
    as_analysis,
    as_choice,
    render_analyzer_prompt,
    render_decision_prompt,
    render_report_prompt,
)
from .pricing import cost_usd
from .protocol import TEMPERATURE, Answer, BaseEngine, Capabilities, EngineContext, EngineResult, M, json_with_repair

RETRY_STATUS = [408, 429, 500, 502, 503, 504]
DEFAULT_CONTEXT = DEFAULT_CONTEXT_TOKENS  # tokens per prompt: far below Gemini's window, a cap on cost
MAX_OUTPUT = {"decide": 512, "analyze": 2048, "report": 2048}  # room kept for the answer in the window


class GeminiEngine(BaseEngine):
    """Gemini through google-genai. JSON output is constrained by a response schema and validated
    with pydantic; one retry carries the validation error, then the caller falls back."""

    name = "gemini"
    capabilities = Capabilities(schema=True, streaming=True)

    def __init__(
        self,
        api_key: str,
        model: str = DEFAULT_GEMINI_MODEL,
        base_url: str = "",
        timeout_s: float = DEFAULT_LLM_TIMEOUT_S,
        attempts: int = 3,
        retry_delay: float = 1.0,
        context_tokens: int | None = None,
        price: tuple[float, float] | None = None,
    ):
        if not api_key:
            raise EngineError("GEMINI_API_KEY is not set")
        super().__init__(counts_replies=True)
        self.api_key, self.model, self.base_url = api_key, model, base_url
        self.timeout_s, self.attempts, self.retry_delay = timeout_s or DEFAULT_LLM_TIMEOUT_S, attempts, retry_delay
        self.context_tokens = context_tokens or DEFAULT_CONTEXT
        self.price = price
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

    def _json_call(self, kind: str, prompt: str, schema: type[M]) -> tuple[M, dict]:
        from google.genai import types

        config = types.GenerateContentConfig(
            response_mime_type="application/json",
            response_schema=schema,
            temperature=TEMPERATURE,
        )

        def ask(note: str) -> tuple[str, dict, str]:
            resp = self.client().models.generate_content(model=self.model, contents=prompt + note, config=config)
            return resp.text or "", self._usage(resp), ""

        return json_with_repair(ask, schema, lambda valid: self.count_reply(kind, valid), "Gemini")

    def decide(self, ctx: EngineContext) -> EngineResult[Choice]:
        prompt = render_decision_prompt(ctx, self.budget("decide")[0])
        obj, usage = self._json_call("decide", prompt, DecisionModel)
        return EngineResult(as_choice(obj), self.name, usage)

    def analyze(self, ctx: EngineContext) -> EngineResult[Analysis]:
        prompt = render_analyzer_prompt(ctx, self.budget("analyze")[0])
        obj, usage = self._json_call("analyze", prompt, AnalyzerModel)
        return EngineResult(as_analysis(obj, ctx), self.name, usage)

    def report(self, ctx: EngineContext, on_chunk: Callable[[str], None] | None = None) -> EngineResult[Answer]:
        from google.genai import types

        budget, _out = self.budget("report")  # not sent as a limit: thinking models count thoughts in it
        config = types.GenerateContentConfig(temperature=TEMPERATURE)
        prompt = render_report_prompt(ctx, budget)
        if on_chunk is None:
            resp = self.client().models.generate_content(model=self.model, contents=prompt, config=config)
            return EngineResult(Answer(resp.text or ""), self.name, self._usage(resp))
        parts, last = [], None
        for chunk in self.client().models.generate_content_stream(model=self.model, contents=prompt, config=config):
            if chunk.text:
                parts.append(chunk.text)
                on_chunk(chunk.text)
            last = chunk
        return EngineResult(Answer("".join(parts)), self.name, self._usage(last) if last is not None else None)
