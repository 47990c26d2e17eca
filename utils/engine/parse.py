"""Tolerant reading of what LLMs send back: the JSON object inside whatever a model wrapped it in
(reasoning in <think>…</think>, Markdown code fences, prose before and after, trailing commas),
validated by the engines' pydantic models, and the one-line description of a validation error that
the repair retry quotes. Standard library and pydantic only."""

from __future__ import annotations

import json
import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_OPEN_THINK = re.compile(r"<(think|thinking|reasoning)>", re.I)
_CLOSE_THINK = re.compile(r"</(?:think|thinking|reasoning)>", re.I)
_FENCE = re.compile(r"```[ \t]*(?:json5?|JSON)?[ \t]*\n?(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


class ParseError(ValueError):
    """No JSON object could be read from a model's answer."""


def strip_think(text: str) -> str:
    """Drop reasoning blocks. A reply cut off inside a block has no answer after it; a closing tag
    without its opening (some servers eat the opening tag) drops everything before it."""
    text = _THINK.sub("", text or "")
    m = _CLOSE_THINK.search(text)
    if m:
        text = text[m.end() :]
    m = _OPEN_THINK.search(text)
    if m:
        text = text[: m.start()]
    return text.strip()


def _balanced_objects(text: str):
    """Yield every top-level {...} span, scanning strings properly (braces inside strings count not)."""
    depth, start, in_str, esc = 0, -1, False, False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"' and depth > 0:
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                yield text[start : i + 1]


def _remove_trailing_commas(s: str) -> str:
    """`{"a": [1, 2,],}` -> `{"a": [1, 2]}`, leaving commas inside strings alone."""
    out, in_str, esc, i = [], False, False, 0
    while i < len(s):
        ch = s[i]
        if in_str:
            out.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
            out.append(ch)
        elif ch == ",":
            m = _TRAILING_COMMA.match(s, i)
            if m:
                i = m.start(1)
                continue
            out.append(ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _loads(candidate: str) -> dict | None:
    for attempt in (candidate, _remove_trailing_commas(candidate)):
        try:
            obj = json.loads(attempt, strict=False)  # strict=False: raw newlines inside strings
        except (json.JSONDecodeError, RecursionError):  # RecursionError: nested too deeply to read
            continue
        if isinstance(obj, dict):
            return obj
    return None


def extract_json(text: str) -> dict:
    """The JSON object in a model's reply. Tries, in order: the whole reply, each fenced block,
    each balanced {...} span (the largest first); each with and without trailing commas."""
    body = strip_think(text)
    if not body:
        raise ParseError("the answer was empty" + (" (only reasoning)" if (text or "").strip() else ""))
    candidates = [body] + [m.group(1) for m in _FENCE.finditer(body)]
    for c in candidates:
        obj = _loads(c.strip())
        if obj is not None:
            return obj
    spans = sorted(_balanced_objects(body), key=len, reverse=True)
    for s in spans:
        obj = _loads(s)
        if obj is not None:
            return obj
    snippet = " ".join(body.split())[:80]
    raise ParseError(f"no JSON object in the answer (it began: {snippet!r})")


def describe_error(exc: Exception) -> str:
    """One line naming what was wrong, short enough to quote back to the model."""
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors()[:5]]
        return f"{exc.error_count()} validation error(s): " + "; ".join(parts)
    return str(exc)[:300]


def parse_model(text: str, model: type[M]) -> M:
    """Read and validate a reply; raises ParseError or pydantic's ValidationError."""
    return model.model_validate(extract_json(text))


class ThinkFilter:
    """Streams text with <think>…</think> blocks removed, even when a tag is split across chunks."""

    _TAGS = ("<think>", "</think>", "<thinking>", "</thinking>", "<reasoning>", "</reasoning>")

    def __init__(self):
        self.buf, self.inside = "", False

    def feed(self, chunk: str) -> str:
        self.buf += chunk
        out: list[str] = []
        while self.buf:
            low = self.buf.lower()
            if self.inside:
                ends = [(low.find(t), t) for t in self._TAGS if t.startswith("</") and low.find(t) >= 0]
                if not ends:
                    self.buf = self.buf[-12:]  # keep a possible partial closing tag
                    return "".join(out)
                pos, tag = min(ends)
                self.buf, self.inside = self.buf[pos + len(tag) :].lstrip("\n"), False
                continue
            starts = [(low.find(t), t) for t in self._TAGS if not t.startswith("</") and low.find(t) >= 0]
            if starts:
                pos, tag = min(starts)
                out.append(self.buf[:pos])
                self.buf, self.inside = self.buf[pos + len(tag) :], True
                continue
            # hold back a tail that could be the start of a tag
            lt = self.buf.rfind("<")
            if lt >= 0 and any(t.startswith(low[lt:]) for t in self._TAGS):
                out.append(self.buf[:lt])
                self.buf = self.buf[lt:]
            else:
                out.append(self.buf)
                self.buf = ""
            break
        return "".join(out)

    def flush(self) -> str:
        rest = "" if self.inside else self.buf
        self.buf = ""
        return rest
