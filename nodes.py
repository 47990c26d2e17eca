"""Sleuth's PocketFlow nodes.

Conventions (PocketFlow): all state lives in the shared store; `prep` reads it, `exec` does the
work without touching it (tools and engines via utils/), `post` writes results back and returns
the action string. Nodes are copied on every visit, so nothing is kept on `self` except the
runtime dependencies given at construction. After every step the session is saved atomically.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from pocketflow import Node

from .utils import steps
from .utils.deadline import call_within
from .utils.engine.protocol import Answer, EngineContext, EngineResult
from .utils.errors import TimeLimitExceeded
from .utils.interrupt import interrupted
from .utils.registry import CRAWL, HITL, ToolSpec
from .utils.research.actions import handed_over, offered_actions, reachable, remap_decision
from .utils.research.citations import VerifiedReport, verified_report
from .utils.research.feedback import missing_note, missing_sources, rejected_sources
from .utils.research.loopdata import Analysis, Choice, Form, PendingStep, Stop, StopReason, ToolOutcome
from .utils.research.loopguard import post_decision_check, pre_decision_stop, urls_to_read_first
from .utils.research.numbering import StreamedNumbers, shown
from .utils.research.state import (
    Shared,
    add_candidates,
    keep_facts,
    mark_visited,
    record_analysis,
    record_report,
    record_step,
    record_usage,
    start_feedback_round,
)
from .utils.text import valid_text

ANALYZE, DECIDE, FEEDBACK, RESEARCH, DONE = "analyze", "decide", "feedback", "research", "done"
REPORT_GRACE_S = 15.0  # at most this (and a quarter of --time-limit) for an LLM report once time is spent


class SleuthNode(Node):
    def __init__(self, rt):
        super().__init__()
        self.rt = rt

    def _run(self, shared: Shared) -> str:
        if self.rt.cancel.is_set() or interrupted():
            raise KeyboardInterrupt  # Ctrl-C seen by another thread (batch) or swallowed mid-step: stop here
        action = super()._run(shared)
        self.rt.checkpoint(shared)
        return action


class QueryInput(SleuthNode):
    """Takes the question (already in the shared store from the CLI) and starts the session."""

    def prep(self, shared: Shared) -> str:
        return shared.get("original_query", "")

    def exec(self, query: str) -> str:
        query = " ".join((query or "").split())
        if not query:
            raise ValueError("the question is empty")
        return query

    def post(self, shared: Shared, prep_res: str, query: str) -> str:
        shared["original_query"] = query
        shared["status"] = "running"
        self.rt.ui.started(shared)
        return DECIDE


class Decision(SleuthNode):
    """Checks the stopping rules, asks the engine for the next action, remaps and loop-checks it."""

    def prep(self, shared: Shared) -> DecisionJob:
        s, rt = self.rt.settings, self.rt
        forced = pre_decision_stop(shared, s.confidence, s.max_iterations, rt.time_left(), s.max_tokens, s.max_cost)
        offered = offered_actions(s, rt.tools.kb_available) if not forced else [HITL]
        # once the web was found unreachable this round, no web tool is offered again
        actions = reachable(offered, shared["research_history"][shared.get("round_start_iteration", 0) :])
        first = [] if forced else urls_to_read_first(shared, actions)
        return DecisionJob(rt.context(shared, actions), forced, first, actions != offered)

    def exec(self, job: DecisionJob) -> Decided:
        ctx = job.ctx
        if job.first:  # the question names a page: read it before anything else
            return Decided(Choice(CRAWL, " ".join(job.first), "The question names this page: read it first."))
        if job.forced:
            return Decided(Choice(HITL, "", job.forced[1]), job.forced)
        if len(ctx.actions) == 1:
            stop: Stop = (StopReason.NO_TOOLS, "no tool is configured or available")
            if job.web_down:
                stop = (StopReason.TOOL_FAILURES, "no network for the web tools, and no other tool is offered")
            return Decided(Choice(HITL, "", "no tool is available"), stop)
        result = self.rt.engine.decide(ctx)
        choice = remap_decision(result.data, ctx.actions, ctx.query)
        return Decided(choice, handed_over(result.data, choice), result)

    def post(self, shared: Shared, job: DecisionJob, out: Decided) -> str:
        if out.result is not None:
            record_usage(shared, out.result, shared["iteration_count"] + 1, "decision")
        stop, left = out.stop, self.rt.time_left()
        if not stop and left is not None and left <= 0:  # the engine's answer came too late: no new step
            stop = (StopReason.TIME_LIMIT, "the time limit for this round is spent")
        stop = stop or post_decision_check(shared, out.choice.action, out.choice.query_or_url)
        if stop:
            shared["stop_reason"], shared["stop_detail"] = stop
            shared["pending"], shared["status"] = None, "reporting"
            self.rt.ui.stopping(*stop)
            return HITL
        pending = PendingStep(shared["iteration_count"] + 1, out.choice)
        shared["pending"] = pending
        budget = shared.get("round_start_iteration", 0) + self.rt.settings.max_iterations
        self.rt.ui.step(pending.step, budget, pending.action, pending.query_or_url)
        return pending.action


@dataclass
class DecisionJob:
    ctx: EngineContext
    forced: Stop | None  # a stopping rule that applies before the engine is asked
    first: list[str]  # pages the question names, not read yet
    web_down: bool = False  # the web was found unreachable this round: its tools are not offered


@dataclass
class Decided:
    choice: Choice
    stop: Stop | None = None
    result: EngineResult[Choice] | None = None  # the engine's, when it was asked


class ToolNode(SleuthNode):
    """What every tool node shares: it runs one entry of the tool registry (utils/registry.py), given at
    construction, through its `run_tool` (utils/steps.py), records the step (sources, journey) and
    hands the items to the Analyzer."""

    def __init__(self, rt, spec: ToolSpec):
        super().__init__(rt)
        self.spec = spec
        self.tool = spec.tool  # its --tools name: the search backend to ask, the items' default tool

    def prep(self, shared: Shared) -> ToolJob:
        pending = shared["pending"]
        assert pending is not None  # the Decision set it
        return ToolJob(pending, shared["session_id"], set(shared["visited_urls"]), time.monotonic())

    def run_tool(self, job: ToolJob) -> ToolOutcome:
        raise NotImplementedError

    def exec(self, job: ToolJob) -> ToolOutcome:
        out = call_within(self.rt.time_left(), self.run_tool, job)  # abandoned at the time limit
        return replace(out, elapsed_ms=job.elapsed_ms())

    def exec_fallback(self, job: ToolJob, exc: Exception) -> ToolOutcome:
        """PocketFlow's hook once exec has failed: a failed tool is recorded and the loop goes on."""
        error = str(exc) if isinstance(exc, TimeLimitExceeded) else f"{type(exc).__name__}: {exc}"
        return ToolOutcome(False, error=error[:300], elapsed_ms=job.elapsed_ms())

    def post(self, shared: Shared, job: ToolJob, out: ToolOutcome) -> str:
        entry = record_step(shared, job.pending, out, self.tool)
        self.update_urls(shared, out)
        self.rt.ui.step_done(entry)
        return ANALYZE

    def update_urls(self, shared: Shared, out: ToolOutcome) -> None:
        found = (
            {"url": it.url, "title": it.title, "snippet": it.snippet} for it in out.items if it.form == Form.SNIPPET
        )
        add_candidates(shared, found)


