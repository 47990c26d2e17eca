"""A man page read as a document: the `man` macros (``.TH``, ``.SH``, ``.TP``, ``.B`` …) here, BSD's
`mdoc` (``.Dd``, ``.Sh``, ``.It Fl`` …) in mdoc.py, roff's escapes and tables in roff.py.

The title is the page's name and section (``ls(1)``, from the NAME section, else from ``.TH``); a
section (``.SH``) is a heading, its name in sentence case (``SEE ALSO`` reads "See also"), a
subsection (``.SS``) one level down; an entry of a tagged list (``.TP``, ``.IP tag``: an option, a
file, an exit status) is a heading of its own one level below its section, and its first paragraph
names it (``- -a, --all: do not ignore entries starting with .``), so every chunk carries the path
title › section › option; a bullet (``.IP \\(bu``) is a list item; unfilled text (``.nf``, ``.EX``)
is code. A page that only includes another (``.so man1/other.1``) is read as that page, when it is
there.
"""

from __future__ import annotations

import re
from pathlib import Path

from .roff import Page, args, branch, lines_of, page_title, plain, request, sentence_case, table

_FONT_MACROS = {"B", "I", "SM", "SB", "CW", "CR"}
_ALTERNATING = {"BR", "BI", "IB", "IR", "RB", "RI", "CWI", "ICW"}
_BREAKS = {"PP", "LP", "P", "HP", "sp", "br", "Sp", "ne", "ce", "bp", "in"}
_BULLET = re.compile(r"^(?:[•·*o+-]|\d{1,3}[.)]?|\(?[a-z0-9]\)|\[\d+\])$")
_SO = re.compile(r"^\s*[.']so\s+(\S+)\s*$")


_ROFF_LINE = re.compile(r"^[.'][ \t]*(?:TH|SH|Dd|Dt|Sh|so)\b", re.M)


def looks_like_roff(text: str) -> bool:
    """Whether text is a man page's source: a title or section macro, or only an include (``.so``)."""
    return bool(_ROFF_LINE.search(text[:16384]))


def is_mdoc(lines: list[str]) -> bool:
    return any(re.match(r"^[.']\s*(?:Dd|Dt|Sh)\b", ln) for ln in lines[:400])


def alias(source: str) -> str | None:
    """The page a man page only includes (``.so man1/other.1``): its path, or None."""
    body = [ln for ln in lines_of(source[:4096]) if ln.strip()]
    if len(body) == 1 and (m := _SO.match(body[0])):
        return m.group(1)
    return None


def alias_target(path: Path, name: str) -> Path | None:
    """Where an included page is: relative to the man folder (``man1/..``'s parent), or beside."""
    for base in (path.parent.parent, path.parent):
        for cand in (base / name, base / (name + ".gz")):
            if cand.is_file():
                return cand
    return None


def read_man(source: str, fallback_title: str) -> tuple[str, str]:
    """(title, structured text) of a man page's roff source, either macro set."""
    lines = lines_of(source)
    if is_mdoc(lines):
        from .mdoc import read_mdoc

        return read_mdoc(lines, fallback_title)
    return _read_man_macros(lines, fallback_title)


def _joined(words: list[str], strings: dict[str, str]) -> str:
    return "".join(plain(w, strings) for w in words)


