"""A small local web on 127.0.0.1 for end-to-end research runs: a folder of wiki pages served as
static files, plus a fake DuckDuckGo HTML endpoint that ranks those pages (TF-IDF over title and
text) in the markup html.duckduckgo.com returns. The folder is tests/fixtures/web (pages written
for the tests) or ../shared/eval/hotpotqa-dev100 (the HotpotQA pages, for benches and quality
gates). Used by tests and by bench/research.py."""

from __future__ import annotations

import html
import json
import math
import re
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from sleuth.utils.text import content_terms, stem


def read_pages(root: Path) -> list[dict]:
    """`{"title", "url", "path", "text"}` per page: from pages.jsonl when the folder has one, else
    from each wiki/*.html page's <h1> and <article>."""
    listing = root / "pages.jsonl"
    if listing.is_file():
        return [json.loads(line) for line in listing.read_text(encoding="utf-8").splitlines() if line]
    pages = []
    for f in sorted((root / "wiki").glob("*.html")):
        doc = f.read_text(encoding="utf-8")
        title = re.search(r"<h1>(.*?)</h1>", doc, re.S).group(1)
        body = re.search(r"<article>(.*?)</article>", doc, re.S).group(1).replace(f"<h1>{title}</h1>", "")
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", body)).split())
        path = f"wiki/{f.name}"
        pages.append({"title": html.unescape(title), "url": "/" + path, "path": path, "text": text})
    return pages


class PageIndex:
    def __init__(self, pages: list[dict]):
        self.pages = pages
        self.tfs = [
            Counter(stem(t) for t in content_terms(p["title"] + " " + p["title"] + " " + p["text"])) for p in pages
        ]
        df = Counter(t for tf in self.tfs for t in tf)
        n = len(pages)
        self.idf = {t: math.log(1 + n / c) for t, c in df.items()}

    def search(self, query: str, k: int = 10) -> list[dict]:
        q = {stem(t) for t in content_terms(query)}
        scored = []
        for i, tf in enumerate(self.tfs):
            s = sum((1 + math.log(tf[t])) * self.idf.get(t, 0) for t in q if t in tf)
            if s > 0:
                scored.append((-s, i))
        return [self.pages[i] for _, i in sorted(scored)[:k]]


class LocalWeb:
    def __init__(self, root: Path, page_delay: float = 0.0):
        self.root = Path(root)
        self.page_delay = page_delay  # server-side latency per page, to catch a run mid-way
        self.pages = read_pages(self.root)
        self.index = PageIndex(self.pages)
        self.searches: list[str] = []
        self.before_page = None  # called before each page is served (a test may hold the page there)
        self._stop = threading.Event()
        web = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, status, body: bytes, ctype="text/html; charset=utf-8"):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                path = urlsplit(self.path).path
                if path == "/robots.txt":
                    return self._send(200, b"User-agent: *\nAllow: /\n", "text/plain")
                f = (web.root / path.lstrip("/")).resolve()
                if web.root.resolve() in f.parents and f.is_file():
                    if web.before_page:
                        web.before_page()
                    if web.page_delay:
                        web._stop.wait(web.page_delay)
                    return self._send(200, f.read_bytes())
                return self._send(404, b"not found", "text/plain")

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                form = parse_qs(self.rfile.read(length).decode())
                query = (form.get("q") or [""])[0]
                web.searches.append(query)
                items = []
                for p in web.index.search(query):
                    url = web.url + p["url"]
                    items.append(
                        f'<div class="result results_links"><div class="links_main result__body">'
                        f'<h2 class="result__title"><a class="result__a" href="{html.escape(url)}">'
                        f"{html.escape(p['title'])}</a></h2>"
                        f'<a class="result__snippet" href="{html.escape(url)}">{html.escape(p["text"][:200])}</a>'
                        f"</div></div>"
                    )
                body = "<html><body>" + "".join(items) + "</body></html>"
                return self._send(200, body.encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.search_url = self.url + "/html/"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()
