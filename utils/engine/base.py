"""What the LLM engines (Gemini, OpenAI-compatible servers) share: the JSON schemas an LLM answers
in (pydantic), read straight into the loop's types (`as_choice`, `as_analysis`), and the prompts,
rendered from an EngineContext (utils/engine/protocol.py). google-genai and openai are imported
only when a call is made.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field, field_validator

from ..errors import EngineError  # noqa: F401 - re-exported for the engines
from ..registry import ACTIONS, HITL, prompt_rules
from ..research.loopdata import Analysis, Choice, Fact
from .context import Section, pack
from .protocol import EngineContext, EngineResult  # noqa: F401 - EngineResult re-exported for the engines

PROMPTS = Path(__file__).resolve().parents[2] / "prompts"  # the checkout and the installed package alike


if TYPE_CHECKING:
    ActionName = str  # the type checker sees a string; the schema sees the registry's actions
else:
    ActionName = Literal[ACTIONS]  # the tool registry's actions (utils/registry.py), an enum in the schema


class DecisionModel(BaseModel):
    next_action: ActionName
    query_or_url: str = Field(description=f"search query, one or more URLs separated by spaces, or '' for {HITL}")
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


def load_prompt(name: str) -> Template:
    return Template((PROMPTS / f"{name}.md").read_text(encoding="utf-8"))


def fence(text: str) -> str:
    """Neutralise anything in untrusted text that could close or fake our data fence."""
    return re.sub(r"</?\s*untrusted-data\s*>", "[removed tag]", text, flags=re.I)


# ---------------------------------------------------------------- prompt rendering (LLM engines)
# Each renderer packs its variable parts into `budget` estimated tokens (utils/engine/context.py):
# the most relevant items first, long page text trimmed. Without a budget the fixed caps below apply.

NO_BUDGET = 1_000_000


def _history_line(h: dict) -> str:
    status = "ok" if h.get("ok") else f"FAILED: {h.get('error') or 'error'}"
    used = h.get("tool_used") or "-"
    return (
        f'{h.get("step")}. {h.get("action")} "{h.get("query_or_url", "")}" via {used}: '
        f"{status}, {h.get('results', 0)} results"
    )


def _fact_lines(facts: Sequence[Fact], limit: int) -> list[str]:
    best = sorted(facts, key=lambda f: -f.score)[:limit]
    return [f"- [{f.source}] {fence(f.text)}" for f in best]


def _untrusted(lines: list[str]) -> str:
    return "<untrusted-data>\n" + "\n".join(lines) + "\n</untrusted-data>"


def _chronological(lines: list[str]) -> str:
    return "\n".join(reversed(lines))  # chosen most recent first, shown oldest first


def _terms(query: str) -> set[str]:
    from ..text import term_set

    return term_set(query)


def render_decision_prompt(ctx: EngineContext, budget: int | None = None) -> str:
    analyzer = ctx.analyzer
    analyzer_items: list[str] = []
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
        analyzer_items = [fence(analyzer_txt)]
    tools = ctx.actions
    tools_list = "\n".join(f"- {a}" for a in tools)

    def render(p: dict[str, str]) -> str:
        tools_txt = tools_list + p["candidates"] + p["visited"]
        return load_prompt("decision").substitute(
            query=ctx.query,
            tools=tools_txt,
            history=p["history"],
            facts=p["facts"],
            analyzer=p["analyzer"],
            feedback=p["feedback"],
            confidence=f"{ctx.confidence:.2f}",
            threshold=f"{ctx.threshold:.2f}",
            steps_left=ctx.steps_left,
            actions=", ".join(tools),
            tool_rules=prompt_rules(),
        )

    history = ctx.history[-12:]
    sections = [
        Section("feedback", [f"- {fence(x)}" for x in reversed(ctx.feedback)], 0.3, "(none)"),
        Section("analyzer", analyzer_items, 0.3, "(none yet)", _untrusted),
        Section("history", [_history_line(h) for h in reversed(history)], 0.4, "(nothing yet)", _chronological),
        Section("facts", _fact_lines(ctx.facts, 20), 0.6, "(none yet)", _untrusted),
        Section(
            "candidates",
            [f"  {fence(c['url'])}" for c in ctx.candidate_urls[:10]],
            0.7,
            "",
            lambda xs: "\nUnvisited URLs seen so far:\n" + "\n".join(xs),
        ),
        Section(
            "visited",
            [f"  {u}" for u in reversed(ctx.visited_urls[-15:])],
            1.0,
            "",
            lambda xs: "\nAlready visited (do not crawl again):\n" + "\n".join(reversed(xs)),
        ),
    ]
    return pack(render, sections, budget or NO_BUDGET)


def render_analyzer_prompt(ctx: EngineContext, budget: int | None = None) -> str:
    items = [(f"[{it.source}] {fence(it.title)} <{it.url}>", fence(it.text)[:6000]) for it in ctx.items[:30]]
    step = ctx.step

    def render(p: dict[str, str]) -> str:
        return load_prompt("analyzer").substitute(
            query=ctx.query,
            action=step.action if step else "",
            query_or_url=step.query_or_url if step else "",
            tool=(step.tool_used if step else None) or "-",
            tool_output=p["items"],
            facts=p["facts"],
            feedback=p["feedback"],
        )

    sections = [
        Section("feedback", [f"- {fence(x)}" for x in reversed(ctx.feedback)], 0.2, "(none)"),
        Section("items", items, 0.8, "(no output)", "\n\n".join, fair=True, terms=_terms(ctx.query)),
        Section("facts", _fact_lines(ctx.facts, 20), 1.0, "(none yet)", _untrusted),
    ]
    return pack(render, sections, budget or NO_BUDGET)


def render_report_prompt(ctx: EngineContext, budget: int | None = None) -> str:
    facts = sorted(ctx.facts, key=lambda f: -f.score)[:40]
    by_n = {s.n: s for s in ctx.sources}
    order = list(dict.fromkeys([f.source for f in facts if f.source in by_n] + list(by_n)))
    source_lines = [f"[{n}] {by_n[n].title} \u2014 {by_n[n].url}" for n in order]

    def render(p: dict[str, str]) -> str:
        return load_prompt("report").substitute(
            query=ctx.query,
            facts=p["facts"],
            sources=p["sources"],
            assessment=p["assessment"],
            confidence=f"{ctx.confidence:.2f}",
            feedback=p["feedback"],
            citation_problems=_fmt_citation_problems(ctx.citation_problems),
        )

    def by_number(lines: list[str]) -> str:
        return "\n".join(sorted(lines, key=lambda x: int(x[1 : x.index("]")])))

    assessment = ctx.analyzer.get("assessment", "") if ctx.analyzer else ""
    sections = [
        Section("feedback", [f"- {fence(x)}" for x in reversed(ctx.feedback)], 0.2, "(none)"),
        Section("assessment", [assessment] if assessment else [], 0.1, ""),
        Section("facts", [f"- [{f.source}] {fence(f.text)}" for f in facts], 0.7, "(no facts found)"),
        Section("sources", source_lines, 1.0, "(none)", by_number),
    ]
    return pack(render, sections, budget or NO_BUDGET)


def as_choice(obj: DecisionModel) -> Choice:
    """An LLM's decision as the loop's Choice."""
    return Choice(obj.next_action, obj.query_or_url, obj.reasoning)


def as_analysis(obj: AnalyzerModel, ctx: EngineContext) -> Analysis:
    """An LLM's analysis as the loop's Analysis: only non-empty facts that cite a source shown to it,
    dated with the step."""
    valid = {it.source for it in ctx.items}
    step = ctx.step.step if ctx.step else 0
    return Analysis(
        facts=[Fact(f.fact, f.source, 1.0, step) for f in obj.extracted_info if f.source in valid and f.fact.strip()],
        assessment=obj.assessment,
        confidence_score=obj.confidence_score,
        suggestions_for_next_step=obj.suggestions_for_next_step,
        new_potential_urls=obj.new_potential_urls,
        inconsistencies_found=obj.inconsistencies_found,
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
