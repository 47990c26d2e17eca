"""The shared store: Sleuth's one piece of state.

PocketFlow nodes are copied on every visit, so everything that must survive a step lives here.
The schema is declared with TypedDicts (documented in docs/design.md). It holds JSON types, except
for the loop's data (research/loopdata.py): the sources (Source), the facts (Fact) and the step in
flight, `pending` (a PendingStep or None). `saved_form(shared)` is the JSON a session file holds,
and `restored` reads it back.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, cast

from ..text import valid_text
from ..usage import sum_usage
from .loopdata import Analysis, Fact, Form, PendingStep, Source, StopReason, ToolItem, ToolOutcome

if TYPE_CHECKING:
    from .citations import Verification

SCHEMA_VERSION = 1


class HistoryEntry(TypedDict, total=False):
    step: int  # iteration number (1-based)
    action: str  # what the Decision asked for
    query_or_url: str
    reasoning: str
    tool_used: str | None  # tool that actually produced the result (after remap/fallback)
    remapped_from: str | None  # original action when the chosen tool was not offered
    fallback_used: bool
    ok: bool
    error: str | None
    errors: list[dict]  # per-engine / per-URL errors
    results: int  # items returned
    retrieval_confidence: float  # KB steps only: the best hit's score
    elapsed_ms: int
    timestamp: str


class AnalyzerRecord(TypedDict, total=False):
    step: int
    extracted_info: list[dict]
    assessment: str
    confidence_score: float
    suggestions_for_next_step: list[str]
    new_potential_urls: list[str]
    inconsistencies_found: str
    engine: str  # engine that produced it (offline when a fallback happened)
    fallback: bool


class Candidate(TypedDict, total=False):
    url: str
    norm: str  # normalize_url(url)
    title: str
    snippet: str


class FeedbackRecord(TypedDict, total=False):
    text: str
    timestamp: str
    after_iteration: int
    rejected: list[int]  # session numbers of the sources it rejected (absent in sessions saved before)


class TokenUsage(TypedDict):
    calls: int
    prompt: int
    output: int
    total: int


class Shared(TypedDict, total=False):
    schema_version: int
    session_id: str
    created_at: str
    updated_at: str
    status: Literal["running", "reporting", "awaiting_feedback", "done", "interrupted"]
    original_query: str
    settings: dict  # public settings (no secrets)
    engine: str  # offline | gemini | openai
    model: str | None  # the LLM's model name (None for the offline engine)
    iteration_count: int  # tool steps taken, all rounds
    round_start_iteration: int  # iteration_count when the current feedback round began
    research_history: list[HistoryEntry]
    extracted_information: list[Fact]
    sources: list[Source]
    confidence_score: float
    visited_urls: list[str]  # normalized URLs fetched (or refused) by the crawler
    candidate_urls: list[Candidate]  # seen but not yet crawled
    analyzer_reports: list[AnalyzerRecord]
    feedback_history: list[FeedbackRecord]
    excluded_sources: list[int]  # sources the human rejected in feedback ("the second source is outdated")
    pending: PendingStep | None  # Decision -> tool -> Analyzer hand-off for the step in flight
    llm_fallbacks: list[dict]  # {"step","phase","error"} when the LLM failed and offline took over
    engine_notes: dict[str, dict]  # engine name -> what that engine keeps between steps (its own JSON)
    stop_reason: StopReason | None
    stop_detail: str
    answer: str | None  # the direct answer (markdown with [n] citations)
    final_answer: str | None  # the whole report (answer + journey + sources), markdown
    reports: list[dict]  # every report shown: {"round","answer","confidence","stop_reason","citations",
    #   "order","listed"}: order[i] is the session number of the source the report shows as [i+1]
    citations: dict  # the last report's check: {"total","supported","unsupported","regenerated","checks"}
    token_usage: TokenUsage
    cost_usd: float | None  # estimated USD for the tokens spent; None once any call's price is unknown
    round_start_cost: float  # cost_usd when the current feedback round began (--max-cost is per round)
    round_start_tokens: int  # token_usage.total when the current feedback round began (--max-tokens)
    elapsed_ms: int


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_session_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def new_shared(
    query: str, settings: dict | None = None, engine: str = "offline", session_id: str | None = None
) -> Shared:
    ts = now_iso()
    return Shared(
        schema_version=SCHEMA_VERSION,
        session_id=session_id or new_session_id(),
        created_at=ts,
        updated_at=ts,
        status="running",
        original_query=valid_text(query),
        settings=settings or {},
        engine=engine,
        iteration_count=0,
        round_start_iteration=0,
        research_history=[],
        extracted_information=[],
        sources=[],
        confidence_score=0.0,
        visited_urls=[],
        candidate_urls=[],
        analyzer_reports=[],
        feedback_history=[],
        excluded_sources=[],
        pending=None,
        llm_fallbacks=[],
        engine_notes={},
        stop_reason=None,
        stop_detail="",
        answer=None,
        final_answer=None,
        reports=[],
        token_usage=TokenUsage(calls=0, prompt=0, output=0, total=0),
        cost_usd=0.0,
        round_start_cost=0.0,
        round_start_tokens=0,
        elapsed_ms=0,
    )


def restored(data: object) -> Shared:
    """A saved session as a whole shared store. Fields an older (or hand-edited) file lacks take
    their defaults; a file that is not a session, or a field of the wrong kind, raises ValueError
    naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"it holds a JSON {_json_kind(data)}, not an object")
    query, session_id = data.get("original_query"), data.get("session_id")
    if not isinstance(query, str) or not isinstance(session_id, str) or not session_id:
        raise ValueError('it has no "session_id" and "original_query"')
    shared = new_shared(query, session_id=session_id)
    fields = cast(dict[str, Any], shared)  # filled from the file, key by key
    for key, value in data.items():
        default = fields.get(key)
        if value is None and default is not None:
            continue  # a null where a value belongs keeps the default
        if default is not None and _json_kind(value) != _json_kind(default):
            raise ValueError(f'its "{key}" should be a JSON {_json_kind(default)}, not a {_json_kind(value)}')
        fields[key] = value
    shared["pending"] = PendingStep.from_json(shared["pending"]) if isinstance(shared["pending"], dict) else None
    shared["sources"] = [Source.from_json(s) for s in shared["sources"]]
    saved_facts = shared["extracted_information"]
    shared["extracted_information"] = [Fact.from_json(f) for f in saved_facts]
    _notes_of_older_files(shared, saved_facts)
    reason = shared["stop_reason"]
    shared["stop_reason"] = StopReason(reason) if reason in set(StopReason) else None
    return shared


