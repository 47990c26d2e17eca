"""Sleuth's PocketFlow nodes.

Conventions (PocketFlow): all state lives in the shared store; `prep` reads it, `exec` does the
work without touching it (tools and engines via utils/), `post` writes results back and returns
the action string. Nodes are copied on every visit, so nothing is kept on `self` except the
runtime dependencies given at construction. After every step the session is saved atomically.
"""

from __future__ import annotations

import time
from dataclasses import asdict

from pocketflow import Node

from .utils.deadline import call_within
from .utils.engine.base import EngineResult
from .utils.errors import TimeLimitExceeded
from .utils.interrupt import interrupted
from .utils.registry import CRAWL, HITL, ToolSpec
from .utils.research.actions import offered_actions, remap_decision
from .utils.research.feedback import engine_text, rejected_sources
from .utils.research.loopdata import Analysis, Choice, Fact, PendingStep, ToolItem
from .utils.research.loopguard import post_decision_check, pre_decision_stop, split_urls, urls_to_read_first
from .utils.research.numbering import StreamedNumbers, shown
from .utils.research.state import add_candidates, add_source, add_usage, keep_fact_text, now_iso, round_iterations
from .utils.text import valid_text

ANALYZE, DECIDE, FEEDBACK, RESEARCH, DONE = "analyze", "decide", "feedback", "research", "done"
REPORT_GRACE_S = 15.0  # at most this (and a quarter of --time-limit) for an LLM report once time is spent


class SleuthNode(Node):
    def __init__(self, rt):
        super().__init__()
        self.rt = rt

    def _run(self, shared):
        if self.rt.cancel.is_set() or interrupted():
            raise KeyboardInterrupt  # Ctrl-C seen by another thread (batch) or swallowed mid-step: stop here
        action = super()._run(shared)
        self.rt.checkpoint(shared)
        return action


def _feedback_texts(shared, current_round_only: bool = False) -> list[str]:
    """All feedback so far, or only the feedback that started the current round."""
    fb = shared["feedback_history"]
    if current_round_only:
        return [engine_text(fb[-1])] if fb else []
    return [engine_text(f) for f in fb]


class QueryInput(SleuthNode):
    """Takes the question (already in the shared store from the CLI) and starts the session."""

    def prep(self, shared):
        return shared.get("original_query", "")

    def exec(self, query):
        query = " ".join((query or "").split())
        if not query:
            raise ValueError("the question is empty")
        return query

    def post(self, shared, prep_res, query):
        shared["original_query"] = query
        shared["status"] = "running"
        self.rt.ui.started(shared)
        return DECIDE


