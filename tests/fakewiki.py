"""A fake MediaWiki `api.php` on 127.0.0.1 that speaks the Action API's JSON (format version 2):
`list=search`, `prop=extracts|info` with TextExtracts' one-extract-per-request `continue`, missing
pages, `error` objects, `maxlag` errors with Retry-After, and `action=parse` for a wiki without
TextExtracts. It records every request (parameters, User-Agent, whether the host lock was held)."""

from __future__ import annotations

import html
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, urlsplit


class FakeWiki:
    def __init__(self, pages: dict[str, str], *, extracts: bool = True, lock_probe=None):
        self.pages = pages  # title -> plain text (paragraphs separated by blank lines)
        self.extracts = extracts  # False: a wiki without the TextExtracts extension
        self.maxlag_errors = 0  # answer this many requests with a maxlag error first
        self.requests: list[dict] = []
        self.lock_probe = lock_probe  # () -> bool: is the client's host lock held during the request?
        wiki = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                split = urlsplit(self.path)
                params = {k: v[-1] for k, v in parse_qs(split.query).items()}
                wiki.requests.append(
                    {
                        "path": split.path,
                        "params": params,
                        "user_agent": self.headers.get("User-Agent", ""),
                        "locked": wiki.lock_probe() if wiki.lock_probe else None,
                    }
                )
                status, headers, body = wiki.answer(params)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.api_url = self.base + "/w/api.php"

    def __enter__(self) -> FakeWiki:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def url_of(self, title: str) -> str:
        return f"{self.base}/wiki/{quote(title.replace(' ', '_'))}"

    # -- the API ---------------------------------------------------------------------------
    def answer(self, p: dict) -> tuple[int, dict, dict]:
        if self.maxlag_errors > 0 and p.get("maxlag"):
            self.maxlag_errors -= 1
            error = {"code": "maxlag", "info": "Waiting for 10.0.0.1: 7 seconds lagged.", "host": "10.0.0.1", "lag": 7}
            return 200, {"Retry-After": "0", "X-Database-Lag": "7"}, {"error": error}
        if p.get("format") != "json":
            return 200, {}, {"error": {"code": "badformat", "info": "only JSON here"}}
        action = p.get("action")
        if action == "query" and p.get("list") == "search":
            return self._search(p)
        if action == "query" and "titles" in p:
            return 200, {}, self._query_pages(p)
        if action == "parse":
            return self._parse(p)
        return 200, {}, {"error": {"code": "badvalue", "info": f'Unrecognized value for parameter "action": {action}.'}}

    def _search(self, p):
        q = p.get("srsearch", "").strip()
        if not q:
            return 200, {}, {"error": {"code": "missingparam", "info": 'The "srsearch" parameter must be set.'}}
        terms = {t.lower() for t in q.split()}
        scored = []
        for title, text in self.pages.items():
            words = {w.strip(".,").lower() for w in (title + " " + text).split()}
            score = len(terms & words)
            if score:
                scored.append((-score, title))
        limit = int(p.get("srlimit", 10))
        hits = [{"ns": 0, "title": t, "pageid": i + 1, "snippet": "…"} for i, (_, t) in enumerate(sorted(scored))]
        body = {"batchcomplete": True, "query": {"searchinfo": {"totalhits": len(hits)}, "search": hits[:limit]}}
        if len(hits) > limit:
            body["continue"] = {"sroffset": limit, "continue": "-||"}
        return 200, {}, body

    def _query_pages(self, p):
        props = p.get("prop", "").split("|")
        titles = p["titles"].split("|")
        pages = []
        for t in titles:
            if t not in self.pages:
                pages.append({"ns": 0, "title": t, "missing": True})
                continue
            page = {"pageid": list(self.pages).index(t) + 1, "ns": 0, "title": t}
            if "info" in props and p.get("inprop") == "url":
                page.update(
                    fullurl=self.url_of(t), canonicalurl=self.url_of(t), editurl=self.url_of(t) + "?action=edit"
                )
            pages.append(page)
        body: dict = {"batchcomplete": True, "query": {"pages": pages}}
        if "extracts" in props and not self.extracts:
            body["warnings"] = {"main": {"warnings": 'Unrecognized value for parameter "prop": extracts.'}}
        elif "extracts" in props:
            # TextExtracts gives one whole-page extract per request; the rest come through `continue`.
            present = [pg for pg in pages if not pg.get("missing")]
            start = int(p.get("excontinue", 0))
            if start < len(present):
                present[start]["extract"] = self.pages[present[start]["title"]]
            if start + 1 < len(present):
                body = {"continue": {"excontinue": start + 1, "continue": "||info"}, "query": {"pages": pages}}
        return body

    def _parse(self, p):
        title = p.get("page", "")
        if title not in self.pages:
            return 200, {}, {"error": {"code": "missingtitle", "info": "The page you specified doesn't exist."}}
        paras = "".join(f"<p>{html.escape(x)}</p>" for x in self.pages[title].split("\n\n"))
        text = f'<div class="mw-content-ltr mw-parser-output" lang="en" dir="ltr">{paras}</div>'
        return 200, {}, {"parse": {"title": title, "pageid": 1, "text": text}}