@dataclass
class ToolJob:
    pending: PendingStep
    session_id: str
    visited: set[str]  # normalized URLs read (or refused) so far
    started: float  # time.monotonic()

    @property
    def query_or_url(self) -> str:
        return self.pending.query_or_url

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)


class WebSearch(ToolNode):
    def run_tool(self, job: ToolJob) -> ToolOutcome:
        return steps.web_search(self.rt.tools, self.tool, job.query_or_url)


class WebCrawl(ToolNode):
    def run_tool(self, job: ToolJob) -> ToolOutcome:
        return steps.crawl(self.rt.tools, self.rt.settings, self.tool, job.query_or_url, job.visited, job.session_id)

    def update_urls(self, shared: Shared, out: ToolOutcome) -> None:
        mark_visited(shared, out.fetched + [it.url for it in out.items])


class KnowledgeBaseSearch(ToolNode):
    def run_tool(self, job: ToolJob) -> ToolOutcome:
        return steps.kb_search(self.rt.tools, self.tool, job.query_or_url, job.session_id)


class WikiSearch(ToolNode):
    def run_tool(self, job: ToolJob) -> ToolOutcome:
        return steps.wiki_search(self.rt.tools, self.tool, job.query_or_url)


class Analyzer(SleuthNode):
    """Reads the tool output, extracts facts with their sources, scores confidence."""

    def prep(self, shared: Shared) -> EngineContext:
        return self.rt.context(shared, offered_actions(self.rt.settings, self.rt.tools.kb_available))

    def exec(self, ctx: EngineContext) -> EngineResult[Analysis]:
        if not ctx.items:
            return EngineResult(Analysis([], "The last step returned nothing to analyze.", ctx.confidence), "none")
        return self.rt.engine.analyze(ctx)

    def post(self, shared: Shared, ctx: EngineContext, result: EngineResult[Analysis]) -> str:
        analysis = result.data
        step = ctx.step.step if ctx.step else shared["iteration_count"]
        record_usage(shared, result, step, "analyzer")
        keep_facts(shared, analysis.facts, ctx.items, step)
        record_analysis(shared, analysis, step, result.engine, result.fallback)
        n_sources, n_facts = len(shared["sources"]), len(shared["extracted_information"])
        self.rt.ui.analyzed(analysis.confidence_score, n_sources, n_facts, result.fallback)
        return DECIDE


