"""Real local HTTP servers for the web-tool tests (127.0.0.1, port 0, one thread per request).

``LocalServer(routes)`` serves ``routes[path](req)`` where ``req`` is the request handler; the
route writes its own response (helpers below). Every request is recorded in ``server.hits``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

Route = Callable[[BaseHTTPRequestHandler], None]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format, *args):  # noqa: A002 - silence the default stderr log
        pass

    def _dispatch(self):
        parts = urlsplit(self.path)
        self.query = parts.query
        length = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(length) if length else b""
        owner = self.server.owner
        with owner.lock:
            owner.hits.append((self.command, self.path))
        route = owner.routes.get(parts.path) or owner.routes.get("*")
        try:
            if route is None:
                send(self, 404, b"not found", "text/plain")
            else:
                route(self)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = _dispatch
    do_POST = _dispatch


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: LocalServer

    def handle_error(self, request, client_address):  # client hung up on purpose in some tests
        pass


class LocalServer:
    def __init__(self, routes: dict[str, Route] | None = None, ssl_context=None):
        self.scheme = "https" if ssl_context is not None else "http"
        self.routes: dict[str, Route] = dict(routes or {})
        self.hits: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.owner = self
        if ssl_context is not None:
            self.httpd.socket = ssl_context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> LocalServer:
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def base(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.base + path

    def count(self, path: str) -> int:
        with self.lock:
            return sum(1 for _, p in self.hits if urlsplit(p).path == path)


def send(
    req: BaseHTTPRequestHandler,
    status: int = 200,
    body: bytes | str = b"",
    content_type: str = "text/html",
    headers: dict[str, str] | None = None,
) -> None:
    data = body.encode("utf-8") if isinstance(body, str) else body
    req.send_response(status)
    if content_type:
        req.send_header("Content-Type", content_type)
    req.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        req.send_header(k, v)
    req.end_headers()
    if req.command != "HEAD":
        req.wfile.write(data)


def page(title: str, body: str) -> str:
    return f"<!doctype html><html><head><title>{title}</title></head><body><main>{body}</main></body></html>"


# -- fake search engines -------------------------------------------------------------------


def ddg_html(results: list[tuple[str, str, str]]) -> str:
    """Markup shaped like html.duckduckgo.com's result page: (title, url, snippet) triples."""
    items = []
    for title, url, snippet in results:
        items.append(f"""
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title"><a rel="nofollow" class="result__a" href="{url}">{title}</a></h2>
    <div class="result__extras"><div class="result__extras__url">
      <a class="result__url" href="{url}">{url}</a></div></div>
    <a class="result__snippet" href="{url}">{snippet}</a>
    <div class="clear"></div>
  </div>
</div>""")
    return (
        '<!DOCTYPE html><html><head><title>q at DuckDuckGo</title></head><body><div id="links" '
        f'class="results">{"".join(items)}</div></body></html>'
    )


def cse_json(results: list[tuple[str, str, str]]) -> dict:
    """A Custom Search JSON API response body."""
    return {
        "kind": "customsearch#search",
        "items": [{"kind": "customsearch#result", "title": t, "link": u, "snippet": s} for t, u, s in results],
    }


def cse_error(status: int, reason: str, message: str) -> dict:
    return {
        "error": {
            "code": status,
            "message": message,
            "errors": [{"message": message, "domain": "global", "reason": reason}],
        }
    }


# -- a minimal PDF ---------------------------------------------------------------------------


def make_pdf(lines: list[str], title: str = "") -> bytes:
    """A valid one-page PDF with Helvetica text lines (and optional /Title metadata)."""

    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    ops = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
    for line in lines:
        ops.append(f"({esc(line)}) Tj T*")
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    if title:
        objects.append(b"<< /Title (" + esc(title).encode("latin-1") + b") >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + obj + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R"
    if title:
        trailer += f" /Info {len(objects)} 0 R"
    out += f"trailer\n{trailer} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