# What sessions saved before the offline engine kept its own notes: on each fact, and as "term_idf".
LEGACY_NOTES = ("qcov", "retrieval", "prior", "follow_up", "sem")


def _notes_of_older_files(shared: Shared, saved_facts: list) -> None:
    """An older file's offline-engine fields (on its facts, and its "term_idf") become that engine's
    notes (engine/notes.py), so a resumed session weighs its facts as the run that found them did."""
    legacy_idf = shared.pop("term_idf", None)  # type: ignore[typeddict-item]
    by_key: dict[str, list[dict]] = {}
    for fact, raw in zip(shared["extracted_information"], saved_facts, strict=True):
        if any(k in raw for k in LEGACY_NOTES):
            by_key.setdefault(fact.key, []).append({k: raw[k] for k in LEGACY_NOTES if k in raw})
    if (by_key or legacy_idf) and "offline" not in shared["engine_notes"]:
        steps = [h.get("step", 0) for h in shared["research_history"] if "retrieval_confidence" in h]
        idf = legacy_idf if isinstance(legacy_idf, dict) else {}
        shared["engine_notes"]["offline"] = {"facts": by_key, "term_idf": idf, "idf_steps": steps}


def saved_form(shared: Shared) -> dict:
    """The shared store as JSON types: what a session file holds (the step in flight as an object)."""
    pending = shared.get("pending")
    return {
        **shared,
        "extracted_information": [f.to_json() for f in shared.get("extracted_information", [])],
        "sources": [s.to_json() for s in shared.get("sources", [])],
        "pending": pending.to_json() if pending else {},
    }


def _json_kind(value: object) -> str:
    kinds = {bool: "true/false", int: "number", float: "number", str: "string", list: "array", dict: "object"}
    return next((name for t, name in kinds.items() if isinstance(value, t)), "null")


def record_step(shared: Shared, pending: PendingStep, outcome: ToolOutcome, tool: str) -> HistoryEntry:
    """A tool step's results join the session: each item becomes a numbered source (found by the
    tool `tool` unless it says which backend), the step its journey entry; the step in flight now
    holds the items for the Analyzer."""
    for it in outcome.items:
        it.source = add_source(shared, it, it.tool or tool)
    entry = HistoryEntry(
        step=pending.step,
        action=pending.action,
        query_or_url=pending.query_or_url,
        reasoning=pending.decision.reasoning,
        tool_used=outcome.tool_used,
        remapped_from=pending.decision.remapped_from,
        fallback_used=outcome.fallback_used,
        ok=outcome.ok,
        error=outcome.error,
        errors=outcome.errors,
        results=len(outcome.items),
    )
    if outcome.retrieval_confidence is not None:
        entry["retrieval_confidence"] = outcome.retrieval_confidence
    entry |= HistoryEntry(elapsed_ms=outcome.elapsed_ms, timestamp=now_iso())
    shared["research_history"].append(entry)
    shared["iteration_count"] = pending.step
    pending.items, pending.tool_used = outcome.items, outcome.tool_used
    return entry