class HITLOutput(SleuthNode):
    """Writes the report: the engine's answer, plus journey and sources from the shared store."""

    def prep(self, shared: Shared) -> EngineContext:
        # The report is written even when the time is spent: an LLM gets a short grace, then the
        # offline engine writes it.
        rt = self.rt
        grace = min(REPORT_GRACE_S, 0.25 * rt.settings.time_limit)
        deadline = None if rt.deadline is None else max(rt.deadline, time.monotonic()) + grace
        return replace(rt.context(shared, ()), deadline=deadline)

    def exec(self, ctx: EngineContext) -> VerifiedReport[EngineResult[Answer]]:
        show = self.rt.ui.report_chunk  # streamed with [n] as the report will number them
        stream = StreamedNumbers([s.n for s in ctx.sources], show) if self.rt.stream_report else None

        def write(problems: str, first: bool) -> EngineResult[Answer]:
            return self.rt.engine.report(replace(ctx, citation_problems=problems), on_chunk=stream if first else None)

        # Written, checked against the sources, and written once more by an LLM whose citations fail.
        return verified_report(write, ctx.sources, ctx.facts)

    def post(self, shared: Shared, ctx: EngineContext, out: VerifiedReport[EngineResult[Answer]]) -> str:
        for result in out.results:
            record_usage(shared, result, shared["iteration_count"], "report")
        shared["model"] = self.rt.engine.model or shared.get("model")  # resolved by now
        record_report(shared, out.answer, out.verification, out.regenerated)
        self.rt.ui.report(shared["final_answer"] or "")
        return FEEDBACK


class HumanFeedback(SleuthNode):
    """Asks for feedback (interactive), takes scripted feedback (--feedback), or ends (batch).
    Feedback restarts the Decision with it; an empty answer ends the run."""

    def prep(self, shared: Shared) -> dict:
        return {
            "session_id": shared["session_id"],
            "sources": shared["sources"],
            "shown": shown(shared["reports"], len(shared["sources"])),  # (order, listed) of the last report
            "report": shared["final_answer"],
            "query": shared["original_query"],
            "round": len(shared["feedback_history"]) + 1,
        }

    def exec(self, prep: dict) -> str | None:
        if self.rt.feedback is None:
            return None
        text = " ".join(valid_text(self.rt.feedback(prep) or "").split())
        if not text or text.lower() in {"done", "/done", "/quit", "quit", "exit"}:
            return None
        return text  # it steers the research (utils/research/feedback.py); it is never stored as knowledge

    def post(self, shared: Shared, prep: dict, text: str | None) -> str:
        if not text:
            shared["status"] = "done"
            return DONE
        if missing := missing_sources(text, prep["shown"][0]):  # "ignore [40]" with 12 sources: said
            self.rt.ui.warn(missing_note(missing, prep["shown"][0]))
        start_feedback_round(shared, text, rejected_sources(text, prep["shown"][0]))  # "ignore [2]" as shown
        self.rt.start_round()  # the feedback round gets its own time budget
        return RESEARCH
