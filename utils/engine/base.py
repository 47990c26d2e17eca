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
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from utils.errors import EngineError  # noqa: F401 - re-exported for the engines
from utils.research.actions import ACTIONS

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"  # the checkout and the installed package alike


class DecisionModel(BaseModel):
    next_action: Literal[ACTIONS]  # the one vocabulary (research/actions.py)
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


def load_prompt(name: str) -> Template:
    return Template((PROMPTS / f"{name}.md").read_text(encoding="utf-8"))


def fence(text: str) -> str:
    """Neutralise anything in untrusted text that could close or fake our data fence."""
    return re.sub(r"</?\s*untrusted-data\s*>", "[removed tag]", text, flags=re.I)


# ---------------------------------------------------------------- prompt rendering (LLM engines)


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
        citation_problems=_fmt_citation_problems(ctx.get("citation_problems", "")),
    )


def _fmt_citation_problems(problems: str) -> str:
    """The optional slot of prompts/report.md: the previous draft's failed citations, quoted."""
    if not problems:
        return ""
    return (
        "\nYour previous draft cited sources that do not say what it claimed (checked against the "
        "sources' text). Write the answer again: cite for each statement a source whose text supports "
        "it, and leave out what no source supports.\n<untrusted-data>\n" + fence(problems) + "\n</untrusted-data>\n"
    )
