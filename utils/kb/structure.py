"""A document's heading structure, read from the normalised text the KB's readers write.

Every structured reader (Markdown, reStructuredText, AsciiDoc, HTML, plain-text help files) writes
the same form: a heading is a line of its own, ``#`` x level + space + the heading (``## Options``),
and code is a fenced block (three backticks on lines of their own). `sections` cuts that text into
leaf sections, each with its heading path: the document's title, then the headings above it
(``Title › Section › Subsection``, joined by `PATH_SEP`). A heading equal to the title (a page's
``<h1>``, a Markdown file's first ``#``) is not repeated in the path. Text before the first heading
has the title alone as its path.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..text import fold

PATH_SEP = " › "
_HEADING = re.compile(r"^(#{1,6}) +(\S.*?)\s*$")
_FENCE_LINE = re.compile(r"^[ \t]*```")


class Section(NamedTuple):
    path: tuple[str, ...]  # title, then headings (outermost first)
    text: str  # the section's text, its own heading line first

    @property
    def label(self) -> str:
        return PATH_SEP.join(self.path)

    @property
    def top(self) -> tuple[str, ...]:
        """The top-level section it belongs to: chunks do not straddle two of these."""
        return self.path[:2]


def heading_line(level: int, text: str) -> str:
    """The one form a heading takes in a structured reader's text."""
    text = " ".join(text.split())
    return f"{'#' * max(1, min(level, 6))} {text}" if text else ""


def _same(a: str, b: str) -> bool:
    return " ".join(fold(a).split()) == " ".join(fold(b).split())


def sections(title: str, text: str) -> list[Section]:
    """The text's leaf sections in order (empty ones left out)."""
    title = " ".join(title.split())
    out: list[Section] = []
    stack: list[tuple[int, str]] = []
    buf: list[str] = []
    in_code = False

    def path() -> tuple[str, ...]:
        return (title, *(h for _, h in stack if not _same(h, title)))

    def flush() -> None:
        body = "\n".join(buf).strip("\n")
        if body.strip():
            out.append(Section(path(), body))
        buf.clear()

    for line in text.split("\n"):
        if _FENCE_LINE.match(line):
            in_code = not in_code
        elif not in_code and (m := _HEADING.match(line)):
            flush()
            level = len(m.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, m.group(2).replace("`", "")))
        buf.append(line)
    flush()
    return out


def is_heading(piece: str) -> bool:
    """Whether a chunk's piece is a heading line."""
    return bool(_HEADING.match(piece)) and "\n" not in piece


def as_text(line: str) -> str:
    """A line of text that must not read as a heading line (one that happens to start with "# ")."""
    return " " + line if _HEADING.match(line) else line


def fenced(code_lines: list[str], info: str = "") -> str:
    """Code lines as one fenced block ("" if they are blank); their common indentation removed, and a
    line of backticks inside cannot close it early."""
    from textwrap import dedent

    code = dedent("\n".join(ln.rstrip().replace("\t", "    ") for ln in code_lines)).strip("\n")
    if not code.strip():
        return ""
    code = re.sub(r"^(\s*)```", r"\1'''", code, flags=re.M)
    return f"```{info}\n{code}\n```"