class Decision(SleuthNode):
    """Checks the stopping rules, asks the engine for the next action, remaps and loop-checks it."""

    def prep(self, shared):
        s = self.rt.settings
        rt = self.rt
        forced = pre_decision_stop(shared, s.confidence, s.max_iterations, rt.time_left(), s.max_tokens, s.max_cost)
        actions = offered_actions(self.rt.settings, self.rt.tools.kb_available) if not forced else [HITL]
        reports = shared["analyzer_reports"]
        ctx = {
            "query": shared["original_query"],
            "actions": actions,
            "history": shared["research_history"],
            "facts": shared["extracted_information"],
            "analyzer": reports[-1] if reports else None,
            "feedback": _feedback_texts(shared),
            "round_feedback": _feedback_texts(shared, current_round_only=True),
            "confidence": shared["confidence_score"],
            "threshold": s.confidence,
            "steps_left": s.max_iterations - round_iterations(shared),
            "candidate_urls": shared["candidate_urls"],
            "visited_urls": shared["visited_urls"],
            "excluded_sources": shared.get("excluded_sources", []),
            "sources": shared["sources"],
            "deadline": rt.deadline,
        }
        return {"ctx": ctx, "forced": forced, "first": [] if forced else urls_to_read_first(shared, actions)}

    def exec(self, prep):
        ctx, forced = prep["ctx"], prep["forced"]
        if prep["first"]:  # the question names a page: read it before anything else
            why = "The question names this page: read it first."
            return {"choice": Choice(CRAWL, " ".join(prep["first"]), why), "stop": None, "result": None}
        if forced:
            return {"choice": Choice(HITL, "", forced[1]), "stop": forced, "result": None}
        if len(ctx["actions"]) == 1:
            stop = ("no_tools", "no tool is configured or available")
            return {"choice": Choice(HITL, "", "no tool is available"), "stop": stop, "result": None}
        result = self.rt.engine.decide(ctx)
        choice = remap_decision(result.data, ctx["actions"], ctx["query"])
        stop = None
        if choice.action == HITL:
            if choice.remapped_from:
                stop = ("no_tools", f"{choice.remapped_from} is not available and nothing can replace it")
            else:
                stop = (result.extra.get("stop_reason", "decided"), choice.reasoning or "engine chose to stop")
        return {"choice": choice, "stop": stop, "result": result}

    def post(self, shared, prep, out):
        result, choice = out["result"], out["choice"]
        if result is not None:
            add_usage(shared, result.usage)
            if result.fallback:
                shared["llm_fallbacks"].append(
                    {"step": shared["iteration_count"] + 1, "phase": "decision", "error": result.error}
                )
        stop = out["stop"]
        left = self.rt.time_left()
        if not stop and left is not None and left <= 0:  # the engine's answer came too late: no new step
            stop = ("time_limit", "the time limit for this round is spent")
        if not stop:
            stop = post_decision_check(shared, choice.action, choice.query_or_url)
        if stop:
            shared["stop_reason"], shared["stop_detail"] = stop
            shared["pending"] = None
            shared["status"] = "reporting"
            self.rt.ui.stopping(*stop)
            return HITL
        pending = PendingStep(shared["iteration_count"] + 1, choice)
        shared["pending"] = pending
        self.rt.ui.step(
            pending.step,
            shared.get("round_start_iteration", 0) + self.rt.settings.max_iterations,
            choice.action,
            choice.query_or_url,
        )
        return choice.action


class ToolNode(SleuthNode):
    """Shared post-processing for tool nodes: history entry, sources, hand-off to the Analyzer.
    Each runs one entry of the tool registry (utils/registry.py), given at construction."""

    def __init__(self, rt, spec: ToolSpec):
        super().__init__(rt)
        self.spec = spec
        self.tool = spec.tool  # its --tools name: the search backend to ask, the items' default tool

    def prep(self, shared):
        pending: PendingStep = shared["pending"]
        job = {"pending": pending, "query_or_url": pending.query_or_url, **self.prep_extra(shared)}
        return {**job, "started": time.monotonic()}

    def prep_extra(self, shared) -> dict:
        """What a tool needs from the store beyond the pending decision."""
        return {}

    def run_tool(self, job: dict) -> dict:
        """The tool's outcome: {"ok", "items": [ToolItem], "tool_used", "error", "errors", ...}."""
        raise NotImplementedError

    def exec(self, job):
        out = call_within(self.rt.time_left(), self.run_tool, job)  # abandoned at the time limit
        out["elapsed_ms"] = int((time.monotonic() - job["started"]) * 1000)
        return out

    def exec_fallback(self, job, exc):
        """PocketFlow's hook once exec has failed: a failed tool is recorded and the loop goes on."""
        return {
            "ok": False,
            "error": (str(exc) if isinstance(exc, TimeLimitExceeded) else f"{type(exc).__name__}: {exc}")[:300],
            "items": [],
            "tool_used": None,
            "elapsed_ms": int((time.monotonic() - job["started"]) * 1000),
        }

    def post(self, shared, job, out):
        pending: PendingStep = job["pending"]
        items: list[ToolItem] = out.get("items", [])
        for it in items:
            it.source = add_source(
                shared,
                url=it.url,
                title=it.title,
                tool=it.tool or self.tool,
                kind="internal" if it.internal else "external",
                snippet=it.snippet,
                kb_id=it.kb_id,
                redirected_from=it.requested,
                text=it.text,
            )
        entry = {
            "step": pending.step,
            "action": pending.action,
            "query_or_url": pending.query_or_url,
            "reasoning": pending.decision.reasoning,
            "tool_used": out.get("tool_used"),
            "remapped_from": pending.decision.remapped_from,
            "fallback_used": bool(out.get("fallback_used")),
            "ok": bool(out.get("ok")),
            "error": out.get("error"),
            "errors": out.get("errors", []),
            "results": len(items),
            **({"retrieval_confidence": out["retrieval_confidence"]} if "retrieval_confidence" in out else {}),
            "elapsed_ms": out["elapsed_ms"],
            "timestamp": now_iso(),
        }
        shared["research_history"].append(entry)
        shared["iteration_count"] = pending.step
        if out.get("term_idf"):  # how rare the query's words are in the KB: the analyzer weighs by it
            shared["term_idf"] = {**shared.get("term_idf", {}), **out["term_idf"]}
        self.update_urls(shared, out)
        pending.items, pending.tool_used = items, out.get("tool_used")
        self.rt.ui.step_done(entry)
        return ANALYZE

    def update_urls(self, shared, out):
        add_candidates(
            shared,
            (
                {"url": it.url, "title": it.title, "snippet": it.snippet}
                for it in out.get("items", [])
                if it.form == "snippet"
            ),
        )


