"""LLM engines: Gemini (google-genai, schema-constrained JSON) and the offline fallback.

Every engine answers three calls with plain dicts:
  decide(ctx)  -> {"next_action", "query_or_url", "reasoning"}
  analyze(ctx) -> {"extracted_info", "assessment", "confidence_score", "suggestions_for_next_step",
                   "new_potential_urls", "inconsistencies_found"}
  report(ctx, on_chunk=None) -> markdown answer with [n] citations
wrapped in an EngineResult that carries token usage and whether the offline fallback answered.
google-genai is imported only when a Gemini call is made.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

PROMPTS = Path(__file__).resolve().parent.parent / "prompts"
LOW_CONFIDENCE_CAP = 0.35  # an analysis made by the fallback engine never claims more than this


class DecisionModel(BaseModel):
    next_action: Literal["search_duckduckgo", "search_google", "crawl_url", "search_kb", "send_to_hitl"]
    query_or_url: str = Field(description="search query, one or more URLs separated by spaces, or '' for send_to_hitl")
    reasoning: str


class FactModel(BaseModel):
    fact: str
    source: int = Field(description="number of the source the fact came from")


class AnalyzerModel(BaseModel):
    extracted_info: list[FactModel]
    assessment: str
    confidence_score: float = Field(description="0.0 to 1.0")
    suggestions_for_next_step: list[str]
    new_potential_urls: list[str]
    inconsistencies_found: str

    @field_validator("confidence_score")
    @classmethod
    def _in_unit_interval(cls, v: float) -> float:
        if not 0.0 <= v <= 1.0:
            raise ValueError("confidence_score must be between 0.0 and 1.0")
        return v


@dataclass
class EngineResult:
    data: dict | str
    engine: str
    usage: dict | None = None
    fallback: bool = False
    error: str | None = None
    extra: dict = field(default_factory=dict)


class EngineError(RuntimeError):
    usage: dict | None = None  # tokens spent before the failure


def load_prompt(name: str) -> Template:
    return Template((PROMPTS / f"{name}.md").read_text(encoding="utf-8"))


def fence(text: str) -> str:
    """Neutralise anything in untrusted text that could close or fake our data fence."""
    return re.sub(r"</?\s*untrusted-data\s*>", "[removed tag]", text, flags=re.I)


# ---------------------------------------------------------------- prompt rendering (Gemini)


def _fmt_history(history: list[dict], limit: int = 12) -> str:
    if not history:
        return "(nothing yet)"
    lines = []
    for h in history[-limit:]:
        status = "ok" if h.get("ok") else f"FAILED: {h.get('error') or 'error'}"
        used = h.get("tool_used") or "-"
        lines.append(
            f'{h.get("step")}. {h.get("action")} "{h.get("query_or_url", "")}" via {used}: '
            f"{status}, {h.get('results', 0)} results"
        )
    return "\n".join(lines)


def _fmt_facts(facts: list[dict], limit: int = 20) -> str:
    if not facts:
        return "(none yet)"
    best = sorted(facts, key=lambda f: -f.get("score", 0))[:limit]
    return (
        "<untrusted-data>\n" + "\n".join(f"- [{f['source']}] {fence(f['text'])}" for f in best) + "\n</untrusted-data>"
    )


def _fmt_feedback(feedback: list[str]) -> str:
    return "\n".join(f"- {fence(x)}" for x in feedback) if feedback else "(none)"


def render_decision_prompt(ctx: dict) -> str:
    analyzer = ctx.get("analyzer")
    analyzer_txt = "(none yet)"
    if analyzer:
        analyzer_txt = json.dumps(
            {
                k: analyzer.get(k)
                for k in (
                    "assessment",
                    "confidence_score",
                    "suggestions_for_next_step",
                    "new_potential_urls",
                    "inconsistencies_found",
                )
            },
            ensure_ascii=False,
        )
        analyzer_txt = f"<untrusted-data>\n{fence(analyzer_txt)}\n</untrusted-data>"
    tools = ctx["actions"]
    cands = [c["url"] for c in ctx.get("candidate_urls", [])[:10]]
    tools_txt = "\n".join(f"- {a}" for a in tools)
    if cands:
        tools_txt += "\nUnvisited URLs seen so far:\n" + "\n".join(f"  {fence(u)}" for u in cands)
    if ctx.get("visited_urls"):
        tools_txt += "\nAlready visited (do not crawl again):\n" + "\n".join(
            f"  {u}" for u in ctx["visited_urls"][-15:]
        )
    return load_prompt("decision").substitute(
        query=ctx["query"],
        tools=tools_txt,
        history=_fmt_history(ctx.get("history", [])),
        facts=_fmt_facts(ctx.get("facts", [])),
        analyzer=analyzer_txt,
        feedback=_fmt_feedback(ctx.get("feedback", [])),
        confidence=f"{ctx.get('confidence', 0.0):.2f}",
        threshold=f"{ctx.get('threshold', 0.7):.2f}",
        steps_left=ctx.get("steps_left", "?"),
        actions=", ".join(tools),
    )


def render_analyzer_prompt(ctx: dict) -> str:
    parts = []
    for it in ctx.get("items", [])[:30]:
        text = fence(it.get("text", ""))[:6000]
        parts.append(f"[{it['source']}] {fence(it.get('title', ''))} <{it.get('url', '')}>\n{text}")
    return load_prompt("analyzer").substitute(
        query=ctx["query"],
        action=ctx.get("action", ""),
        query_or_url=ctx.get("query_or_url", ""),
        tool=ctx.get("tool") or "-",
        tool_output="\n\n".join(parts) or "(no output)",
        facts=_fmt_facts(ctx.get("facts", [])),
        feedback=_fmt_feedback(ctx.get("feedback", [])),
    )


def render_report_prompt(ctx: dict) -> str:
    facts = sorted(ctx.get("facts", []), key=lambda f: -f.get("score", 0))[:40]
    facts_txt = "\n".join(f"- [{f['source']}] {fence(f['text'])}" for f in facts) or "(no facts found)"
    sources_txt = (
        "\n".join(f"[{s['n']}] {s.get('title', '')} — {s.get('url', '')}" for s in ctx.get("sources", [])) or "(none)"
    )
    return load_prompt("report").substitute(
        query=ctx["query"],
        facts=facts_txt,
        sources=sources_txt,
        assessment=ctx.get("assessment", ""),
        confidence=f"{ctx.get('confidence', 0.0):.2f}",
        feedback=_fmt_feedback(ctx.get("feedback", [])),
    )


# ---------------------------------------------------------------- Gemini

RETRY_STATUS = [408, 429, 500, 502, 503, 504]


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
            from google import genai
            from google.genai import types

            http = types.HttpOptions(
                timeout=int(self.timeout_s * 1000),
                base_url=self.base_url or None,
                retry_options=types.HttpRetryOptions(
                    attempts=self.attempts,
                    initial_delay=self.retry_delay,
                    max_delay=20.0,
                    http_status_codes=RETRY_STATUS,
                ),
            )
            self._client = genai.Client(api_key=self.api_key, http_options=http)
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


# ---------------------------------------------------------------- fallback wrapper


class ResilientEngine:
    """Primary engine with the offline engine behind it: any failure of the primary (network,
    quota, invalid JSON after its retry) is answered by the offline engine and marked fallback."""

    def __init__(self, primary, fallback):
        self.primary, self.fallback = primary, fallback
        self.name = primary.name

    def _run(self, method: str, ctx: dict, **kw) -> EngineResult:
        try:
            return getattr(self.primary, method)(ctx, **kw)
        except Exception as exc:  # noqa: BLE001 - any LLM failure is survivable
            res = getattr(self.fallback, method)(ctx)
            res.usage = getattr(exc, "usage", None)
            res.fallback = True
            res.error = f"{type(exc).__name__}: {exc}"[:500]
            if method == "analyze" and isinstance(res.data, dict):
                res.data["confidence_score"] = round(min(res.data["confidence_score"], LOW_CONFIDENCE_CAP), 3)
            return res

    def decide(self, ctx: dict) -> EngineResult:
        return self._run("decide", ctx)

    def analyze(self, ctx: dict) -> EngineResult:
        return self._run("analyze", ctx)

    def report(self, ctx: dict, on_chunk=None) -> EngineResult:
        return self._run("report", ctx, on_chunk=on_chunk)


def make_engine(settings, warn: Callable[[str], None] | None = None):
    """Pick the engine for `settings.engine` (auto | gemini | offline)."""
    from utils.offline import OfflineEngine

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
