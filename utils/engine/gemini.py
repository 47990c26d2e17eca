"""Gemini through google-genai: JSON constrained by a response schema, validated with pydantic.
google-genai is imported only when a call is made."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ValidationError

from utils.clients import gemini_client
from utils.engine.base import (
    AnalyzerModel,
    DecisionModel,
    EngineResult,
    render_analyzer_prompt,
    render_decision_prompt,
    render_report_prompt,
)
from utils.errors import EngineError


class GeminiEngine:
    """Gemini through google-genai. JSON output is constrained by a response schema and validated
    with pydantic; one retry carries the validation error, then the caller falls back."""

    name = "gemini"

    def __init__(
        self,
        api_key: str,
        model: str = "gemini-2.5-flash",
        base_url: str = "",
        timeout_s: float = 60.0,
        attempts: int = 3,
        retry_delay: float = 1.0,
    ):
        if not api_key:
            raise EngineError("GEMINI_API_KEY is not set")
        self.api_key, self.model, self.base_url = api_key, model, base_url
        self.timeout_s, self.attempts, self.retry_delay = timeout_s, attempts, retry_delay
        self._client = None

    def client(self):
        if self._client is None:
            self._client = gemini_client(
                self.api_key, self.base_url, self.timeout_s, attempts=self.attempts, retry_delay=self.retry_delay
            )
        return self._client

    @staticmethod
    def _usage(resp) -> dict:
        um = getattr(resp, "usage_metadata", None)
        return {
            "calls": 1,
            "prompt": getattr(um, "prompt_token_count", 0) or 0,
            "output": getattr(um, "candidates_token_count", 0) or 0,
            "total": getattr(um, "total_token_count", 0) or 0,
        }

    def _json_call(self, prompt: str, schema: type[BaseModel]) -> tuple[BaseModel, dict]:
        from google.genai import types

        config = types.GenerateContentConfig(
            response_mime_type="application/json", response_schema=schema, temperature=0.2
        )
        usage = {"calls": 0, "prompt": 0, "output": 0, "total": 0}
        contents = prompt
        last_error = ""
        for _attempt in range(2):
            resp = self.client().models.generate_content(model=self.model, contents=contents, config=config)
            for k, v in self._usage(resp).items():
                usage[k] += v
            try:
                return schema.model_validate_json(resp.text or ""), usage
            except ValidationError as exc:
                last_error = (
                    str(exc).splitlines()[0]
                    + ": "
                    + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
                )
                contents = (
                    f"{prompt}\n\nYour previous answer was not valid ({last_error}). "
                    "Answer again with only a JSON object that matches the schema exactly."
                )
        err = EngineError(f"invalid JSON from Gemini after retry: {last_error}")
        err.usage = usage  # the tokens were spent all the same
        raise err

    def decide(self, ctx: dict) -> EngineResult:
        obj, usage = self._json_call(render_decision_prompt(ctx), DecisionModel)
        return EngineResult(obj.model_dump(), self.name, usage)

    def analyze(self, ctx: dict) -> EngineResult:
        obj, usage = self._json_call(render_analyzer_prompt(ctx), AnalyzerModel)
        data = obj.model_dump()
        valid = {it["source"] for it in ctx.get("items", [])}
        data["extracted_info"] = [
            {"fact": f["fact"], "source": f["source"], "score": 1.0}
            for f in data["extracted_info"]
            if f["source"] in valid and f["fact"].strip()
        ]
        return EngineResult(data, self.name, usage)

    def report(self, ctx: dict, on_chunk: Callable[[str], None] | None = None) -> EngineResult:
        from google.genai import types

        config = types.GenerateContentConfig(temperature=0.2)
        prompt = render_report_prompt(ctx)
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