class WebSearch(ToolNode):
    """A web search through utils/web/search.py: `duckduckgo` is SearXNG when SEARXNG_URL is set, then
    DuckDuckGo; `google` is Custom Search while configured and before 2027-01-01, else Gemini grounding."""

    def run_tool(self, job):
        outcome = self.rt.tools.search().search(self.tool, job["query_or_url"])
        items = [
            ToolItem(
                url=r.url,
                title=r.title,
                text=f"{r.title}. {r.snippet}",
                form="snippet",
                snippet=r.snippet,
                tool=r.backend,
            )
            for r in outcome.results
        ]
        errors = [dict(e) for e in outcome.errors]
        error = None
        if not items:
            error = "; ".join(f"{e.get('backend')}: {e['kind']} ({e['message'][:80]})" for e in errors) or "no results"
        return {
            "ok": bool(items),
            "items": items,
            "tool_used": outcome.tool_used,
            "fallback_used": outcome.fallback_used,
            "errors": errors,
            "error": error,
        }


class WebCrawl(ToolNode):
    """Fetches one or more URLs concurrently (robots, SSRF and size rules in utils/crawl.py) and
    remembers what it read in the knowledge base unless --no-remember."""

    MAX_URLS = 8

    def prep_extra(self, shared):
        return {"session_id": shared["session_id"], "visited": list(shared["visited_urls"])}

    def run_tool(self, job):
        from .utils.urls import normalize_url

        visited = set(job["visited"])  # a list naming some visited URLs fetches only the new ones
        urls = [u for u in dict.fromkeys(split_urls(job["query_or_url"])) if normalize_url(u) not in visited]
        urls = urls[: self.MAX_URLS]
        results = self.rt.tools.fetcher().fetch_many(urls)
        items, errors = [], []
        for r in results:
            if r.error or not r.text.strip():
                errors.append({"url": r.url, "kind": r.error_kind or "empty", "message": r.error or "no text"})
                continue
            items.append(
                ToolItem(
                    url=r.final_url or r.url,
                    title=r.title or r.final_url or r.url,
                    text=r.text,
                    form="page",
                    lead=True,  # the page from its start: its first sentence introduces its subject
                    links=r.links,
                    snippet=r.text[:200],
                    requested=r.url,
                )
            )
        if items and self.rt.settings.remember and "kb" in self.rt.settings.tools:
            self._remember(items, job.get("session_id"), errors)
        error = "; ".join(f"{e['url']}: {e['message'][:100]}" for e in errors) if errors else None
        return {
            "ok": bool(items),
            "items": items,
            "tool_used": self.tool if items else None,
            "errors": errors,
            "error": error,
            "fetched": [r.url for r in results],
        }

    def _remember(self, items, session_id, errors):
        try:
            kb = self.rt.tools.kb()
            for it in items:
                kb.add_document(source=it.url, title=it.title, text=it.text, source_type="web", session_id=session_id)
        except Exception as exc:  # noqa: BLE001 - memory is a bonus; the research goes on
            errors.append({"url": "(knowledge base)", "kind": "remember", "message": f"not remembered: {exc}"})

    def update_urls(self, shared, out):
        from .utils.urls import normalize_url

        visited = shared["visited_urls"]
        for u in out.get("fetched", []) + [it.url for it in out.get("items", [])]:
            norm = normalize_url(u)
            if norm not in visited:
                visited.append(norm)
        done = set(visited)
        shared["candidate_urls"] = [c for c in shared["candidate_urls"] if c["norm"] not in done]


