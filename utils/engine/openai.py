"""Any OpenAI-compatible chat server through the official `openai` package: OpenAI itself, Ollama,
llama.cpp's server, vLLM, LM Studio, OpenRouter…  (imported only when a call is made).

Structured output steps down per server and the step that worked is remembered for the run:
  json_schema            response_format {"type": "json_schema", ...}  (OpenAI, Ollama, vLLM)
  json_object+schema     {"type": "json_object", "schema": ...}        (llama-cpp-python's server)
  json_object            {"type": "json_object"}
  text                   no response_format; the schema is spelled out in the prompt
A rung is left when the server refuses it (HTTP 400, 422, 500, 501 after the client's retries).
Replies are read tolerantly (utils/engine/parse.py), validated with the same pydantic models as
Gemini, repaired once with the validation error quoted; a second failure raises, and
ResilientEngine lets the offline engine answer that step. Prompts are packed into the context
budget (utils/engine/context.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from ..config import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_LLM_TIMEOUT_S,
    DEFAULT_LOCAL_CONTEXT_TOKENS,
    DEFAULT_LOCAL_LLM_TIMEOUT_S,
)
from ..errors import EngineError
from ..research.loopdata import Analysis, Choice
from ..usage import zero_usage
from .base import (
    AnalyzerModel,
    DecisionModel,
    as_analysis,
    as_choice,
    render_analyzer_prompt,
    render_decision_prompt,
    render_report_prompt,
)
from .context import CHAT_OVERHEAD, estimate_tokens
from .parse import ThinkFilter, strip_think
from .pricing import cost_usd
from .protocol import TEMPERATURE, Answer, BaseEngine, Capabilities, EngineContext, EngineResult, M, json_with_repair

LADDER = ("json_schema", "json_object+schema", "json_object", "text")
REFUSED = {400, 422, 500, 501}  # a server that cannot do a response format answers with one of these
LOCAL_CONTEXT, REMOTE_CONTEXT = DEFAULT_LOCAL_CONTEXT_TOKENS, DEFAULT_CONTEXT_TOKENS
MAX_OUTPUT = {"decide": 200, "analyze": 640, "report": 1024}  # the bounded JSON fits; prose is cut


def is_local(base_url: str) -> bool:
    """A server on this machine or the local network (its model is small, its window too)."""
    import ipaddress

    host = (urlsplit(base_url or "").hostname or "").lower()
    if not host:
        return False
    if host == "localhost" or host.endswith((".local", ".lan", ".internal")):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local


# Length limits sent to the server with the schema (not used for validation): a grammar-constrained
# small model otherwise rambles in free-text fields until max_tokens and the JSON is cut off.
BOUNDS = {
    "query_or_url": {"maxLength": 300},
    "reasoning": {"maxLength": 200},
    "extracted_info": {"maxItems": 5},
    "fact": {"maxLength": 200},
    "assessment": {"maxLength": 200},
    "suggestions_for_next_step": {"maxItems": 3, "items": {"type": "string", "maxLength": 100}},
    "new_potential_urls": {"maxItems": 3, "items": {"type": "string", "maxLength": 200}},
    "inconsistencies_found": {"maxLength": 150},
}


def bounded_schema(schema: type[BaseModel]) -> dict:
    """The model's JSON schema with BOUNDS added to its properties (nested definitions too)."""
    js = schema.model_json_schema()
    for node in [js, *js.get("$defs", {}).values()]:
        for name, prop in node.get("properties", {}).items():
            prop.update(BOUNDS.get(name, {}))
    return js


