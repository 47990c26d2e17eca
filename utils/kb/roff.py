"""roff, the language man pages are written in: what the `man` and `mdoc` readers (man.py, mdoc.py)
share. Its escapes read as the characters they print (``\\-`` a hyphen, ``\\(em`` a dash,
``\\[u00E9]`` é, ``\\*(lq`` a quote, a string the page defines with ``.ds``), font and size changes
and motions as nothing; a line's arguments split as roff splits them (``"two words"`` is one);
conditionals take the branch a terminal (nroff) takes; macro definitions (``.de``) and ignored
blocks (``.ig``) are never text; a ``tbl`` table (``.TS`` … ``.TE``) reads as rows.

`Page` collects what a reader finds into the structured form (utils/kb/structure.py): headings,
paragraphs each on one line, list items (``- ``), an option's entry as a heading of its own (so its
heading path is title › section › option) whose first paragraph names it again
(``- -a, --all: do not ignore entries``), code fenced. Text after a list goes back under the section
it is in: the section's heading is written again.

Pure Python: no groff or mandoc is needed (nor used), so a page reads the same on every machine.
"""

from __future__ import annotations

import re
import unicodedata

from .structure import as_text, fenced, heading_line

_NAMED = {
    "aq": "'",
    "dq": '"',
    "em": "—",
    "en": "–",
    "hy": "-",
    "mi": "-",
    "bu": "•",
    "co": "©",
    "rg": "®",
    "tm": "™",
    "lq": "“",
    "rq": "”",
    "oq": "‘",
    "cq": "’",
    "ga": "`",
    "ha": "^",
    "ti": "~",
    "rs": "\\",
    "sl": "/",
    "ba": "|",
    "br": "|",
    "pl": "+",
    "eq": "=",
    "mu": "×",
    "di": "÷",
    "+-": "±",
    "<=": "≤",
    ">=": "≥",
    "!=": "≠",
    "->": "→",
    "<-": "←",
    "<>": "↔",
    "de": "°",
    "sc": "§",
    "ps": "¶",
    "Fo": "«",
    "Fc": "»",
    "fo": "‹",
    "fc": "›",
    "ct": "¢",
    "Po": "£",
    "Ye": "¥",
    "Eu": "€",
    "eu": "€",
    "ul": "_",
    "rn": "‾",
    "sq": "□",
    "ci": "○",
    "**": "*",
    "bv": "|",
    "or": "|",
    "at": "@",
    "sh": "#",
    "Do": "$",
    "lB": "[",
    "rB": "]",
    "lC": "{",
    "rC": "}",
    "la": "⟨",
    "ra": "⟩",
    "dg": "†",
    "dd": "‡",
    "aa": "´",
    "a-": "¯",
    "ss": "ß",
    "AE": "Æ",
    "ae": "æ",
    "OE": "Œ",
    "oe": "œ",
    "14": "¼",
    "12": "½",
    "34": "¾",
    "hA": "⇔",
    "rA": "⇒",
    "lA": "⇐",
    "ua": "↑",
    "da": "↓",
    "OK": "✓",
    "pc": "·",
    "fm": "′",
    "sd": "″",
    "if": "∞",
    "md": "·",
    "sp": " ",
    "bq": "„",
    "Bq": "„",
    "vs": "|",
    "nbsp": " ",
    "Sd": "ð",
    "TP": "Þ",
}
_ACCENTS = {"'": "\u0301", "`": "\u0300", ":": "\u0308", "^": "\u0302", "~": "\u0303", ",": "\u0327", "o": "\u030a"}
_STRINGS = {"lq": "“", "rq": "”", "R": "®", "Tm": "™", "Aq": "'", "Ba": "|", "Ne": "≠", "Ge": "≥", "Le": "≤",
            "Gt": ">", "Lt": "<", "Pm": "±", "If": "∞", "Pi": "π", "Na": "NaN", "Am": "&", "q": '"'}  # fmt: skip