class KnowledgeBaseSearch(ToolNode):
    """The best chunks for the query, plus the best chunks of documents the top hits link to (an
    ingested HTML file's links are followed the way a crawl follows a page's: utils/kb/links.py)."""

    K = 10
    LINKED = 4

    def prep_extra(self, shared):
        return {"session_id": shared["session_id"]}

    def run_tool(self, job):
        from .utils.kb.hits import distinct
        from .utils.kb.links import follow

        kb = self.rt.tools.kb()
        # Pages this very session read (research memory) are already among its sources: skip them.
        # ...and a passage another document repeats (a page and its rendering) is read once.
        hits = kb.search(job["query_or_url"], k=self.K * 3)
        hits = distinct([h for h in hits if h.metadata.get("session_id") != job["session_id"]])[: self.K]
        hits += [
            h
            for h in follow(kb, hits, job["query_or_url"], keep=self.LINKED)
            if h.metadata.get("session_id") != job["session_id"]
        ]
        items = [
            ToolItem(
                url=h.source,
                title=h.title or h.source,
                section=h.section,  # heading path of the chunk ("Title › Section"), "" if none
                text=h.text,
                form="kb",
                tool=self.tool,
                kb_id=h.id,
                snippet=h.text[:200],
                score=h.score,
                linked=bool(h.metadata.get("via_link")),
                lead=h.chunk == 0,  # the document's first chunk: its first sentence introduces the title
            )
            for h in hits
        ]
        return {
            "ok": bool(items),
            "items": items,
            "tool_used": self.tool,
            "error": None if items else "no matching passages",
            "retrieval_confidence": round(max((h.score for h in hits), default=0.0), 3),
            "term_idf": kb.term_idf(job["query_or_url"]),
        }


class WikiSearch(ToolNode):
    """Searches a MediaWiki (--wiki-url; English Wikipedia by default) and reads its best pages' plain
    text through the API (utils/web/wiki.py): no crawling; a page's source is its canonical URL."""

    PAGES = 3

    def run_tool(self, job):
        pages, problems = self.rt.tools.wiki().search_and_read(job["query_or_url"], k=self.PAGES)
        items = [
            ToolItem(url=p.url, title=p.title, text=p.text, form="page", lead=True, snippet=p.text[:200]) for p in pages
        ]
        errors = [{"url": title, "kind": "wiki", "message": why} for title, why in problems]
        return {
            "ok": bool(items),
            "items": items,
            "tool_used": self.tool if items else None,
            "errors": errors,
            "error": None if items else "; ".join(f"{e['url']}: {e['message']}" for e in errors),
        }


