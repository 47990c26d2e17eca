"""Plain text read as a document when it shows its structure, as-is otherwise.

A text file has clear section structure when it has at least two section marks: separator lines
(a row of 20+ ``=`` or ``-``: the next line is a section heading) or underlined headings (a line
with a row of ``=``/``-`` of about its length under it). Such a file is read the way help files are
written: a first line naming the file by its tag (``*name.txt*  …``) is a header, not text; the title
is the first line that ends in a tag (``Heading text    *tag*``) or a short line of its own at the margin
before the first section (else the file's name); a line of tags alone
(``*tag* *other-tag*``) heads the entry under it; tags and ``|links|`` read as their words; an
example block (a line ending in `` >``, then indented lines, up to a line starting with ``<``)
becomes fenced code; a column header's trailing `` ~`` is dropped; a line that starts at the margin
with a term and a tab (``:earlier {N}m<TAB>Go to …``) starts a paragraph, so each entry is one, and a
short line at the margin over indented lines (``--linger=<s>`` over its description) is a term of its own.
"""

from __future__ import annotations

import re

from .structure import as_text, fenced, heading_line

_SEPARATOR = re.compile(r"^(?:={20,}|-{20,})\s*$")
_UNDERLINE = re.compile(r"^\s*(?:={3,}|-{3,})\s*$")
_TAG = re.compile(r"(?<![^\s(])\*([^*\s|]+)\*(?=[\s).,]|$)")
_TAGS_ONLY = re.compile(r"^\s*(?:\*[^*\s|]+\*\s*)+$")
_LINK = re.compile(r"\|([^|\s]+)\|")
_HEADER = re.compile(r"^\*[^*\s]+\*\s")
_TITLED = re.compile(r"^\s*(\S.*?\S)\s{2,}(?:\*[^*\s|]+\*\s*)+$")  # text, then its tags
_ENTRY = re.compile(r"^\S[^\t]*\t")
_EXAMPLE_START = re.compile(r"(?:^|\s)>[a-z]*\s*$")


_CONTROL = re.compile(r"[\x00-\x07\x0e-\x1a\x1c-\x1f\x7f]")
_CODE_END = re.compile(r"[;{}]\s*$")
_SETTING = re.compile(r"^\s*[\w.\-\[\]]+\s*(?:=.*|:\s*\S+\s*)$")


