"""AsciiDoc read as a document, without its markup.

No maintained pure-Python AsciiDoc parser fits (the `asciidoc` package is a converter driven by
configuration files, producing HTML or DocBook; the pure-Python parsers on PyPI are alphas), so this
is a small reader of the common markup:

* titles: ``= Title`` (level 0, the document's title) to ``====== Title``, and two-line titles
  underlined with ``=``, ``-``, ``~``, ``^``, ``+`` of the title's length; the author and revision
  lines under the document title and attribute lines (``:name: value``) are dropped, attribute
  references (``{name}``) replaced by their value when the file defines it;
* conditional text (``ifdef::name[]`` … ``endif::name[]``, ``ifndef::``, ``ifeval::``, the one-line
  ``ifdef::name[text]``): the directive lines are never read as text, and the text they guard is
  kept unless the file itself rules it out (``ifndef::name[]`` with ``:name:`` set in the file). An
  attribute the file does not set may be set by the document that includes it (a fragment of
  options shared by several pages, each setting its own attribute) or by the build: its text is
  kept, not lost;
* delimited blocks: ``----`` (listing) and ``....`` (literal) become fenced code, as does a paragraph
  under ``[source]``, ``[listing]`` or ``[verse]``; comments (``////``, ``//``) and passthrough
  (``++++``) are dropped; example, sidebar and quote blocks keep their text;
* block attribute lines (``[NOTE]``, ``[[anchor]]``, ``[#id]``) are dropped; list markers become
  ``- ``, a labelled list's term (``term::``) a line of its own, ``+`` continuation lines vanish;
  table rows read ``| a | b |``;
* inline: ``link:url[text]``, ``url[text]`` and other ``name:target[text]`` macros read as the text
  (the target when it is empty), ``<<id,text>>`` as the text, ``[[anchor]]`` dropped, and ``*bold*``,
  ``_em_``, ``'em'``, ``+mono+`` and backtick marks stripped; a backtick phrase broken across lines
  ("`git` at a line's end, "submodule init`" at the next one's start) is read as one line, so its
  marks pair up.
"""

from __future__ import annotations

import re

from .structure import as_text, fenced, heading_line

_TITLE = re.compile(r"^(={1,6})\s+(\S.*?)\s*(?:=+\s*)?$")
_UNDERLINE = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
_ATTRIBUTE = re.compile(r"^:!?([\w-]+)!?:\s*(.*)$")
_BLOCK_ATTR = re.compile(r"^\[(?:\[[^\]]*\]|[^\]]*)\]\s*$")
_DELIM = re.compile(r"^(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|--)\s*$")
_CODE_STYLE = re.compile(r"^\[(?:source|listing|verse|literal)\b", re.I)
_LIST = re.compile(r"^\s*(?:[*\-.]+|\d+\.|[a-z]\.)\s+(\S.*)$")
_LABEL = re.compile(r"^(\S.*?)(?:::|;;|:::|::::)(?:\s+(.*))?$")
_BLOCK_MACRO = re.compile(r"^(?:image|include|video|audio|toc)::\S*\[.*\]\s*$")
_MACRO = re.compile(r"\b[a-z][\w-]*:(?://)?([^\s\[\]]*)\[([^\]]*)\]")
_XREF = re.compile(r"<<([^,>]+)(?:,\s*([^>]+))?>>")
_ANCHOR = re.compile(r"\[\[[^\]]*\]\]|\[#[^\]]*\]")
_MARKS = [
    re.compile(r"(?<![\w*])\*{1,2}(?=\S)([^*\n]*?\S)\*{1,2}(?![\w*])"),
    re.compile(r"(?<![\w_])_{1,2}(?=\S)([^_\n]*?\S)_{1,2}(?![\w_])"),
    re.compile(r"(?<![\w+])\+{1,2}(?=\S)([^+\n]*?\S)\+{1,2}(?![\w+])"),
    re.compile(r"`+([^`\n]+)`+"),
    re.compile(r"(?<![\w'])'(?=\S)([^'\n]*?\S)'(?![\w'])"),
]
_BUILTIN_ATTRS = {
    "litdd": "--",
    "plus": "+",
    "empty": "",
    "nbsp": " ",
    "sp": " ",
    "startsb": "[",
    "endsb": "]",
    "caret": "^",
    "amp": "&",
    "lt": "<",
    "gt": ">",
    "vbar": "|",
    "asterisk": "*",
    "backslash": "\\",
}
_ATTR_REF = re.compile(r"\{([\w-]+)\}")
_CONDITIONAL = re.compile(r"^(ifdef|ifndef|ifeval|endif)::([^\[]*)\[(.*)\]\s*$")
_MAX_JOINED = 6  # lines a broken backtick phrase may run on for