def add_source(shared: Shared, item: ToolItem, tool: str) -> int:
    """Add a source, or find the one already there for the same document; return its number.

    Web sources are the same when their normalized URLs match; KB sources when their document
    (path or URL) matches, so every chunk of one file shares one citation number. A crawled page
    reached through a redirect (``redirected_from``, e.g. a Google grounding link) updates the
    source that named the redirect: it keeps its number, takes the final URL and records both.
    A bounded excerpt of the item's text is kept to verify citations against.
    """
    url, title, text, redirected_from = item.url, item.title, item.text, item.requested
    kind: Literal["external", "internal"] = "internal" if item.internal else "external"
    from ..urls import normalize_url
    from .citations import EXCERPT_CHARS, merge_excerpt

    key = normalize_url(url) if kind == "external" else url
    if redirected_from and kind == "external" and normalize_url(redirected_from) != key:
        origin = normalize_url(redirected_from)
        if not any(normalize_url(s.url) == key for s in shared["sources"] if s.kind == kind):
            for s in shared["sources"]:
                if s.kind == kind and normalize_url(s.url) == origin:
                    s.url, s.redirected_from, s.tool, s.title = url, redirected_from, tool, title or s.title
                    return s.n
    for s in shared["sources"]:
        same = normalize_url(s.url) if s.kind == "external" else s.url
        if s.kind == kind and same == key:
            if title and s.title in ("", s.url):
                s.title = title
            if tool == "crawl":
                s.tool = "crawl"  # the page itself was read, not just its search snippet
            s.excerpt = merge_excerpt(s.excerpt, text[:EXCERPT_CHARS])
            return s.n
    n = len(shared["sources"]) + 1
    shared["sources"].append(
        Source(
            n=n,
            title=title or url,
            url=url,
            kb_id=item.kb_id,
            tool=tool,
            kind=kind,
            snippet=item.snippet[:300],
            excerpt=merge_excerpt("", text[:EXCERPT_CHARS]),
        )
    )
    return n


def record_analysis(shared: Shared, analysis: Analysis, step: int, engine: str, fallback: bool) -> None:
    """An analysis' confidence, the pages it suggests, the engine's notes and the Analyzer JSON (in
    `analyzer_reports`); the step is done. Its facts are kept by `keep_facts`."""
    shared["engine_notes"] = {**shared.get("engine_notes", {}), **analysis.notes}
    shared["confidence_score"] = analysis.confidence_score
    add_candidates(shared, ({"url": u} for u in analysis.new_potential_urls))
    shared["analyzer_reports"].append(
        AnalyzerRecord(
            extracted_info=[{"fact": f.text, "source": f.source, "score": f.score} for f in analysis.facts],
            assessment=analysis.assessment,
            confidence_score=analysis.confidence_score,
            suggestions_for_next_step=analysis.suggestions_for_next_step,
            new_potential_urls=analysis.new_potential_urls,
            inconsistencies_found=analysis.inconsistencies_found,
            step=step,
            engine=engine,
            fallback=fallback,
        )
    )
    shared["pending"] = None


def keep_facts(shared: Shared, facts: Sequence[Fact], items: Sequence[ToolItem], step: int) -> None:
    """An analysis' facts join the session's, dated with their step; a sentence already kept (read
    on a page or in the KB: a snippet's may be read again on its page) is not kept twice."""
    known = {f.text for f in shared["extracted_information"] if f.form != Form.SNIPPET}
    item_text: dict[int, str] = {}
    for it in items:
        item_text[it.source] = item_text.get(it.source, "") + "\n" + it.text
    for f in facts:
        if f.text not in known:
            known.add(f.text)
            keep_fact_text(shared, f.source, f.text, item_text.get(f.source, ""))
            shared["extracted_information"].append(replace(f, step=step))


def keep_fact_text(shared: Shared, source: int, sentence: str, item_text: str) -> None:
    """A fact the analyzer took verbatim from beyond a source's excerpt joins the excerpt, so its
    citation can be verified; words that are not in the tool's output are never added."""
    from .citations import merge_excerpt

    if sentence not in item_text:
        return
    for s in shared["sources"]:
        if s.n == source and sentence not in s.excerpt:
            s.excerpt = merge_excerpt(s.excerpt, sentence)