_ESCAPE = re.compile(
    r"""\\(?:
      \((?P<two>..)
    | \[(?P<br>[^\]]*)\]
    | \*(?:\((?P<s2>..)|\[(?P<sb>[^\]\s]*)[^\]]*\]|(?P<s1>.))
    | [fFmMgnYkV](?:\(..|\[[^\]]*\]|.)
    | s(?:[-+]?[0-9]|[-+]?\([0-9][0-9]|[-+]?\[[^\]]*\]|'[^']*')
    | (?P<q>[hvwoXZNlLDbxRSHABCu])'(?P<arg>[^']*)'
    | \$.
    | (?P<one>.)
    )""",
    re.X | re.S,
)
_ONE = {"\\": "\\", "e": "\\", "E": "\\", "-": "-", ".": ".", "'": "'", "`": "`", " ": " ", "~": " ", "0": " ",
        "t": " ", "_": "_", '"': '"', "Z": ""}  # fmt: skip
_COMMENT = re.compile(r'(?<!\\)((?:\\\\)*)\\["#].*$')
_HEADING = re.compile(r"^#{1,6} \S")
_ARG = re.compile(r'"((?:[^"]|"")*)"?|(\S+)')


def named(name: str) -> str:
    """The character a roff name stands for (``em``, ``u00E9``, ``'e``); "" when unknown."""
    if name in _NAMED:
        return _NAMED[name]
    if len(name) == 2 and name[0] in _ACCENTS and name[1].isalpha():
        return unicodedata.normalize("NFC", name[1] + _ACCENTS[name[0]])
    if m := re.fullmatch(r"u([0-9A-Fa-f]{4,6}(?:_[0-9A-Fa-f]{4,6})*)", name):
        try:
            return unicodedata.normalize("NFC", "".join(chr(int(h, 16)) for h in m.group(1).split("_")))
        except (ValueError, OverflowError):
            return ""
    if m := re.fullmatch(r"char(\d+)", name):
        return chr(int(m.group(1))) if int(m.group(1)) < 0x110000 else ""
    return ""


def plain(text: str, strings: dict[str, str] | None = None) -> str:
    """A roff line's text with its escapes read (fonts and motions dropped, characters named)."""
    if "\\" not in text:
        return text
    strings = strings or {}

    def one(m: re.Match) -> str:
        if (two := m.group("two")) is not None:
            return named(two)
        if (br := m.group("br")) is not None:
            return named(br.strip())
        s = m.group("s2") or m.group("sb") or m.group("s1")
        if s is not None:
            return strings.get(s, _STRINGS.get(s, ""))
        if (q := m.group("q")) is not None:
            arg = m.group("arg")
            if q == "N":
                return chr(int(arg)) if arg.isdigit() and int(arg) < 0x110000 else ""
            if q == "C":
                return named(arg)
            return plain(arg, strings) if q == "o" else ""
        if (c := m.group("one")) is not None:
            return _ONE.get(c, "" if c in "&)%|^,/:{}adurpzc!?" else c)
        return ""

    return _ESCAPE.sub(one, text)


def sentence_case(heading: str) -> str:
    """``SEE ALSO`` -> "See also"; a heading not all in capitals stays as it is."""
    letters = [c for c in heading if c.isalpha()]
    if letters and all(c.isupper() for c in letters) and len(letters) > 1:
        return heading[:1].upper() + heading[1:].lower()
    return heading


def page_title(name_line: str, section: str, fallback: str) -> str:
    """``ls(1)`` from the NAME section's first line ("ls, dir \\- list ..."), else the fallback."""
    head = re.split(r"\s+[-—–]\s+|\s+\\-\s+", name_line, maxsplit=1)[0]
    first = head.split(",")[0].strip()
    if not first or len(first) > 60:
        return fallback
    return f"{first}({section})" if section else first


def without_comment(line: str) -> str:
    return _COMMENT.sub(r"\1", line)


_REQUEST = re.compile(r"^[.']\s*(\S+)\s?(.*)$")


def request(line: str) -> tuple[str, str] | None:
    """(name, what follows it) of a request or macro line (".SH NAME", "'br"), or None."""
    m = _REQUEST.match(line)
    return (m.group(1), m.group(2)) if m else None


