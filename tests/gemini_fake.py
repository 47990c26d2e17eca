"""A fake Gemini API endpoint on 127.0.0.1 for driving the real google-genai SDK in tests."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def gemini_response(text: str, prompt_tokens: int = 11, output_tokens: int = 7) -> dict:
    return {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": output_tokens,
            "totalTokenCount": prompt_tokens + output_tokens,
        },
        "modelVersion": "gemini-2.5-flash",
    }


class FakeGemini:
    """Answers generateContent / streamGenerateContent with a responder function.

    responder(body: dict, path: str) -> (status, text or a whole response dict) ; every request is
    kept in `requests`."""

    def __init__(self, responder):
        self.responder = responder
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
                status, text = fake.responder(body, self.path)
                if status != 200:
                    payload = json.dumps({"error": {"code": status, "message": text, "status": "UNAVAILABLE"}}).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if "streamGenerateContent" in self.path:
                    chunks = [text[i : i + 12] for i in range(0, len(text), 12)] or [""]
                    data = b"".join(b"data: " + json.dumps(gemini_response(c)).encode() + b"\r\n\r\n" for c in chunks)
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                payload = json.dumps(text if isinstance(text, dict) else gemini_response(text)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def grounded_response(answer: str, pages: list[tuple[str, str]], supports: list[tuple[str, list[int]]]) -> dict:
    """A generateContent answer grounded with Google Search, shaped as the Gemini API sends it
    (camelCase; the SDK's GroundingMetadata / GroundingChunk.web / GroundingSupport.segment).
    pages: (uri, title) per grounding chunk; supports: (sentence, chunk indices)."""
    out = gemini_response(answer)
    segments, pos = [], 0
    for sentence, idx in supports:
        start = answer.find(sentence, pos)
        start = max(start, 0)
        end = start + len(sentence.encode("utf-8"))
        seg = {"endIndex": end, "text": sentence}
        if start:
            seg["startIndex"] = start  # proto3 JSON omits zero values
        segments.append({"segment": seg, "groundingChunkIndices": idx, "confidenceScores": [0.9] * len(idx)})
        pos = start + len(sentence)
    out["candidates"][0]["groundingMetadata"] = {
        "searchEntryPoint": {"renderedContent": "<style>.container{}</style><div class='container'>chips</div>"},
        "groundingChunks": [{"web": {"uri": uri, "title": title}} for uri, title in pages],
        "groundingSupports": segments,
        "webSearchQueries": ["the query"],
    }
    return out


def prompt_of(body: dict) -> str:
    return "".join(p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", []))