class Analyzer(SleuthNode):
    """Reads the tool output, extracts facts with their sources, scores confidence."""

    def prep(self, shared):
        pending: PendingStep = shared["pending"]
        crawl = CRAWL in offered_actions(self.rt.settings, self.rt.tools.kb_available)
        unread = shared["candidate_urls"]
        return {
            "query": shared["original_query"],
            "action": pending.action,
            "query_or_url": pending.query_or_url,
            "tool": pending.tool_used,
            "items": pending.items,
            "facts": shared["extracted_information"],
            "feedback": _feedback_texts(shared),
            "excluded_sources": shared.get("excluded_sources", []),
            "confidence": shared["confidence_score"],
            "term_idf": shared.get("term_idf", {}),
            "sources": shared["sources"],
            # Pages found but not read yet, while reading is possible: a page about a name the facts
            # bring up (a bridge) is worth reading before the answer counts as settled.
            "unread_titles": [c["title"] for c in unread if c.get("title")][:50] if crawl else [],
            "unread_urls": [c["url"] for c in unread if not c.get("title")][:50] if crawl else None,  # links
            "visited_urls": shared["visited_urls"],
            "step": pending.step,
            "deadline": self.rt.deadline,
        }

    def exec(self, ctx):
        if not ctx["items"]:
            data = {
                "extracted_info": [],
                "assessment": "The last step returned nothing to analyze.",
                "confidence_score": ctx["confidence"],
                "suggestions_for_next_step": [],
                "new_potential_urls": [],
                "inconsistencies_found": "",
            }
            return EngineResult(data, "none")
        return self.rt.engine.analyze(ctx)

    def post(self, shared, ctx, result):
        analysis = Analysis.from_data(result.data)
        add_usage(shared, result.usage)
        step = ctx["step"]
        if result.fallback:
            shared["llm_fallbacks"].append({"step": step, "phase": "analyzer", "error": result.error})
        known = {f.text for f in shared["extracted_information"] if f.form != "snippet"}
        item_text: dict[int, str] = {}
        for it in ctx["items"]:
            item_text[it.source] = item_text.get(it.source, "") + "\n" + it.text
        for f in analysis.extracted_info:
            if f["fact"] not in known:
                known.add(f["fact"])
                keep_fact_text(shared, f["source"], f["fact"], item_text.get(f["source"], ""))
                extra = {k: f[k] for k in ("qcov", "form", "retrieval", "prior", "follow_up", "sem") if k in f}
                fact = Fact(f["fact"], f["source"], float(f.get("score", 0.5)), step, **extra)
                shared["extracted_information"].append(fact)
        conf = analysis.confidence_score
        shared["confidence_score"] = conf
        add_candidates(shared, ({"url": u} for u in analysis.new_potential_urls))
        record = {**asdict(analysis), "step": step, "engine": result.engine, "fallback": result.fallback}
        shared["analyzer_reports"].append(record)
        shared["pending"] = None
        self.rt.ui.analyzed(conf, len(shared["sources"]), len(shared["extracted_information"]), result.fallback)
        return DECIDE