def _conditional(lines: list[str], attrs: dict[str, str]) -> list[str]:
    """The lines without conditional directives; text an ``ifndef`` of an attribute the file sets
    guards is dropped (the preprocessor runs before any block is read, inside code too)."""
    out: list[str] = []
    shown: list[bool] = []  # one entry per open ifdef / ifndef / ifeval
    for line in lines:
        m = _CONDITIONAL.match(line.strip())
        if not m:
            if all(shown):
                out.append(line)
            continue
        kind, names, content = m.groups()
        if kind == "endif":
            if shown:
                shown.pop()
            continue
        # "a,b": any of them set, "a+b": all of them
        ruled_out = kind == "ifndef" and (
            all(n.strip().lower() in attrs for n in names.split("+"))
            if "+" in names
            else any(n.strip().lower() in attrs for n in names.split(","))
        )
        if content and kind != "ifeval":  # one line: ifdef::name[text]
            if not ruled_out and all(shown):
                out.append(content)
            continue
        shown.append(not ruled_out)
    return out


def _joined(line: str, lines: list[str], i: int) -> tuple[str, int]:
    """A line that opens a backtick phrase it does not close, with the lines of its paragraph that
    close it: (the line, the index of the line after it)."""
    start = i
    while line.count("`") % 2 and i < len(lines) and i - start < _MAX_JOINED:
        nxt = lines[i].strip()
        if not nxt or nxt == "+" or any(r.match(nxt) for r in (_DELIM, _BLOCK_ATTR, _LIST, _TITLE)):
            break
        line, i = f"{line.rstrip()} {nxt}", i + 1
    return line, i


def _macro(m: re.Match) -> str:
    target, text = m.group(1), m.group(2).split(",")[0].strip().strip('"')
    if re.fullmatch(r"\d\w?", text):  # a manual page's section: name(1)
        return f"{target}({text})"
    return text or target


def _inline(line: str, attrs: dict[str, str]) -> str:
    line = _ATTR_REF.sub(lambda m: attrs.get(m.group(1).lower(), m.group(0)), line)
    line = _ANCHOR.sub("", line)
    line = _XREF.sub(lambda m: (m.group(2) or m.group(1)).strip(), line)
    if "[" in line:
        line = _MACRO.sub(_macro, line)
    for pat in _MARKS:
        line = pat.sub(r"\1", line)
    return line.rstrip()


# Markup only AsciiDoc writes, for telling an AsciiDoc source named .txt (a common convention for man
# pages) from plain text: a block attribute line at the margin ([verse], [NOTE], [[id]], [#id]), an
# anchor [[id]], a cross reference <<id,text>>, a block macro (include::file[]), an inline macro
# (name:target[text]).
_SNIFF = (
    re.compile(r"^\[(?:\[[\w:.-]+\]|#[\w-]+|[A-Za-z][\w-]*(?:,[^\]\s][^\]]*)?)\]\s*$"),
    re.compile(r"\[\[[\w:.-]+(?:,[^\]]*)?\]\]"),
    re.compile(r"<<[\w:.-]+(?:,[^>\n]+)?>>"),
    re.compile(r"^(?:include|image|ifdef|ifndef|ifeval|endif)::\S*\[.*\]\s*$"),
    re.compile(r"\b[a-z][a-z-]+:(?!//)[^\s\[\]:]+\[[^\]\n]*\]"),
)
SNIFF_LINES = 3  # lines of such markup that make a text AsciiDoc...
SNIFF_SHARE = 0.005  # ...when they are at least this share of its lines


