"""The report: the engine's direct answer plus a research journey and key sources built from the
shared store, so every [n] the reader sees resolves to a listed source. The report numbers its
sources 1..k (research/numbering.py); the answer's markers and the quotes follow."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..registry import role_of, title_of
from .loopdata import StopReason
from .numbering import renumber, report_order

_CITE = re.compile(r"\[(\d{1,3})\]")
_TAG_LIKE = re.compile(r"<(?=[A-Za-z/!?])")  # what a Markdown renderer would take for an HTML tag
_CITE_ANY = re.compile(r"\[(\d{1,3})\??\]")  # [n], or [n?] when the citation failed its check

STOP_TEXT: dict[str, str] = {
    StopReason.CONFIDENT: "confident enough",
    StopReason.DECIDED: "the engine judged the question answered",
    StopReason.EXHAUSTED: "nothing new left to try",
    StopReason.BUDGET: "budget used up (steps, tokens or cost)",
    StopReason.LOOP_REPEAT: "loop detected (same action and query again)",
    StopReason.LOOP_REVISIT: "loop detected (URL already visited)",
    StopReason.STALL: "confidence stopped improving",
    StopReason.TOOL_FAILURES: "tools kept failing",
    StopReason.NO_TOOLS: "no usable tool",
    StopReason.TIME_LIMIT: "time limit reached",
    StopReason.INTERRUPTED: "interrupted",
}


_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)  # `code`: shown as it is, escapes and all


def as_text(text: str) -> str:
    """Text from a source or a person, written into the Markdown report so that it shows as typed:
    `<pathspec>` would be an HTML tag to a Markdown renderer (and vanish), so its `<` is escaped
    (outside code spans, where a renderer shows everything as it is)."""
    text, out, at = text or "", [], 0
    for m in _CODE_SPAN.finditer(text):
        out += [_TAG_LIKE.sub(r"\\<", text[at : m.start()]), m.group(0)]
        at = m.end()
    return "".join([*out, _TAG_LIKE.sub(r"\\<", text[at:])])


def clean_citations(answer: str, valid: set[int]) -> str:
    """Drop citation markers that do not name a known source."""
    return _CITE.sub(lambda m: m.group(0) if int(m.group(1)) in valid else "", answer)


def cited(answer: str) -> list[int]:
    """Source numbers the answer cites, in order, flagged ones included."""
    out: list[int] = []
    for m in _CITE_ANY.finditer(answer or ""):
        n = int(m.group(1))
        if n not in out:
            out.append(n)
    return out


def unreachable(entry: Mapping[str, Any]) -> list[str]:
    """The backends a failed step could not reach over the network (empty when it failed otherwise)."""
    errors = entry.get("errors") or []
    if entry.get("ok") or not errors or any(e.get("kind") != "network" for e in errors):
        return []
    return list(dict.fromkeys(str(e.get("backend") or e.get("url") or "?") for e in errors))


def tool_failed(entry: dict) -> bool:
    """The step's tool failed (could not be reached, refused, broke), as against working and finding
    nothing (a search with no results, no matching passages)."""
    if entry.get("ok"):
        return False
    errors = entry.get("errors") or []
    if errors:
        return not all(e.get("kind") == "no_results" for e in errors)
    return entry.get("error") != "no matching passages"


def web_unreachable(entry: Mapping[str, Any]) -> bool:
    """A web or wiki search that could reach none of its backends over the network: the web is
    down for this run (said once; research/actions.reachable then offers no web tool)."""
    return role_of(entry.get("action")) in ("web_search", "wiki_search") and bool(unreachable(entry))


def failure_text(entry: dict) -> str:
    """Why a step failed, in one readable line (a network failure names what could not be reached)."""
    names = unreachable(entry)
    if names:
        return f"could not reach {', '.join(names)} (network error)"
    return entry.get("error") or "failed"


def journey_lines(shared: Mapping[str, Any]) -> list[str]:
    lines = []
    title = {s.n: s.title or s.url for s in shared.get("sources", [])}
    fb_after = {f["after_iteration"]: f for f in shared.get("feedback_history", [])}
    for h in shared.get("research_history", []):
        q = h.get("query_or_url", "")
        q = q if len(q) <= 100 else q[:97] + "..."
        tool = h.get("tool_used") or "none"
        if h.get("ok"):
            outcome = f"{h.get('results', 0)} result(s) via {tool}"
        else:
            outcome = f"failed: {failure_text(h)}"
        notes = []
        if h.get("remapped_from"):
            notes.append(f"asked for {title_of(h['remapped_from'])}, not available")
        if h.get("fallback_used"):
            notes.append("fallback backend used")
        if h.get("ok") and h.get("errors"):
            notes += [
                f"{e.get('backend') or e.get('engine') or e.get('url')}: {e.get('kind')}"
                for e in h["errors"][:3]
                if e.get("kind") != "remember"
            ]
        extra = f" ({'; '.join(notes)})" if notes else ""
        lines.append(f"{h.get('step')}. {title_of(h.get('action'))} \u201c{as_text(q)}\u201d \u2192 {outcome}{extra}")
        if h.get("step") in fb_after:  # as typed; what it rejected by name, as [n] is not this report's
            f = fb_after[h["step"]]
            dropped = "; ".join(str(title.get(n)) for n in f.get("rejected") or [])
            lines.append(
                f"   - feedback: \u201c{as_text(f['text'])}\u201d"
                + (f" (dropped: {as_text(dropped)})" if dropped else "")
            )
    return lines


def quote_lines(citations: dict, n: int, shown_as: int) -> list[str]:
    """Under cited source n (shown as [shown_as]): the passage that supports what the answer says it
    says, or a warning."""
    checks = [c for c in citations.get("checks", []) if c.get("n") == n]
    good = [c for c in checks if c.get("supported") and c.get("quote")]
    if good:
        return [f"  > \u201c{as_text(good[0]['quote'])}\u201d"]
    if checks and not any(c.get("supported") for c in checks):
        return [f"  > (no passage of this source supports the claim cited to it: marked [{shown_as}?])"]
    return []


def cost_note(shared: Mapping[str, Any]) -> str:
    """Model and estimated cost for the footer; nothing for the offline engine."""
    if not shared.get("model"):
        return ""
    cost = shared.get("cost_usd", 0.0)
    spent = f"est. cost ${cost:.4f}" if cost is not None else "cost unknown (no price for this model)"
    return f" ({shared['model']}) · {spent}"


def listed_sources(shared: Mapping[str, Any], answer: str, max_sources: int = 12) -> list[int]:
    """The session numbers of the Key sources, in report order: the cited ones in order of first
    citation, then the best-scored fact sources the human did not reject (up to max_sources in all)."""
    sources = {s.n for s in shared.get("sources", [])}
    used = [n for n in cited(answer) if n in sources]
    fact_sources = []
    rejected = set(shared.get("excluded_sources") or [])  # the human rejected them: listed only if still cited
    for f in sorted(shared.get("extracted_information", []), key=lambda f: -f.score):
        if f.source not in used and f.source not in fact_sources and f.source not in rejected:
            fact_sources.append(f.source)
    return used + fact_sources[: max(0, max_sources - len(used))]


def numbering(shared: Mapping[str, Any], answer: str) -> dict:
    """What a report's entry in shared["reports"] keeps of its numbers: {"order", "listed"}."""
    listed = listed_sources(shared, answer)
    return {"order": report_order(listed, len(shared.get("sources", []))), "listed": len(listed)}