def args(rest: str) -> list[str]:
    """A request's or macro's arguments, as roff splits them (a quoted argument is one, "" a quote)."""
    out = []
    for m in _ARG.finditer(rest):
        out.append(m.group(1).replace('""', '"') if m.group(1) is not None else m.group(2))
    return out


def lines_of(source: str) -> list[str]:
    """The source's lines: continued lines joined, comments and comment lines removed, macro
    definitions (``.de``) and ignored blocks (``.ig``) left out."""
    raw = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[str] = []
    skip_to = ""
    buf = ""
    for line in raw:
        if skip_to:
            bare = re.sub(r"^([.'])\s+", r"\1", line).rstrip()
            if bare == skip_to or bare.startswith(skip_to + " "):
                skip_to = ""
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            buf += line[:-1]
            continue
        line, buf = buf + line, ""
        if line[:1] in ".'" and re.match(r"^[.']\s*(?:de|de1|am|ig|dei|ami)\b", line):
            parts = without_comment(line)[1:].split()
            end = parts[2] if parts[0] in ("de", "de1", "am", "dei", "ami") and len(parts) > 2 else ""
            skip_to = "." + (end or ".")
            if parts[0] == "ig" and len(parts) > 1:
                skip_to = "." + parts[1]
            continue
        if re.match(r"^[.']\s*\\\"", line):
            continue
        line = without_comment(line)
        if line[:1] in ".'" and not line[1:].strip():
            continue
        out.append(line)
    return out


def conditional(name: str, rest: str) -> tuple[bool, str]:
    """(taken, what follows) for ``.if COND rest`` / ``.ie COND rest`` as a terminal reads it: ``n``
    holds, ``t`` does not, other conditions are taken as holding."""
    rest = rest.lstrip()
    neg = rest.startswith("!")
    if neg:
        rest = rest[1:]
    m = re.match(r"([ntoev])(?=\s|\\\{)|'[^']*'[^']*'|\S+", rest)
    cond = m.group(0) if m else ""
    taken = {"n": True, "t": False, "o": True, "e": False, "v": False}.get(cond, True) != neg
    return taken, rest[len(cond) :].lstrip()


def branch(request: str, rest: str, lines: list[str], i: int, skip_else: bool) -> tuple[int, bool]:
    """One ``.if`` / ``.ie`` / ``.el`` request (`rest`: what follows its name; `lines[i]`: the line
    after it), as a terminal reads it: a taken branch's text is put back as the next line to read,
    an untaken one is passed over with the block it opens (``\\{`` ... ``\\}`` over several lines).
    Returns the index to read on from and `skip_else` (an ``.ie`` that was taken skips its ``.el``)."""
    if request == "el":
        taken, body = not skip_else, rest
    else:
        taken, body = conditional(request, rest)
        skip_else = taken if request == "ie" else skip_else
    block = body.startswith("\\{")
    body = body[2:].lstrip() if block else body
    if not taken:
        if block and "\\}" not in body:
            while i < len(lines) and "\\}" not in lines[i]:
                i += 1
            i += 1
        return i, skip_else
    body = body.replace("\\}", "")
    if body.strip():
        lines.insert(i, body)
    return i, skip_else