def looks_like_asciidoc(text: str) -> bool:
    """Whether a text (a .txt file) is AsciiDoc source: a few lines of markup only AsciiDoc writes."""
    if "[" not in text and "<<" not in text:  # every mark holds one or the other
        return False
    lines = text.splitlines()
    marked = sum(1 for line in lines if ("[" in line or "<<" in line) and any(r.search(line) for r in _SNIFF))
    return marked >= SNIFF_LINES and marked >= SNIFF_SHARE * len(lines)


def read_asciidoc(text: str, fallback_title: str) -> tuple[str, str]:
    """(title, text in the structured readers' form)."""
    lines = text.replace("\r\n", "\n").split("\n")
    attrs = dict(_BUILTIN_ATTRS)
    for line in lines:
        if m := _ATTRIBUTE.match(line):
            attrs[m.group(1).lower()] = m.group(2).strip()
    lines = _conditional(lines, attrs)
    title = ""
    out: list[str] = []
    block: str | None = None  # the open delimited block's delimiter
    code: list[str] | None = None
    code_para = False  # a paragraph styled as code (up to the next blank line)
    in_header = False
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        i += 1
        if code is not None:
            if (block and line.rstrip() == block) or (code_para and not line.strip()):
                out += ["", fenced(code), ""]
                code, block, code_para = None, None, False
            else:
                code.append(line)
            continue
        if block is not None:  # a comment or passthrough block: dropped
            if line.rstrip() == block:
                block = None
            continue
        stripped = line.strip()
        if in_header:
            if stripped and not _ATTRIBUTE.match(line):
                continue  # author and revision lines
            in_header = False
        if not stripped:
            out.append("")
            continue
        if stripped.startswith("//") and not stripped.startswith("////"):
            continue
        if _ATTRIBUTE.match(line) or _BLOCK_MACRO.match(stripped) or stripped == "+":
            continue
        if m := _TITLE.match(line):
            level = len(m.group(1))
            head = _inline(m.group(2), attrs)
            if level == 1 and not title:
                title, in_header = head, True
            out += ["", heading_line(level, head), ""]
            continue
        under = nxt.strip()
        if (
            under
            and len(set(under)) == 1
            and under[0] in _UNDERLINE
            and abs(len(under) - len(stripped)) <= 2
            and len(under) >= 2
            and not _DELIM.match(stripped)
            and not line[:1].isspace()
        ):
            level = _UNDERLINE[under[0]]
            head = _inline(stripped, attrs)
            if level == 1 and not title:
                title = head
            out += ["", heading_line(level, head), ""]
            i += 1
            continue
        if _BLOCK_ATTR.match(stripped):
            if _CODE_STYLE.match(stripped) and not _DELIM.match(nxt.strip()):
                code, code_para = [], True
            continue
        if d := _DELIM.match(stripped):
            delim = d.group(1)
            if delim[0] in "-." and delim != "--":
                code, block = [], delim
            elif delim[0] in "/+":
                block = delim
            continue  # example, sidebar, quote and open blocks keep their text
        if stripped.startswith("|==="):
            continue
        if stripped.startswith("|"):
            cells = [_inline(c.strip(), attrs) for c in stripped[1:].split("|")]
            out.append("| " + " | ".join(cells) + " |")
            continue
        if m := _LIST.match(line):
            item, i = _joined(m.group(1), lines, i)
            out.append(as_text("- " + _inline(item, attrs)))
            continue
        if (m := _LABEL.match(stripped)) and not stripped.startswith(("http", "link:")):
            out += ["", as_text(_inline(m.group(1), attrs)), ""]
            if m.group(2):
                out.append(as_text(_inline(m.group(2), attrs)))
            continue
        line, i = _joined(line.strip(), lines, i)
        out.append(as_text(_inline(line, attrs)))
    if code:
        out += ["", fenced(code)]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()
    return title or fallback_title, body