def _read_man_macros(lines: list[str], fallback_title: str) -> tuple[str, str]:
    page = Page()
    strings: dict[str, str] = {}
    th_name, section = "", ""
    name_line = ""
    in_name = False
    sec_level = 2  # the level of the section (.SH 2, .SS 3) the entries are under
    depth = 0  # .RS nesting inside an entry
    entry_depth: int | None = None  # the .RS depth the open entry list is at
    pending: str | None = None  # "tag": the next text is a .TP entry's tag; "heading2"/"heading3"
    tag_parts: list[str] = []
    skip_else = False
    i = 0

    def text(words: str) -> None:
        nonlocal pending, name_line
        if pending == "tag":
            tag_parts.append(words)
            return
        if pending in ("heading2", "heading3"):
            start_section(2 if pending == "heading2" else 3, words)
            return
        if in_name and not name_line and words.strip():
            name_line = words.strip()
        page.text(words)

    def start_section(level: int, name: str) -> None:
        nonlocal pending, sec_level, in_name, entry_depth, depth
        pending = None
        name = " ".join(name.split())
        in_name = level == 2 and name.upper() in ("NAME", "NOM", "NOMBRE", "NOME", "ИМЯ", "НАЗВАНИЕ")
        sec_level, entry_depth, depth = level, None, 0
        page.end_code()
        page.heading(level, sentence_case(name))

    def flush_tag() -> None:
        nonlocal pending
        if pending == "tag":
            pending = None
            page.entry(min(6, sec_level + 1 + max(0, depth - (entry_depth or 0))), ", ".join(tag_parts))
            tag_parts.clear()

    while i < len(lines):
        line = lines[i]
        i += 1
        if line[:1] not in ".'":
            if page.code is not None:
                page.text(plain(line, strings))
                continue
            if pending == "tag":
                tag_parts.append(plain(line, strings))
                flush_tag()
                continue
            glue = line.rstrip().endswith("\\c")
            text(plain(line, strings) if line.strip() else "")
            page.glue = glue
            continue
        req = request(line)
        if req is None:
            continue
        name, rest = req
        if name in ("if", "ie", "el"):
            i, skip_else = branch(name, rest, lines, i, skip_else)
            continue
        words = args(rest)
        if name == "TH":
            th_name = plain(words[0], strings) if words else ""
            section = plain(words[1], strings) if len(words) > 1 else ""
        elif name in ("SH", "SS"):
            if words:
                start_section(2 if name == "SH" else 3, plain(" ".join(words), strings))
            else:
                pending = "heading2" if name == "SH" else "heading3"
        elif name == "TP":
            page.end_code()
            if entry_depth is None or depth < entry_depth:
                entry_depth = depth
            tag_parts.clear()
            pending = "tag"
        elif name == "TQ":  # another tag for the same entry: the entry is written again with both
            if page.out and page.out[-1].lstrip("#").strip() == page.prefix[2:-2] and not page.para:
                tag_parts[:] = [page.prefix[2:-2]]
                page.out.pop()
            pending = "tag"
        elif name == "IP":
            tag = plain(words[0], strings).strip() if words else ""
            if entry_depth is None or depth < entry_depth:
                entry_depth = depth
            if not tag:
                page.end()
                page.prefix = ""
            elif _BULLET.match(tag):
                if entry_depth is not None and depth <= entry_depth:  # a list of its own after the entries
                    page.back_to_section()
                page.item("- " if not tag[:1].isalnum() and tag[:1] != "(" else f"- {tag} ")
            else:
                tag_parts[:] = [tag]
                pending = "tag"
                flush_tag()
        elif name in ("PP", "LP", "P"):
            page.end_code()
            if entry_depth is not None and depth <= entry_depth:
                page.back_to_section()
                entry_depth = None
            page.end()
        elif name == "RS":
            page.end()
            depth += 1
        elif name == "RE":
            page.end()
            depth = max(0, depth - 1)
        elif name in ("nf", "EX", "Vb"):
            page.start_code()
        elif name in ("fi", "EE", "Ve"):
            page.end_code()
        elif name == "TS":
            page.end_code()
            i = table(lines, i, page, strings)
        elif name in _FONT_MACROS:
            if words:
                text(" ".join(plain(w, strings) for w in words))
            elif i < len(lines) and lines[i][:1] not in ".'":
                text(plain(lines[i], strings))
                i += 1
        elif name in _ALTERNATING:
            text(_joined(words, strings))
        elif name in ("UR", "MT"):
            pass
        elif name in ("UE", "ME"):
            if words:
                page.glue = True
                text(_joined(words, strings))
        elif name == "SY":
            page.end()
            text(_joined(words, strings))
        elif name == "OP":
            text("[" + " ".join(plain(w, strings) for w in words) + "]")
        elif name == "ds" and words:
            strings[words[0]] = plain(rest[len(words[0]) :].strip().lstrip('"'), strings)
        elif name in _BREAKS:
            if page.code is None:
                page.end()
            elif name == "sp":
                page.text("")
        if pending == "tag" and name not in ("TP", "TQ", "IP") and name in _FONT_MACROS | _ALTERNATING | {"OP"}:
            flush_tag()
    section = section or ""
    title = page_title(name_line, section.lower() if section.isalpha() else section, "")
    if not title:
        title = f"{th_name.lower() if th_name.isupper() else th_name}({section})" if th_name else fallback_title
    return title, page.result()
