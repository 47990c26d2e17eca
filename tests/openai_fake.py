"""A fake OpenAI-compatible chat server on 127.0.0.1, for driving the real `openai` client in tests.

A responder decides every answer: responder(body) -> Reply (or a plain string: HTTP 200 with that
text). Every request is kept in `requests`, and every usage block sent in `usages`."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    text: str = ""
    status: int = 200
    headers: dict = field(default_factory=dict)
    hang: bool = False  # never answer (until the server is closed): the client's timeout must fire
    prompt_tokens: int | None = None  # default: a count derived from the prompt
    usage: bool = True  # send a usage block


def prompt_of(body: dict) -> str:
    return "\n".join(str(m.get("content", "")) for m in body.get("messages", []))


class FakeOpenAI:
    def __init__(self, responder, models=("fake-model",)):
        self.responder = responder
        self.requests: list[dict] = []
        self.usages: list[dict] = []
        self.release = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _send(self, status: int, payload: bytes, ctype="application/json", headers=None):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    data = {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "me"} for m in models]}
                    self._send(200, json.dumps(data).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
                reply = fake.responder(body)
                if isinstance(reply, str):
                    reply = Reply(reply)
                if reply.hang:
                    fake.release.wait(60)
                    return
                if reply.status != 200:
                    err = {"error": {"message": reply.text or "error", "type": "server_error", "code": reply.status}}
                    self._send(reply.status, json.dumps(err).encode(), headers=reply.headers)
                    return
                prompt_tokens = reply.prompt_tokens
                if prompt_tokens is None:
                    prompt_tokens = max(1, len(prompt_of(body).split()))
                usage = {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": max(1, len(reply.text.split())),
                    "total_tokens": prompt_tokens + max(1, len(reply.text.split())),
                }
                base = {"id": "chatcmpl-1", "created": 1, "model": body.get("model", "")}
                if body.get("stream"):
                    include = (body.get("stream_options") or {}).get("include_usage") and reply.usage
                    pieces = [reply.text[i : i + 7] for i in range(0, len(reply.text), 7)] or [""]
                    events = []
                    for i, p in enumerate(pieces):
                        delta = {"content": p, **({"role": "assistant"} if i == 0 else {})}
                        choice = {"index": 0, "delta": delta, "finish_reason": None}
                        events.append({**base, "object": "chat.completion.chunk", "choices": [choice]})
                    done = {"index": 0, "delta": {}, "finish_reason": "stop"}
                    events.append({**base, "object": "chat.completion.chunk", "choices": [done]})
                    if include:
                        events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
                        fake.usages.append(usage)
                    data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
                    self._send(200, data, ctype="text/event-stream")
                    return
                msg = {"role": "assistant", "content": reply.text}
                out = {
                    **base,
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
                }
                if reply.usage:
                    out["usage"] = usage
                    fake.usages.append(usage)
                self._send(200, json.dumps(out).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def kinds(self) -> list[str]:
        """Which call each request was: decide / analyze / report (from the prompt's opening)."""
        return [kind_of(r["body"]) for r in self.requests]

    def total_usage(self) -> dict:
        return {
            "prompt": sum(u["prompt_tokens"] for u in self.usages),
            "output": sum(u["completion_tokens"] for u in self.usages),
        }


def kind_of(body: dict) -> str:
    p = prompt_of(body)
    if p.startswith("You are the central Decision Node"):
        return "decide"
    if p.startswith("You are the Analyzer Node"):
        return "analyze"
    return "report"


def response_format(body: dict) -> str:
    fmt = body.get("response_format")
    if not fmt:
        return "text"
    if fmt.get("type") == "json_object" and "schema" in fmt:
        return "json_object+schema"
    return fmt.get("type", "?")


class RecordingProxy:
    """Relays every request to a real OpenAI-compatible server and keeps what went through: the
    request bodies, the HTTP statuses and the `usage` blocks the server sent. Lets a test compare
    what the CLI reports with what the server counted."""

    def __init__(self, target: str):
        import urllib.error
        import urllib.request

        self.target = target.rstrip("/")
        self.exchanges: list[dict] = []
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _relay(self, method: str):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else None
                url = (
                    proxy.target + self.path[len("/v1") :] if self.path.startswith("/v1") else proxy.target + self.path
                )
                req = urllib.request.Request(url, data=raw, method=method)
                req.add_header("Content-Type", self.headers.get("Content-Type", "application/json"))
                try:
                    with urllib.request.urlopen(req, timeout=600) as resp:
                        status, data, ctype = resp.status, resp.read(), resp.headers.get("Content-Type", "")
                except urllib.error.HTTPError as exc:
                    status, data, ctype = exc.code, exc.read(), exc.headers.get("Content-Type", "")
                rec = {"path": self.path, "status": status, "body": json.loads(raw) if raw else None, "usage": None}
                if status == 200 and raw and "json" in ctype:
                    rec["usage"] = json.loads(data).get("usage")
                with proxy.lock:
                    proxy.exchanges.append(rec)
                self.send_response(status)
                self.send_header("Content-Type", ctype or "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._relay("GET")

            def do_POST(self):
                self._relay("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def chats(self) -> list[dict]:
        return [e for e in self.exchanges if e["path"].endswith("/chat/completions")]
