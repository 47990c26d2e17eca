"""A GNU info manual read as a document (``*.info``, ``*.info-N``, gzipped or not).

Each node is a section: its underlined heading is a heading line, the level from the underline
(``***`` a chapter, ``===`` a section, ``---`` a subsection, ``...`` below); a node without one is
headed by its name. The Top node's heading is the title. Menus (``* Menu:`` and what follows), the
file's preamble, its tag table and its table of parts are navigation, not text (a file of menus
alone, the info directory, reads as its entries: "- sed: Stream EDitor."); a cross reference
(``*note Label: Node.``) reads as its label. A table entry (terms at the margin, the text under them
indented) is a heading of its own below its section, its first paragraph naming it, as a man
page's option is (utils/kb/roff.py); an indented block outside one is code. A manual split into
parts (``find.info`` naming ``find.info-1``, ``find.info-2``) is read whole from its first file.
"""

from __future__ import annotations

import re
from pathlib import Path

from .structure import as_text, fenced, heading_line

_NODE_HEADER = re.compile(r"^File: [^,\t]+[,\t]\s*Node: ([^,\t\n]+)")
_UNDERLINE = {"*": 2, "=": 3, "-": 4, ".": 5}
_NOTE = re.compile(r"\*[Nn]ote\s+([^:]+?)::|\*[Nn]ote\s+([^:]+?):\s*[^.,]*[.,]", re.S)
_MENU_ENTRY = re.compile(r"^\* ([^:\n]+):[^.\n]*\.?\s+(\S[^\n]*(?:\n {10,}\S[^\n]*)*)", re.M)
_INDIRECT = re.compile(r"^(\S+): \d+$", re.M)


def _parts(text: str, path: Path | None, load) -> str:
    """A split manual's parts, read from beside its first file and put after it."""
    if path is None or load is None or "\x1f\nIndirect:" not in text:
        return text
    block = text.split("\x1f\nIndirect:", 1)[1].split("\x1f", 1)[0]
    out = [text]
    for name in _INDIRECT.findall(block):
        for cand in (path.parent / name, path.parent / (name + ".gz")):
            if cand.is_file():
                out.append(load(cand))
                break
    return "\n".join(out)


def _underline(line: str, above: str) -> int:
    s = line.strip()
    if len(s) >= 3 and len(set(s)) == 1 and s[0] in _UNDERLINE and above.strip():
        if abs(len(s) - len(above.rstrip())) <= 2:
            return _UNDERLINE[s[0]]
    return 0


def _words(text: str) -> str:
    def label(m: re.Match) -> str:
        words = " ".join((m.group(1) or m.group(2)).split())
        return ("See " if m.group(0)[1] == "N" else "") + words  # "*Note" is "See ...", "*note" a reference

    return _NOTE.sub(label, text)


def read_info(text: str, fallback_title: str, path: Path | None = None, load=None) -> tuple[str, str]:
    """(title, structured text) of an info file; `load(path)`: the text of another part of its manual."""
    text = re.sub(r"\x00\x08\[[^\x00]*\x00\x08\]", "", _parts(text, path, load))  # index marks of the info reader
    nodes = text.split("\x1f")
    title = ""
    if m := re.match(r"This is ([^,\s]+?)(?:\.info)?(?:-\d+)?,", nodes[0]):
        title = m.group(1)
    out: list[str] = []
    menus: list[str] = []
    for node in nodes[1:]:
        node = node.lstrip("\n")
        head = _NODE_HEADER.match(node)
        if not head:
            continue  # the tag table, the table of parts, the end marker
        body = node.split("\n", 1)[1] if "\n" in node else ""
        body, *menu = re.split(r"^\* Menu:", body, maxsplit=1, flags=re.M)
        menus.append(menu[0] if menu else "")
        lines = body.split("\n")
        node_out = _node(lines, head.group(1).strip())
        if head.group(1).strip() == "Top" and node_out and node_out[0].startswith("## "):
            title = node_out[0][3:]
            node_out = node_out[1:]
        out += node_out
    if not any(o.strip() and not o.startswith("#") for o in out):  # menus only (the info directory)
        out += [f"- {m.group(1)}: {' '.join(m.group(2).split())}" for m in _MENU_ENTRY.finditer("\n".join(menus))]
    return title or fallback_title, re.sub(r"\n{3,}", "\n\n", "\n\n".join(out)).strip()


def _node(lines: list[str], name: str) -> list[str]:
    out: list[str] = []
    level = 2
    blocks: list[list[str]] = []
    cur: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if (lv := _underline(nxt, line)) and not line.startswith(" "):
            if cur:
                blocks.append(cur)
                cur = []
            blocks.append(["\x1f" + str(lv), line.strip()])
            i += 2
            continue
        if not line.strip():
            if cur:
                blocks.append(cur)
                cur = []
        else:
            cur.append(line.rstrip())
        i += 1
    if cur:
        blocks.append(cur)
    if not blocks:
        return out
    if blocks[0][0][:1] != "\x1f" and name != "Top":
        out.append(heading_line(3, name))
        level = 3
    entry = False
    for block in blocks:
        if block[0][:1] == "\x1f":
            level = int(block[0][1:])
            out.append(heading_line(level, _words(block[1])))
            entry = False
            continue
        indent = [len(ln) - len(ln.lstrip()) for ln in block]
        terms = 0
        while terms < len(block) and indent[terms] == 0 and len(block[terms]) <= 80:
            terms += 1
        if 0 < terms < len(block) and all(n >= 5 for n in indent[terms:]):  # a table entry
            tag = ", ".join(_words(t.strip()) for t in block[:terms])
            body = " ".join(_words(" ".join(block[terms:])).split())
            out.append(heading_line(min(6, level + 1), tag))
            out.append(f"- {tag}: {body}")
            entry = True
        elif min(indent) >= 5 and not (entry and min(indent) < 10):  # an example
            out.append(fenced(block))
        else:
            out.append(as_text(" ".join(_words(" ".join(block)).split())))
    return out