def add_candidates(shared: Shared, entries) -> None:
    """Remember URLs worth crawling ({"url", "title", "snippet"}), unless visited or already known."""
    from ..urls import normalize_url

    visited = set(shared["visited_urls"])
    known = {c["norm"] for c in shared["candidate_urls"]}
    for e in entries:
        url = str(e.get("url", ""))
        if not url.startswith(("http://", "https://")):
            continue
        norm = normalize_url(url)
        if norm not in visited and norm not in known:
            known.add(norm)
            shared["candidate_urls"].append(
                {"url": url, "norm": norm, "title": e.get("title", ""), "snippet": e.get("snippet", "")}
            )


def mark_visited(shared: Shared, urls: Iterable[str]) -> None:
    """Pages a crawl read or refused are visited (normalized), and no longer candidates."""
    from ..urls import normalize_url

    visited = shared["visited_urls"]
    for u in urls:
        norm = normalize_url(u)
        if norm not in visited:
            visited.append(norm)
    done = set(visited)
    shared["candidate_urls"] = [c for c in shared["candidate_urls"] if c["norm"] not in done]


class EngineCall(Protocol):
    """An engine call's result (engine/protocol.py: EngineResult), as far as the session counts it."""

    @property
    def usage(self) -> dict | None: ...

    @property
    def fallback(self) -> bool: ...

    @property
    def error(self) -> str | None: ...


def record_usage(shared: Shared, call: EngineCall, step: int, phase: str) -> None:
    """An engine call's tokens and cost, and, when the offline engine answered for a failed LLM call,
    that fallback (`phase`: decision, analyzer or report)."""
    add_usage(shared, call.usage)
    if call.fallback:
        shared["llm_fallbacks"].append({"step": step, "phase": phase, "error": call.error})


def record_report(shared: Shared, answer: str, verification: Verification, regenerated: bool) -> None:
    """The report shown: its answer, the citations' check, the whole report, and its entry in `reports`."""
    from .citations import summary
    from .report import build_report, numbering

    shared["answer"] = answer
    shared["citations"] = summary(verification, regenerated)
    shared["final_answer"] = build_report(shared, answer)
    shared["reports"].append(
        {
            "round": len(shared["feedback_history"]) + 1,
            "answer": answer,
            "confidence": shared["confidence_score"],
            "stop_reason": shared.get("stop_reason"),
            "citations": verification.counts(),
            **numbering(shared, answer),  # the report's [1..k] -> session source numbers
        }
    )
    shared["status"] = "awaiting_feedback"


def start_feedback_round(shared: Shared, text: str, rejected: list[int]) -> None:
    """Feedback restarts the research: recorded with the sources it rejects, a new round begins (its
    own step, token and cost budgets) and the last round's stop reason is cleared."""
    shared["feedback_history"].append(
        {"text": text, "timestamp": now_iso(), "after_iteration": shared["iteration_count"], "rejected": rejected}
    )
    shared["excluded_sources"] = sorted(set(shared.get("excluded_sources", [])) | set(rejected))
    shared["round_start_iteration"] = shared["iteration_count"]
    shared["round_start_cost"] = shared.get("cost_usd") or 0.0
    shared["round_start_tokens"] = shared["token_usage"]["total"]
    shared["stop_reason"], shared["stop_detail"] = None, ""
    shared["status"] = "running"


def add_usage(shared: Shared, usage: dict | None) -> None:
    """Count one engine call's tokens and cost into the session (utils/usage.py sums them)."""
    if not usage:
        return
    total: dict[str, Any] = {**shared["token_usage"], "cost_usd": shared.get("cost_usd", 0.0)}
    sum_usage(total, usage)
    if "cost_usd" in usage:  # an engine with a price table entry says what the call cost, or None
        shared["cost_usd"] = total["cost_usd"]
    counts = shared["token_usage"]
    counts["calls"], counts["prompt"], counts["output"] = total["calls"], total["prompt"], total["output"]
    counts["total"] = total["total"]


def round_cost(shared: Shared) -> float | None:
    """Estimated USD spent in the current feedback round (None when unknown)."""
    spent = shared.get("cost_usd", 0.0)
    return None if spent is None else spent - shared.get("round_start_cost", 0.0)


def round_tokens(shared: Shared) -> int:
    """LLM tokens spent in the current feedback round."""
    return shared["token_usage"]["total"] - shared.get("round_start_tokens", 0)


def round_iterations(shared: Shared) -> int:
    return shared["iteration_count"] - shared.get("round_start_iteration", 0)


def round_reports(shared: Shared) -> list[AnalyzerRecord]:
    """Analyzer reports of the current feedback round."""
    start = shared.get("round_start_iteration", 0)
    return [r for r in shared["analyzer_reports"] if r.get("step", 0) > start]