class HITLOutput(SleuthNode):
    """Writes the report: the engine's answer, plus journey and sources from the shared store."""

    def prep(self, shared):
        reports = shared["analyzer_reports"]
        failed = [h for h in shared["research_history"] if not h.get("ok")]
        why = ""
        if not shared["research_history"]:
            why = "No research step could be taken."
        elif failed and len(failed) == len(shared["research_history"]):
            why = "Every research step failed (see the journey below)."
        return {
            "query": shared["original_query"],
            "facts": shared["extracted_information"],
            "sources": shared["sources"],
            "assessment": reports[-1]["assessment"] if reports else "",
            "confidence": shared["confidence_score"],
            "term_idf": shared.get("term_idf", {}),
            "threshold": self.rt.settings.confidence,
            "feedback": _feedback_texts(shared),
            "excluded_sources": shared.get("excluded_sources", []),
            "stop_reason": shared.get("stop_reason"),
            "why_nothing": why,
            # The report is written even when the time is spent: an LLM gets a short grace, then the
            # offline engine writes it.
            "deadline": None
            if self.rt.deadline is None
            else max(self.rt.deadline, time.monotonic()) + min(REPORT_GRACE_S, 0.25 * self.rt.settings.time_limit),
        }

    def exec(self, ctx):
        from .utils.research.citations import verified_report

        show = self.rt.ui.report_chunk  # streamed with [n] as the report will number them
        stream = StreamedNumbers([s.n for s in ctx["sources"]], show) if self.rt.stream_report else None
        # Written, checked against the sources, and written once more by an LLM whose citations fail.
        return verified_report(lambda c, first: self.rt.engine.report(c, on_chunk=stream if first else None), ctx)

    def post(self, shared, ctx, out):
        from .utils.research.citations import summary
        from .utils.research.report import build_report, numbering

        for result in out.results:
            add_usage(shared, result.usage)
            if result.fallback:
                shared["llm_fallbacks"].append(
                    {"step": shared["iteration_count"], "phase": "report", "error": result.error}
                )
        shared["model"] = self.rt.engine.model or shared.get("model")  # resolved by now
        shared["answer"] = out.answer
        shared["citations"] = summary(out.verification, out.regenerated)
        shared["final_answer"] = build_report(shared, out.answer)
        shared["reports"].append(
            {
                "round": len(shared["feedback_history"]) + 1,
                "answer": out.answer,
                "confidence": shared["confidence_score"],
                "stop_reason": shared.get("stop_reason"),
                "citations": out.verification.counts(),
                **numbering(shared, out.answer),  # the report's [1..k] -> session source numbers
            }
        )
        shared["status"] = "awaiting_feedback"
        self.rt.ui.report(shared["final_answer"])
        return FEEDBACK


class HumanFeedback(SleuthNode):
    """Asks for feedback (interactive), takes scripted feedback (--feedback), or ends (batch).
    Feedback restarts the Decision with it; an empty answer ends the run."""

    def prep(self, shared):
        return {
            "session_id": shared["session_id"],
            "sources": shared["sources"],
            "shown": shown(shared["reports"], len(shared["sources"])),  # (order, listed) of the last report
            "report": shared["final_answer"],
            "query": shared["original_query"],
            "round": len(shared["feedback_history"]) + 1,
        }

    def exec(self, prep):
        if self.rt.feedback is None:
            return None
        text = self.rt.feedback(prep)
        text = " ".join(valid_text(text or "").split())
        if not text or text.lower() in {"done", "/done", "/quit", "quit", "exit"}:
            return None
        s = self.rt.settings
        if s.remember and "kb" in s.tools:  # accepted feedback becomes a `feedback` source in the KB
            try:
                self.rt.tools.kb().add_document(
                    source=f"feedback:{prep['session_id']}:{prep['round']}",
                    title=f"Feedback on: {prep['query'][:80]}",
                    text=text,
                    source_type="feedback",
                    session_id=prep["session_id"],
                )
            except Exception as exc:  # noqa: BLE001 - remembering is a bonus
                self.rt.ui.warn(f"feedback not stored in the knowledge base: {exc}")
        return text

    def post(self, shared, prep, text):
        if not text:
            shared["status"] = "done"
            return DONE
        rejected = rejected_sources(text, prep["shown"][0])  # "ignore [2]": [2] as the last report showed it
        shared["feedback_history"].append(
            {"text": text, "timestamp": now_iso(), "after_iteration": shared["iteration_count"], "rejected": rejected}
        )
        shared["excluded_sources"] = sorted(set(shared.get("excluded_sources", [])) | set(rejected))
        shared["round_start_iteration"] = shared["iteration_count"]
        shared["round_start_cost"] = shared.get("cost_usd") or 0.0
        shared["round_start_tokens"] = shared["token_usage"]["total"]
        shared["stop_reason"], shared["stop_detail"] = None, ""
        shared["status"] = "running"
        self.rt.start_round()  # the feedback round gets its own time budget
        return RESEARCH