class Page:
    """The structured text a man page reads as (see the module's docstring)."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.para: list[str] = []
        self.prefix = ""  # "- " for an item, "- TAG: " for an option's entry
        self.section: tuple[int, str] | None = None  # the last heading that is not an entry's
        self.deeper = False  # an entry's heading was written since
        self.code: list[str] | None = None
        self.glue = False  # the last text ended with \c: the next goes on without a space

    def text(self, words: str) -> None:
        if self.code is not None:
            self.code.append(words)
            return
        if not words.strip():
            if words == "" and self.para:  # a blank line in filled text: a paragraph break
                self.end()
            return
        if self.glue and self.para:
            self.para[-1] += words.strip()
        else:
            self.para.append(words.strip())
        self.glue = False

    def end(self) -> None:
        """End the paragraph being filled."""
        if self.para:
            line = " ".join(" ".join(self.para).split())
            if line:
                self.out.append(self.prefix + line if self.prefix else as_text(line))
        self.para, self.prefix = [], ""

    def heading(self, level: int, text: str, entry: bool = False) -> None:
        self.end()
        line = heading_line(level, text)
        if not line:
            return
        self.out.append(line)
        if entry:
            self.deeper = True
        else:
            self.section, self.deeper = (level, line), False

    def back_to_section(self) -> None:
        """Text after an entry list belongs to the section again: its heading is written again."""
        self.end()
        if self.deeper and self.section:
            self.out.append(self.section[1])
            self.deeper = False

    def entry(self, level: int, tag: str) -> None:
        """An option's (or any tagged list's) entry: a heading of its own, and its first paragraph
        names it."""
        tag = " ".join(tag.split())
        if not tag:
            self.item()
            return
        if (
            not self.para
            and self.prefix.startswith("- ")
            and self.out
            and self.out[-1].endswith(" " + self.prefix[2:-2])
        ):
            tag = f"{self.prefix[2:-2]}, {tag}"  # entries with no text between: one entry of several tags
            self.out.pop()
            self.deeper = False
        if len(tag) <= 100:
            self.heading(level, tag, entry=True)
        else:
            self.end()
        self.prefix = f"- {tag}: "

    def item(self, bullet: str = "- ") -> None:
        self.end()
        self.prefix = bullet

    def start_code(self) -> None:
        self.end()
        if self.code is None:
            self.code = []

    def end_code(self) -> None:
        if self.code is not None:
            block = fenced(self.code)
            if block:
                self.out.append(block)
            self.code = None

    def row(self, cells: list[str]) -> None:
        self.end()
        cells = [" ".join(c.replace("|", "/").split()) for c in cells]
        if any(cells):
            self.out.append("| " + " | ".join(cells) + " |")

    def result(self) -> str:
        self.end()
        self.end_code()
        kept: list[str] = []
        for line in reversed(self.out):  # a heading with nothing under it (a list's section written again)
            level = len(line) - len(line.lstrip("#")) if _HEADING.match(line) else 0
            nxt = kept[-1] if kept else ""
            nxt_level = len(nxt) - len(nxt.lstrip("#")) if _HEADING.match(nxt) else 0
            if level and (not nxt or 0 < nxt_level <= level):
                continue
            kept.append(line)
        return re.sub(r"\n{3,}", "\n\n", "\n\n".join(reversed(kept))).strip()


def table(lines: list[str], start: int, page: Page, strings: dict[str, str]) -> int:
    """Read a tbl table whose ``.TS`` is at lines[start - 1]; returns the index after its ``.TE``."""
    i = start
    tab = "\t"
    # options (a line ending in ";"), then format lines up to one ending in "."
    if i < len(lines) and lines[i].rstrip().endswith(";"):
        if m := re.search(r"tab\s*\((.)\)", lines[i]):
            tab = m.group(1)
        i += 1
    while i < len(lines) and not lines[i].rstrip().endswith(".") and not lines[i].startswith(".TE"):
        i += 1
    i += 1
    cell_lines: list[str] | None = None
    cells: list[str] = []
    while i < len(lines):
        line = lines[i]
        i += 1
        if cell_lines is not None:  # inside a T{ ... T} text block
            if line.startswith("T}"):
                cells.append(" ".join(cell_lines))
                cell_lines = None
                rest = line[2:].lstrip(tab)
                if rest:
                    more = rest.split(tab)
                    cells += [plain(c, strings) for c in more]
                if not rest.endswith("T{"):
                    page.row(cells)
                    cells = []
            elif not line.startswith("."):
                cell_lines.append(plain(line, strings))
            continue
        if line.startswith(".TE"):
            break
        if line.startswith(".T&"):
            while i < len(lines) and not lines[i].rstrip().endswith("."):
                i += 1
            i += 1
            continue
        if line.startswith(".") or line.strip() in ("_", "=", ""):
            continue
        parts = line.split(tab)
        if parts[-1].endswith("T{"):
            cells = [plain(c, strings) for c in parts[:-1]] + ([parts[-1][:-2]] if parts[-1][:-2] else [])
            cell_lines = []
            continue
        page.row([plain(c, strings) for c in parts if c not in ("_", "=")])
    return i