def looks_like_prose(head: bytes) -> bool:
    """Whether a file's first bytes are text written to be read: valid UTF-8 (or nearly: a few
    stray bytes of another encoding), few control characters, mostly letters, and not a table of
    data (most lines three fields apart by tabs), source code (a third of its lines ending in ``;``,
    ``{`` or ``}``) or settings (most lines ``name = value``)."""
    if not head.strip() or b"\x00" in head:
        return False
    text = head.decode("utf-8", "replace")
    if text.count("\ufffd") > max(2, len(text) // 200) or len(_CONTROL.findall(text)) > max(2, len(text) // 200):
        return False
    visible = [c for c in re.sub(r"(\S)\1{3,}", "", text) if not c.isspace()]  # rules of ---- or ==== aside
    if sum(c.isalpha() for c in visible) < 0.5 * len(visible):
        return False
    lines = [ln for ln in text.split("\n")[:2000] if ln.strip()]
    if not lines:
        return False
    n = len(lines)
    if sum(len([f for f in ln.split("\t") if f.strip()]) >= 3 for ln in lines) > n / 2:
        return False
    if sum(bool(_CODE_END.search(ln)) for ln in lines) > n / 3:
        return False
    return sum(bool(_SETTING.match(ln)) for ln in lines) <= 0.6 * n


def _marks(lines: list[str]) -> int:
    n = 0
    for i, line in enumerate(lines):
        if _SEPARATOR.match(line):
            n += 1
        elif i and _UNDERLINE.match(line) and lines[i - 1].strip() and not _UNDERLINE.match(lines[i - 1]):
            if 0.5 * len(lines[i - 1].strip()) <= len(line.strip()) <= 2 * len(lines[i - 1].strip()) + 2:
                n += 1
    return n


def _words(line: str) -> str:
    """A line with its links read as words, its tags dropped (they are anchors, and the line says what
    they name) unless the line is tags alone, a trailing " ~" dropped."""
    if _TAGS_ONLY.match(line):
        line = _TAG.sub(r"\1", line)
    else:
        line = _TAG.sub("", line)
    line = _LINK.sub(r"\1", line)
    return re.sub(r"\s~\s*$", "", line).rstrip()


def is_help_file(text: str) -> bool:
    """Whether the text opens the way a help file does: a line naming the file by its tag."""
    return bool(_HEADER.match(text.lstrip("\ufeff")[:200]))


# A release's heading in release notes or a changelog: "v1.5.4 (Feb 2023)", "2.1.0 - 2024-01-02",
# "pkg (1.2-3) unstable; urgency=medium", "* Noteworthy changes in release 9.1 (2022-04-15)",
# "Version 3.4", "Changes in 1.2:".
_RELEASE = re.compile(
    r"^(?:[*#=]+\s*)?(?:v?\d+\.\d+[\w.\-]*(?=[\s:,]|$)|[\w.+-]+ \(\d[^)]*\)"
    r"|(?:noteworthy changes in release|version|release|changes (?:in|for|since)|what'?s new in|new in)"
    r"\b.{0,40}?\d+\.\d+)",
    re.I,
)
_SUBHEAD = re.compile(r"^\*\*+\s+(\S.*)$")
_ITEM = re.compile(r"^\s*[*+•-]\s+")
_LABEL = re.compile(r"^\w[\w /-]{0,20}:\s")


TERM_WORDS = 4  # a line at the margin of at most this many words, its meaning indented under it, is a term


def _is_term(line: str, nxt: str) -> bool:
    """A term of a definition list written as plain text: a short line at the margin, no sentence
    (no final punctuation), over indented lines that say what it means ("--linger=<s>" over its
    description)."""
    words = line.split()
    return (
        0 < len(words) <= TERM_WORDS
        and not line[:1].isspace()
        and line.rstrip()[-1] not in ".,:;!?"
        and nxt[:1].isspace()
        and bool(nxt.strip())
    )


def read_releases(lines: list[str]) -> str:
    """Release notes or a changelog in the structured form: each release a heading (so an entry's
    heading path names its release), "** Bug fixes" a subheading, each entry its own paragraph or
    item; "" when the text is not laid out by releases (two release lines at the margin at least)."""
    heads = [i for i, ln in enumerate(lines) if len(ln) <= 100 and _RELEASE.match(ln)]
    if len(heads) < 2 or heads[0] > 40:
        return ""
    out: list[str] = []
    for i, line in enumerate(lines):
        if i in heads:
            out += ["", heading_line(2, line.strip().lstrip("*#= ").strip()), ""]
        elif m := _SUBHEAD.match(line):
            out += ["", heading_line(3, m.group(1).strip()), ""]
        elif not line.strip():
            out.append("")
        elif _LABEL.match(line) and not line[:1].isspace():
            out += ["", "- " + line.strip()]  # "cli: the log rotates daily": an entry, read as an item
        elif _ITEM.match(line):
            out += ["", as_text("- " + _ITEM.sub("", line, count=1).strip())]
        elif not line[:1].isspace() and out and out[-1] and (_LABEL.match(line) or out[-1].rstrip()[-1:] in ".)!?"):
            entry = ("- " if _LABEL.match(line) else "") + line.strip()
            out += ["", as_text(entry)]  # an entry of its own at the margin ("cli: ..." an item)
        else:
            out.append(as_text(line.strip()))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def read_plain(text: str, fallback_title: str) -> tuple[str, str, bool]:
    """(title, text, structured): a structured text in the structured readers' form, else as it is."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if _marks(lines) < 2:
        releases = read_releases(lines)
        return (fallback_title, releases, True) if releases else (fallback_title, text, False)
    if lines and _HEADER.match(lines[0]):
        lines = lines[1:]
    title = ""
    out: list[str] = []
    code: list[str] | None = None
    heading_next = seen_separator = seen_text = False
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        i += 1
        if code is not None:
            if line.startswith("<"):
                out += ["", fenced(code), ""]
                code = None
                line = line[1:]
                if not line.strip():
                    continue
            elif not line.strip() or line[:1].isspace():
                code.append(line)
                continue
            else:
                out += ["", fenced(code), ""]
                code = None
        if _SEPARATOR.match(line):
            heading_next = seen_separator = True
            out.append("")
            continue
        if not line.strip():
            out.append("")
            continue
        if heading_next:
            heading_next = False
            out += [heading_line(2, _words(line).strip()), ""]
            continue
        if _UNDERLINE.match(nxt) and not _UNDERLINE.match(line) and not line[:1].isspace():
            level = 2 if nxt.strip()[0] == "=" else 3
            head = _words(line).strip()
            if not title and not seen_text:
                title = head
            out += ["", heading_line(level, head), ""]
            i += 1
            continue
        if _TAGS_ONLY.match(line):
            out += ["", heading_line(3, _words(line).strip()), ""]
            continue
        m = _TITLED.match(line)
        if m and not title and not seen_separator and not seen_text:
            title = _words(m.group(1)).strip()
            out += [heading_line(1, title), ""]
            continue
        if not title and not seen_separator and not seen_text and not line[:1].isspace() and not nxt.strip():
            if len(line) <= 80 and not _TAGS_ONLY.match(line):  # a short line of its own opens the file
                title = _words(line).strip().rstrip(".")
                out += [heading_line(1, title), ""]
                continue
        if not line[:1].isspace() and not _TAGS_ONLY.match(line):
            seen_text = True
        if _EXAMPLE_START.search(line):
            line = _EXAMPLE_START.sub("", line)
            code = []
        if _ENTRY.match(line):
            out.append("")  # an entry (a term, a tab, what it does) starts a paragraph of its own
        elif _is_term(line, nxt):  # a term at the margin, what it means indented under it: an entry
            out += ["", as_text(_words(line).strip()), ""]
            continue
        out.append(as_text(_words(line)))
    if code is not None:
        out += ["", fenced(code)]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
    return title or fallback_title, body, True