def build_report(shared: Mapping[str, Any], answer: str) -> str:
    """The report in Markdown: the answer, the journey, the Key sources (what the answer cites, each
    with the passage that bears it out) and, shorter, the sources read but not cited. Text from
    sources shows as text (as_text)."""
    sources = {s.n: s for s in shared.get("sources", [])}
    answer = clean_citations(answer, set(sources))
    used = set(cited(answer))
    numbers = numbering(shared, answer)
    order, listed = numbers["order"], numbers["order"][: numbers["listed"]]
    reason = shared.get("stop_reason") or ""
    parts = [
        f"# {as_text(shared.get('original_query', '').strip())}",
        "",
        "## Answer",
        "",
        as_text(renumber(answer, order).strip()),
        "",
        f"*Confidence {shared.get('confidence_score', 0.0):.2f} · stopped: {STOP_TEXT.get(reason, reason)}"
        f" · {shared.get('iteration_count', 0)} step(s) · {engine_note(shared)}*",
        "",
        "## Research journey",
        "",
    ]
    parts += journey_lines(shared) or ["(no research steps)"]
    parts += ["", "## Key sources", ""]
    key = [(r, n) for r, n in enumerate(listed, 1) if n in used]  # cited first, in order of first citation
    read = [(r, n) for r, n in enumerate(listed, 1) if n not in used]
    if not key:
        parts.append("(none: the answer cites no source)")
    for r, n in key:
        s = sources[n]
        parts.append(f"- [{r}] {as_text(s.title or s.url)} \u2014 {s.url} ({_kind(s)})")
        parts += quote_lines(shared.get("citations") or {}, n, r)
    if read:
        parts += ["", "## Also read, not cited", ""]
        for r, n in read:  # one line each: no quote, as the answer does not rest on them
            parts.append(
                f"- [{r}] {as_text(sources[n].title or sources[n].url)} \u2014 {sources[n].url} ({_kind(sources[n])})"
            )
    return "\n".join(parts).rstrip() + "\n"


def _kind(s) -> str:
    return "knowledge base" if s.kind == "internal" else s.tool or "web"


def engine_note(shared: Mapping[str, Any]) -> str:
    """The footer's engine, model and cost; when the LLM failed and the offline engine answered in
    its place, says so: at every step ("failed at every step"), or at how many."""
    name = shared.get("engine", "?")
    falls = len(shared.get("llm_fallbacks") or [])
    if not falls or name == "offline":
        return f"engine {name}{cost_note(shared)}"
    if not (shared.get("token_usage") or {}).get("calls"):
        model = f" ({shared['model']})" if shared.get("model") else ""
        return f"engine {name}{model} failed at every step: fell back to the offline engine"
    return f"engine {name}{cost_note(shared)} · the offline engine answered {falls} of its steps (fell back)"