class OpenAIEngine(BaseEngine):
    name = "openai"
    capabilities = Capabilities(schema=True, streaming=True)

    def __init__(
        self,
        model: str = "",
        base_url: str = "",
        api_key: str = "",
        timeout_s: float | None = None,
        max_retries: int = 2,
        context_tokens: int | None = None,
        price: tuple[float, float] | None = None,
        warn: Callable[[str], None] | None = None,
    ):
        super().__init__(counts_replies=True)  # per call kind: replies received, and how many were schema-valid
        self.base_url, self.api_key = base_url, api_key
        self.local = is_local(base_url)
        if not base_url and not api_key:
            raise EngineError("--engine openai needs OPENAI_API_KEY, or --base-url for a local server")
        self.model = model or ("" if base_url else "gpt-4o-mini")
        self.timeout_s = timeout_s or (DEFAULT_LOCAL_LLM_TIMEOUT_S if self.local else DEFAULT_LLM_TIMEOUT_S)
        self.max_retries = max_retries
        self.context_tokens = context_tokens or (LOCAL_CONTEXT if self.local else REMOTE_CONTEXT)
        self.price = price
        self.warn = warn
        self._client: Any = None  # an openai.OpenAI, built on first use
        self._lock = threading.Lock()
        self._rung = 0  # index into LADDER: the structured-output mode this server takes
        self._stream_usage = True  # ask for usage in streams until the server refuses
        self.steps_down: list[str] = []

    # ------------------------------------------------------------------ plumbing

    def client(self):
        with self._lock:
            if self._client is None:
                import openai

                self._client = openai.OpenAI(
                    api_key=self.api_key or "not-needed",  # local servers take any key
                    base_url=self.base_url or None,
                    timeout=self.timeout_s,
                    max_retries=self.max_retries,
                )
                if not self.model:
                    self.model = self._first_model()
            return self._client

    def _first_model(self) -> str:
        """No --model given: the first model the server lists (a local server usually has one)."""
        try:
            models = list(self._client.models.list())
        except Exception as exc:  # noqa: BLE001
            raise EngineError(f"no --model given and the server did not list its models: {exc}") from exc
        if not models:
            raise EngineError("no --model given and the server lists no models")
        return models[0].id

    @property
    def mode(self) -> str:
        return LADDER[self._rung]

    def budget(self, kind: str) -> tuple[int, int]:
        """(prompt budget, max output tokens) for one call of this kind within the window."""
        out = min(MAX_OUTPUT[kind], max(64, self.context_tokens // 4))
        return self.context_tokens - out - CHAT_OVERHEAD, out

    def _usage(self, u) -> dict:
        prompt = getattr(u, "prompt_tokens", 0) or 0
        output = getattr(u, "completion_tokens", 0) or 0
        total = getattr(u, "total_tokens", 0) or (prompt + output)
        return {
            "calls": 1,
            "prompt": prompt,
            "output": output,
            "total": total,
            "cost_usd": cost_usd(self.price, prompt, output),
        }

    @staticmethod
    def _response_format(mode: str, schema: type[BaseModel]) -> dict | None:
        js = bounded_schema(schema)
        if mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": js}}
        if mode == "json_object+schema":
            return {"type": "json_object", "schema": js}
        if mode == "json_object":
            return {"type": "json_object"}
        return None

    def _create_structured(self, kind: str, render: Callable[[int], str], schema: type[BaseModel], note: str):
        """One chat completion in the best mode the server takes; steps down the ladder on refusal.
        The prompt is packed for the mode: the schema is spelled out when the server does not get it."""
        import openai

        budget, max_tokens = self.budget(kind)
        while True:
            rung = self._rung
            mode = LADDER[rung]
            fmt = self._response_format(mode, schema)
            extra = note
            if mode in ("json_object", "text"):
                spec = json.dumps(bounded_schema(schema), separators=(",", ":"))
                extra = f"\n\nJSON schema of the answer: {spec}{note}"
            prompt = render(budget - estimate_tokens(extra)) + extra
            try:
                return self.client().chat.completions.create(
                    model=self.model,
                    messages=[{"role": "user", "content": prompt}],
                    temperature=TEMPERATURE,
                    max_tokens=max_tokens,
                    **({"response_format": fmt} if fmt else {}),
                )
            except openai.APIStatusError as exc:
                if mode == "text" or exc.status_code not in REFUSED:
                    raise
                with self._lock:
                    if self._rung == rung:  # another job may have stepped down already
                        self._rung = rung + 1
                        msg = f"{mode} refused (HTTP {exc.status_code}); using {LADDER[rung + 1]}"
                        self.steps_down.append(msg)
                        if self.warn:
                            self.warn(f"openai: {msg}")

    def _json_call(self, kind: str, render: Callable[[int], str], schema: type[M]) -> tuple[M, dict]:
        def ask(note: str) -> tuple[str, dict, str]:
            resp = self._create_structured(kind, render, schema, note)
            msg = resp.choices[0].message if resp.choices else None
            text = (getattr(msg, "content", None) or "") if msg else ""
            cut = bool(resp.choices) and resp.choices[0].finish_reason == "length"
            return text, self._usage(getattr(resp, "usage", None)), " (cut off at the length limit: be brief)" * cut

        return json_with_repair(ask, schema, lambda valid: self.count_reply(kind, valid), "the model")

    # ------------------------------------------------------------------ the three calls

    def decide(self, ctx: EngineContext) -> EngineResult[Choice]:
        obj, usage = self._json_call("decide", lambda b: render_decision_prompt(ctx, b), DecisionModel)
        return EngineResult(as_choice(obj), self.name, usage)

    def analyze(self, ctx: EngineContext) -> EngineResult[Analysis]:
        obj, usage = self._json_call("analyze", lambda b: render_analyzer_prompt(ctx, b), AnalyzerModel)
        return EngineResult(as_analysis(obj, ctx), self.name, usage)

    def report(self, ctx: EngineContext, on_chunk: Callable[[str], None] | None = None) -> EngineResult[Answer]:
        budget, out = self.budget("report")
        prompt = render_report_prompt(ctx, budget)
        messages = [{"role": "user", "content": prompt}]
        client = self.client()
        if on_chunk is None:
            resp = client.chat.completions.create(
                model=self.model, messages=messages, temperature=TEMPERATURE, max_tokens=out
            )
            text = strip_think(resp.choices[0].message.content or "") if resp.choices else ""
            self.count_reply("report", bool(text.strip()))
            return EngineResult(Answer(text), self.name, self._usage(getattr(resp, "usage", None)))
        stream = self._open_stream(messages, out)
        parts, usage, think = [], None, ThinkFilter()
        for chunk in stream:
            if getattr(chunk, "usage", None):
                usage = self._usage(chunk.usage)
            for choice in chunk.choices or []:
                piece = think.feed(getattr(choice.delta, "content", None) or "")
                if piece:
                    parts.append(piece)
                    on_chunk(piece)
        tail = think.flush()
        if tail:
            parts.append(tail)
            on_chunk(tail)
        text = "".join(parts)
        self.count_reply("report", bool(text.strip()))
        if usage is None:  # the server sent no usage: the call is counted, its tokens are not known
            usage = {**zero_usage(), "calls": 1, "cost_usd": None if self.price else 0.0}
        return EngineResult(Answer(text), self.name, usage)

    def _open_stream(self, messages: list[dict], max_tokens: int):
        import openai

        kw = dict(model=self.model, messages=messages, temperature=TEMPERATURE, max_tokens=max_tokens, stream=True)
        if self._stream_usage:
            try:
                return self.client().chat.completions.create(**kw, stream_options={"include_usage": True})
            except openai.APIStatusError as exc:
                if exc.status_code not in (400, 422):
                    raise
                self._stream_usage = False
        return self.client().chat.completions.create(**kw)
