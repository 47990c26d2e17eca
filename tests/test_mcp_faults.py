"""`sleuth mcp` against clients that misbehave (raw JSON-RPC over stdio, and the SDK's own client)
and typed at a terminal: every request gets an answer, every bad argument one line, no traceback."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading

import anyio
import pexpect
from conftest import ROOT, assert_no_network, cli_env
from mcp import Client, StdioServerParameters

WAIT_S = 60  # a cap on waits for a reply; each ends as soon as the reply arrives


class RawServer:
    """`sleuth mcp` in a subprocess, spoken to line by line in raw JSON-RPC."""

    def __init__(self, tmp_path, *args: str):
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "main.py"), "mcp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(tmp_path),
            cwd=tmp_path,
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send(self, obj) -> None:
        self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, rid):
        """The reply to request `rid` (notifications and other replies are passed over)."""
        while True:
            msg = self.lines.get(timeout=WAIT_S)
            if msg.get("id") == rid:
                return msg

    def close(self) -> str:
        self.proc.stdin.close()
        self.proc.wait(timeout=WAIT_S)
        return self.proc.stderr.read().decode()


def test_a_request_whose_params_is_not_an_object_gets_an_error_reply(tmp_path):
    srv = RawServer(tmp_path, "--tools", "kb")
    try:
        srv.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        init = srv.reply(1)
        assert init["result"]["serverInfo"]["name"] == "sleuth"
        srv.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for rid, params in ((2, ["kb_search", {"query": "x"}]), (3, "kb_search"), (4, 7)):
            srv.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
            answer = srv.reply(rid)
            assert answer["error"]["code"] == -32602 and "params must be an object" in answer["error"]["message"]
        srv.send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})  # and it goes on serving
        assert "kb_search" in [t["name"] for t in srv.reply(5)["result"]["tools"]]
        assert init["result"]["serverInfo"]["version"]  # the server says which Sleuth it is
    finally:
        stderr = srv.close()
    assert srv.proc.returncode == 0 and "Traceback" not in stderr, stderr
    assert_no_network(tmp_path)


def test_wrong_argument_types_and_a_nul_path_are_one_line_tool_errors(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Kites\n\nA kite is a tethered craft that flies on the wind.\n")
    errlog = tmp_path / "server.err"
    params = StdioServerParameters(  # the server's stderr goes to errlog
        command="sh",
        args=["-c", f'exec "$0" "$@" 2>"{errlog}"', sys.executable, str(ROOT / "main.py"), "mcp", "--tools", "kb"]
        + ["--allow-ingest", str(notes)],
        env=cli_env(tmp_path),
        cwd=str(tmp_path),
    )
    calls = [
        ("research", {"question": "What is a kite?", "max_iterations": "many"}, "max_iterations"),
        ("kb_search", {"query": "kite", "k": "ten"}, "k"),
        ("kb_search", {"query": None}, "query"),
        ("session_show", {"session_id": 123}, "session_id"),
        ("kb_ingest", {"paths": [str(notes / "a\x00.md")]}, "NUL"),
    ]
    texts = {}

    async def scenario():
        async with Client(params) as client:
            for tool, args, _ in calls:
                result = await client.call_tool(tool, args)
                assert result.is_error, (tool, args)
                texts[(tool, json.dumps(args))] = result.content[0].text
            ok = await client.call_tool("kb_ingest", {"paths": [str(notes)]})  # the server goes on
            assert not ok.is_error and ok.structured_content["added"] == 1

    anyio.run(scenario)
    for tool, args, names in calls:
        text = texts[(tool, json.dumps(args))]
        assert "\n" not in text and names in text, text
        assert "validation error" not in text and "pydantic" not in text, text
    assert "could not be converted" not in texts[("kb_search", json.dumps(calls[1][1]))]
    stderr = errlog.read_text()
    assert "Traceback" not in stderr, stderr
    assert_no_network(tmp_path)


def test_mcp_at_a_terminal_says_what_it_is_and_one_ctrl_c_ends_it(tmp_path):
    child = pexpect.spawn(
        sys.executable,
        [str(ROOT / "main.py"), "mcp"],
        env=cli_env(tmp_path),
        cwd=str(tmp_path),
        timeout=WAIT_S,
        use_poll=True,
    )
    try:
        child.expect("MCP server")
        child.expect("Ctrl-C")
        child.sendline("hello?")
        child.expect("not a JSON-RPC message")
        child.sendintr()  # one Ctrl-C
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 130, (child.exitstatus, child.signalstatus)
        assert b"Traceback" not in (child.before or b"")
    finally:
        if child.isalive():
            child.kill(9)
