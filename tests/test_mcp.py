"""`sleuth mcp` as an MCP client sees it: the SDK's own stdio client against a real server process
(under the network guard) lists the tools, calls each, receives progress, gets tool errors for bad
arguments while the server goes on, and a cancelled research leaves a session that resumes."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import anyio.to_thread
import pytest
from conftest import ROOT, assert_no_network, cli_env
from mcp import Client, StdioServerParameters

QUESTION = "When was the Beacon of Tarvel built?"
NOTES = {
    "skerrow.md": "# Skerrow\n\nThe Beacon of Tarvel was built between 312 and 298 BC on the island of "
    "Skerrow. It was one of the Five Marvels of the Old Coast.\n",
    "orsk.md": "# Giant\n\nThe Giant of Orsk was a statue of the sea god Varro, erected in 312 BC.\n",
}
WAIT_S = 60  # a cap on waits for what a step sends; they end as soon as it arrives


@pytest.fixture
def notes(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in NOTES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def server(tmp_path, *args: str, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[str(ROOT / "main.py"), "mcp", *args],
        env=cli_env(tmp_path, **env),
        cwd=str(tmp_path),
    )


def test_tools_progress_errors_and_ingest_limits(tmp_path, notes):
    async def scenario():
        async with Client(server(tmp_path, "--tools", "kb")) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == ["research", "feedback", "kb_search", "sessions_list", "session_show"]
            refused = await client.call_tool("kb_search", {"query": "Skerrow", "k": 0})
            assert refused.is_error and "k must be at least 1" in refused.content[0].text

        async with Client(server(tmp_path, "--tools", "kb", "--allow-ingest", str(notes))) as client:
            assert "kb_ingest" in [t.name for t in (await client.list_tools()).tools]
            outside = await client.call_tool("kb_ingest", {"paths": [str(ROOT / "README.md")]})
            assert outside.is_error and "outside the folders" in outside.content[0].text
            ingested = await client.call_tool("kb_ingest", {"paths": [str(notes)]})
            assert not ingested.is_error and ingested.structured_content["added"] == 2

            progress: list[tuple[float, float | None, str | None]] = []
            got_progress = anyio.Event()

            async def on_progress(value, total, message):
                progress.append((value, total, message))
                got_progress.set()

            result = await client.call_tool("research", {"question": QUESTION}, progress_callback=on_progress)
            assert not result.is_error
            data = result.structured_content
            assert "312" in data["answer"] and data["stop_reason"] and 0 < data["confidence"] <= 1
            cited = [s for s in data["sources"] if s["cited"]]
            assert cited[0]["url"].endswith("skerrow.md") and "Skerrow" in cited[0]["quote"]
            assert data["citations"]["total"] >= 1
            assert result.content[0].text.startswith("# ") and "## " in result.content[0].text
            with anyio.fail_after(WAIT_S):
                await got_progress.wait()
            assert progress[0][2].startswith("researching:")
            session_id = data["session_id"]

            hits = await client.call_tool("kb_search", {"query": "Giant Varro", "k": 2})
            assert hits.structured_content["hits"][0]["source"].endswith("orsk.md")

            bad = await client.call_tool("research", {"question": QUESTION, "max_iterations": 0})
            assert bad.is_error and "max-iterations must be at least 1" in bad.content[0].text
            wrong_type = await client.call_tool("kb_search", {"query": "Skerrow", "k": "many"})
            assert wrong_type.is_error
            unknown = await client.call_tool("session_show", {"session_id": "20000101-000000-abcdef"})
            assert unknown.is_error and "no session" in unknown.content[0].text

            listed = await client.call_tool("sessions_list", {})  # the server still answers
            assert [r["session_id"] for r in listed.structured_content["sessions"]] == [session_id]

            again = await client.call_tool("feedback", {"session_id": session_id, "feedback": "the Giant too"})
            assert not again.is_error and again.structured_content["session_id"] == session_id
            shown = await client.call_tool("session_show", {"session_id": session_id})
            assert shown.structured_content["feedback"] == ["the Giant too"]
            assert shown.structured_content["status"] == "done"
            assert shown.content[0].text == again.content[0].text

    anyio.run(scenario)
    assert_no_network(tmp_path)


class BlockingSearch:
    """A search endpoint on 127.0.0.1 that holds each request until released (then finds nothing):
    a research step that is in flight for as long as the test needs."""

    def __init__(self):
        self.arrived, self.release = threading.Event(), threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _answer(self):
                outer.arrived.set()
                outer.release.wait(WAIT_S)
                body = b"<html><body>No results.</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/html/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_cancelled_research_leaves_a_session_that_resumes(tmp_path):
    search = BlockingSearch()
    params = server(tmp_path, "--tools", "duckduckgo", "--max-iterations", "2", SLEUTH_DDG_URL=search.url)
    outcome: list[str] = []

    async def scenario():
        async with Client(params) as client:
            started = anyio.Event()
            messages: list[str] = []

            async def on_progress(value, total, message):
                messages.append(message or "")
                if (message or "").startswith("step 1/"):
                    started.set()

            async def call():
                await client.call_tool("research", {"question": QUESTION}, progress_callback=on_progress)
                outcome.append("answered")

            with anyio.fail_after(WAIT_S):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call)
                    await started.wait()
                    await anyio.to_thread.run_sync(search.arrived.wait)  # the search step is in flight
                    tg.cancel_scope.cancel()  # the client cancels the call
            search.release.set()

            listed = await client.call_tool("sessions_list", {})
            (row,) = listed.structured_content["sessions"]
            assert row["status"] == "interrupted" and row["session_id"] in messages[0]
            resumed = await client.call_tool("feedback", {"session_id": row["session_id"], "feedback": ""})
            assert not resumed.is_error, resumed.content[0].text
            assert resumed.structured_content["session_id"] == row["session_id"]
            assert resumed.structured_content["stop_reason"]
            shown = await client.call_tool("session_show", {"session_id": row["session_id"]})
            assert shown.structured_content["status"] == "done"

    try:
        anyio.run(scenario)
    finally:
        search.close()
    assert outcome == []  # a cancelled call is never answered
    assert_no_network(tmp_path)


def test_a_bad_flag_is_one_line_and_status_2(cli, tmp_path):
    proc = cli("mcp", "--allow-ingest", str(tmp_path / "missing"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"sleuth: --allow-ingest {tmp_path / 'missing'}: no such folder; name a folder that exists"
    ]
    proc = cli("mcp", "--confidence", "3")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "--confidence" in proc.stderr
