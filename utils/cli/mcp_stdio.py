"""The stdio transport under `sleuth mcp`: the SDK's `stdio_server`, fed by a reader of its own.

The reader waits on stdin in the event loop (no thread blocked in a read), so one Ctrl-C ends the
server even at a terminal. A request the SDK cannot parse as a JSON-RPC message — `params` that is
not an object, say — would be dropped by the SDK, leaving its client waiting on that id forever;
here it gets a JSON-RPC error with that id. At a terminal, a typed line that is not JSON gets a hint
on stderr: nothing to type here, a client starts the server.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, ErrorData, JSONRPCError, jsonrpc_message_adapter

from .output import err

READ_SIZE = 65536


def refusal(line: str) -> JSONRPCError | None:
    """The error reply to a request the SDK would drop unanswered (None when it reads the line, or
    when the line names no request id to answer)."""
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except Exception:  # noqa: BLE001 - any failure: the SDK would drop the line
        pass
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    rid = obj.get("id") if isinstance(obj, dict) else None
    if not isinstance(obj, dict) or "method" not in obj or isinstance(rid, bool) or not isinstance(rid, (int, str)):
        return None
    params = obj.get("params")
    if params is not None and not isinstance(params, dict):
        kind = type(params).__name__.replace("list", "an array").replace("str", "a string")
        error = ErrorData(code=INVALID_PARAMS, message=f"params must be an object, not {kind}")
    else:
        error = ErrorData(code=INVALID_REQUEST, message="not a valid JSON-RPC 2.0 request")
    return JSONRPCError(jsonrpc="2.0", id=rid, error=error)


class Requests:
    """The lines a client writes to the server's stdin (file descriptor `fd`), for `stdio_server`."""

    def __init__(self, fd: int, tty: bool):
        self.fd, self.tty = fd, tty
        self.replies: Any = None  # the transport's write stream, set once the transport is up
        self.ready = anyio.Event()

    def __aiter__(self):
        return self._lines()

    async def _chunks(self):
        regular = stat.S_ISREG(os.fstat(self.fd).st_mode)  # a file on disk: reads never wait
        while True:
            if regular:
                chunk = await anyio.to_thread.run_sync(os.read, self.fd, READ_SIZE)
            else:
                await anyio.wait_readable(self.fd)
                chunk = os.read(self.fd, READ_SIZE)
            if not chunk:
                return
            yield chunk

    async def _raw_lines(self):
        pending = b""
        async for chunk in self._chunks():
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                yield line.decode("utf-8", errors="replace")
        if pending.strip():
            yield pending.decode("utf-8", errors="replace")

    async def _lines(self):
        async for line in self._raw_lines():
            if not line.strip():
                continue
            reply = refusal(line)
            if reply is not None:
                await self.ready.wait()
                await self.replies.send(SessionMessage(reply))
                continue
            if self.tty and not line.lstrip().startswith(("{", "[")):
                err("mcp: that is not a JSON-RPC message; this server talks to an MCP client, Ctrl-C ends it")
            yield line


async def serve(lowlevel, tty: bool) -> None:
    """Serve `lowlevel` (the SDK server under MCPServer) over stdin and stdout until stdin ends."""
    fd = os.dup(0)  # the wire; fd 0 becomes the null device, so nothing else reads the client's lines
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    requests = Requests(fd, tty)
    try:
        async with stdio_server(stdin=requests) as (read_stream, write_stream):  # type: ignore[arg-type]
            requests.replies = write_stream
            requests.ready.set()
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
    finally:
        os.dup2(fd, 0)
        os.close(fd)
