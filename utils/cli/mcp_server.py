"""`sleuth mcp`: Sleuth as an MCP server over stdio, for Claude Desktop, Claude Code, Cursor or any
MCP client, built on the official `mcp` SDK (imported by this command only).

Tools: `research`, `feedback`, `kb_search`, `sessions_list`, `session_show`, and `kb_ingest` when
the server is started with `--allow-ingest FOLDER` (only files under the folders named). The global
options and the environment apply as for the CLI; a tool's arguments override them for its call.
A research run reports progress at every step; a cancelled call stops the run at its next step
and leaves a resumable session. Bad arguments are tool errors; the server goes on serving.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field, ValidationError

from ..errors import SleuthError
from .output import EXIT_OK, EXIT_USAGE, err, safe_text, short

SETTLE_S = 120.0  # at most this long, a session read waits for a cancelled run to save its last step

INSTRUCTIONS = (
    "Sleuth researches a question on the web and in a local knowledge base and answers with a cited "
    "report: every [n] in the answer is a numbered source. Use `research` for a question, `feedback` "
    "to research a session again with a correction, `kb_search` for the user's own documents."
)


def build_parser() -> argparse.ArgumentParser:
    from ..config import add_global_args
    from .args import Parser, invoked_as

    p = Parser(
        prog=f"{invoked_as()} mcp",
        description="Serve Sleuth to MCP clients over stdio (research, feedback, kb_search, sessions_list, "
        "session_show; kb_ingest with --allow-ingest). The global options set each call's defaults.",
    )
    p.add_argument(
        "--allow-ingest",
        action="append",
        default=[],
        metavar="FOLDER",
        help="offer kb_ingest, for files under this folder only (repeatable)",
    )
    add_global_args(p)
    return p


def main(argv: list[str], run_flow, commands=None, version: str = "") -> int:
    from ..api import load
    from ..errors import UsageError

    args = build_parser().parse_args(argv)
    base = {k: v for k, v in vars(args).items() if k != "allow_ingest"}
    try:
        settings = load(base=base)  # the flags are checked once, before serving
    except UsageError as exc:
        err(str(exc))
        return EXIT_USAGE
    folders = []
    for name in args.allow_ingest:
        folder = Path(name).expanduser().resolve()
        if not folder.is_dir():
            err(f"--allow-ingest {name}: no such folder; name a folder that exists")
            return EXIT_USAGE
        folders.append(folder)
    from .mcp_stdio import serve

    tty = sys.stdin.isatty()
    if tty:  # typed at a terminal: say what this is, since it reads nothing a person types
        from .args import invoked_as

        err(
            f"mcp: Sleuth {version or ''} is an MCP server, waiting for an MCP client on stdin/stdout; "
            f"nothing to type here. Let a client start it, e.g. `claude mcp add sleuth -- {invoked_as()} mcp` "
            "(README: MCP server). Ctrl-C ends it."
        )
    server = build_server(base, settings, run_flow, folders, version)
    if threading.current_thread() is threading.main_thread():
        # Python's own Ctrl-C handler, which asyncio's runner replaces with one that cancels the server
        # cleanly (main.py's, raising wherever the loop happens to be, makes the SDK log a traceback)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    anyio.run(serve, server._lowlevel_server, tty)  # the SDK's own run_stdio_async does the same
    return EXIT_OK


def _tool_error(exc: SleuthError) -> ToolError:
    return ToolError(safe_text(str(exc)))


def bad_arguments(tool: str, exc: ValidationError) -> str:
    """One line for arguments of the wrong type: each argument, what it takes, what it got."""
    parts = []
    for e in exc.errors():
        name = ".".join(str(p) for p in e.get("loc", ())) or "arguments"
        if e.get("type") == "missing":
            parts.append(f"{name} is required")
            continue
        got = short(json.dumps(e.get("input"), ensure_ascii=False, default=str), 40)
        parts.append(f"{name}: {e.get('msg', 'invalid value').lower()} (got {got})")
    return safe_text(f"{tool}: bad argument: " + "; ".join(parts))


class SleuthServer(MCPServer):
    """The SDK's server, where every failed call is a one-line tool error: arguments of the wrong
    type name the argument and what it takes (not pydantic's dump); an unexpected failure names
    its cause, also as one line on stderr (not a traceback)."""

    async def call_tool(self, name, arguments, context=None):
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            cause = exc.__cause__ or exc
            line = short(f"{name} failed: {type(cause).__name__}: {cause}", 300)
            err(f"mcp: {line}")
            raise ToolError(line) from None
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(bad_arguments(name, exc.__cause__)) from None
            raise


def report_result(report) -> CallToolResult:
    """A report as the tool result: the Markdown as text, the fields as structured content."""
    data = {
        "answer": report.answer,
        "confidence": report.confidence,
        "stop_reason": report.stop_reason,
        "session_id": report.session_id,
        "sources": [
            {"n": s.n, "title": s.title, "url": s.url, "cited": s.cited, "quote": s.quote} for s in report.sources
        ],
        "citations": report.citations,
    }
    text = report.markdown or f"(session {report.session_id} has no report yet)"
    return CallToolResult(content=[TextContent(type="text", text=safe_text(text))], structured_content=data)


def build_server(base: dict, settings, run_flow, folders: list[Path], version: str = "") -> MCPServer:
    from .. import api
    from ..runtime import Tools

    clients = Tools(settings)  # caches, rate limits and the knowledge base, shared by every call
    kb = api.KnowledgeBase(clients=clients)
    settling: list[threading.Event] = []  # runs cancelled by a client, still finishing their step
    server = SleuthServer("sleuth", instructions=INSTRUCTIONS, version=version, log_level="WARNING")

    def call_settings(**overrides):
        try:
            return api.load(base=base, **overrides)
        except SleuthError as exc:
            raise _tool_error(exc) from exc

    async def settle() -> None:
        waiting = [e for e in settling if not e.is_set()]
        if waiting:
            await anyio.to_thread.run_sync(lambda: [e.wait(SETTLE_S) for e in waiting])

    async def in_thread(ctx: Context, work):
        """Run `work(progress, cancel)` on a worker thread; progress becomes MCP notifications; a
        cancelled call sets `cancel`, so the run stops at its next step and saves its session."""
        cancel, finished = threading.Event(), threading.Event()

        def progress(value: float, total: float, message: str) -> None:
            try:
                anyio.from_thread.run(ctx.report_progress, value, total, safe_text(message))
            except Exception:  # noqa: BLE001 - a client that stopped listening does not stop the research
                pass

        def run():
            try:
                return work(progress, cancel)
            finally:
                finished.set()

        try:
            return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            cancel.set()
            settling.append(finished)
            raise
        except SleuthError as exc:
            raise _tool_error(exc) from exc

    @server.tool()
    async def research(
        question: Annotated[str, Field(description="the question to research")],
        ctx: Context,
        tools: Annotated[
            list[str] | None, Field(description="any of duckduckgo, google, crawl, kb, wiki (default: the server's)")
        ] = None,
        max_iterations: Annotated[int | None, Field(description="research step budget (default 8)")] = None,
        confidence: Annotated[float | None, Field(description="stop at this confidence, in (0, 1] (0.7)")] = None,
        time_limit: Annotated[float | None, Field(description="wall-clock budget in seconds (300; 0: none)")] = None,
    ) -> CallToolResult:
        """Research a question on the web and in the knowledge base; returns a cited Markdown report,
        with answer, confidence, stop_reason, session_id, sources and citations as structured content.
        Reports progress at every step; cancelling stops at the next step (resume with `feedback`)."""
        s = call_settings(tools=tools, max_iterations=max_iterations, confidence=confidence, time_limit=time_limit)
        report = await in_thread(
            ctx,
            lambda progress, cancel: api.research(
                question, s, run_flow=run_flow, progress=progress, cancel=cancel, clients=clients
            ),
        )
        return report_result(report)

    @server.tool()
    async def feedback(
        session_id: Annotated[str, Field(description="the session to research again (from research)")],
        feedback: Annotated[str, Field(description="what to change, e.g. 'the second source is outdated'")],
        ctx: Context,
    ) -> CallToolResult:
        """Research a session again with feedback (a rejected source is dropped from the new report).
        An interrupted (cancelled) session first goes on researching; empty feedback only does that."""
        s = call_settings()
        await settle()
        report = await in_thread(
            ctx,
            lambda progress, cancel: api.resume(
                session_id, s, feedback, run_flow=run_flow, progress=progress, cancel=cancel, clients=clients
            ),
        )
        return report_result(report)

    @server.tool()
    async def kb_search(
        query: Annotated[str, Field(description="what to look for in the knowledge base")],
        k: Annotated[int, Field(description="how many passages (default 10)")] = 10,
    ) -> CallToolResult:
        """Search the knowledge base (the user's ingested files and pages Sleuth has read): the best
        passages with source, title and score."""
        try:
            hits = await anyio.to_thread.run_sync(lambda: kb.search(query, k=k))
        except SleuthError as exc:
            raise _tool_error(exc) from exc
        lines = [
            f"{h.rank}. [{h.score:.3f}] {h.title or '(untitled)'} -- {h.source}\n   {short(h.text, 400)}" for h in hits
        ]
        text = "\n".join(lines) or "no hits"
        return CallToolResult(
            content=[TextContent(type="text", text=safe_text(text))],
            structured_content={"query": query, "hits": [h.to_dict() for h in hits]},
        )

    @server.tool()
    async def sessions_list(
        limit: Annotated[int, Field(description="at most this many, newest first (default 20)")] = 20,
    ) -> CallToolResult:
        """The saved research sessions, newest first: id, time, question, stop reason, confidence, status."""
        await settle()
        rows = api.sessions(settings, limit=max(limit, 1))
        lines = [
            f"{r['session_id']}  {(r.get('created_at') or '')[:19]}  {r.get('stop_reason') or r.get('status')}  "
            f"{r.get('confidence_score') or 0.0:.2f}  {short(r.get('original_query') or '', 80)}"
            for r in rows
        ]
        text = "\n".join(lines) or "(no sessions)"
        return CallToolResult(
            content=[TextContent(type="text", text=safe_text(text))], structured_content={"sessions": rows}
        )

    @server.tool()
    async def session_show(
        session_id: Annotated[str, Field(description="a session id (from sessions_list or research)")],
    ) -> CallToolResult:
        """One saved session: its report as Markdown, with the report's fields, status and feedback."""
        await settle()
        try:
            shared = api.session(settings, session_id)
        except SleuthError as exc:
            raise _tool_error(exc) from exc
        result = report_result(api.Report.from_shared(shared))
        result.structured_content.update(
            status=shared.get("status"),
            question=shared.get("original_query"),
            feedback=[f.get("text") for f in shared.get("feedback_history", [])],
        )
        return result

    if folders:

        @server.tool()
        async def kb_ingest(
            paths: Annotated[list[str], Field(description="files or folders under the allowed folders")],
        ) -> CallToolResult:
            """Add files and folders to the knowledge base (.txt .md .html .pdf, folders recursively);
            only paths under the folders the server was started with (--allow-ingest)."""
            resolved = []
            for p in paths:
                if "\x00" in p:
                    raise ToolError(safe_text(f"{p!r} holds a NUL byte, which no path can; name a file or folder"))
                path = Path(p).expanduser().resolve()
                if not any(path.is_relative_to(f) for f in folders):
                    allowed = ", ".join(str(f) for f in folders)
                    raise ToolError(safe_text(f"{p} is outside the folders this server may ingest ({allowed})"))
                resolved.append(path)
            try:
                rep = await anyio.to_thread.run_sync(lambda: kb.ingest(resolved))
            except SleuthError as exc:
                raise _tool_error(exc) from exc
            data = {
                "added": rep.files_added,
                "replaced": rep.files_replaced,
                "unchanged": rep.files_unchanged,
                "chunks_added": rep.chunks_added,
                "errors": [{"path": path, "reason": why} for path, why in rep.errors],
                "skipped": len(rep.skipped),
            }
            text = (
                f"{rep.files_added} added, {rep.files_replaced} replaced, {rep.files_unchanged} unchanged, "
                f"{len(rep.errors)} failed; {rep.chunks_added} chunks added"
            )
            text += "".join(f"\nerror: {path}: {why}" for path, why in rep.errors)
            return CallToolResult(content=[TextContent(type="text", text=safe_text(text))], structured_content=data)

    return server
