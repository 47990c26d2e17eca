"""A man page written in BSD's `mdoc` macros, read as a document (the `man` macros: man.py).

The title is ``.Nm``'s name and ``.Dt``'s section (``ssh-add(1)``); ``.Sh``/``.Ss`` are headings; an
entry of a tagged list (``.Bl -tag`` … ``.It Fl c`` … ``.El``) is a heading of its own one level below
its section, and its first paragraph names it (``- -c: Indicates that ...``); a bullet or numbered
list's ``.It`` is a list item; a column list's ``.It`` a table row; a literal display (``.Bd
-literal``, ``.Dl``) code. The semantic macros read as what they print: ``Fl c`` "-c", ``Ar file``
"file", ``Op Fl v`` "[-v]", ``Xr ls 1`` "ls(1)", ``Dq text`` “text”, ``Nm`` the page's name.
"""

from __future__ import annotations

from .roff import Page, args, branch, page_title, plain, request, sentence_case, table

# Macros that may be called on a line after another; the rest begin a line only.
_CALLABLE = set(
    "Ac Ad An Ao Ap Aq Ar At Bc Bo Bq Brc Bro Brq Bsx Bx Cd Cm Dc Do Dq Dv Dx Ec Em En Eo Er Es Ev Fa Fc Fl Fn "
    "Fo Fr Ft Fx Ic Li Lk Ms Mt Nm No Ns Nx Oc Oo Op Ox Pa Pc Pf Po Pq Qc Ql Qo Qq Sc Sh So Sq Ss St Sx Sy Ta "
    "Tn Ux Va Vt Xc Xo Xr Em Ex Rv Fd In Ft Ot Ud Lb %A %B %C %D %I %J %N %O %P %Q %R %T %U %V".split()
)
_ENCLOSE = {"Aq": "⟨⟩", "Bq": "[]", "Brq": "{}", "Dq": "“”", "Op": "[]", "Pq": "()", "Qq": '""', "Sq": "‘’",
            "Ql": "‘’"}  # fmt: skip
_OPEN = {"Ao": "⟨", "Bo": "[", "Bro": "{", "Do": "“", "Oo": "[", "Po": "(", "Qo": '"', "So": "‘"}
_CLOSE = {"Ac": "⟩", "Bc": "]", "Brc": "}", "Dc": "”", "Oc": "]", "Pc": ")", "Qc": '"', "Sc": "’"}
_NAMES = {"Bsx": "BSD/OS", "Bx": "BSD", "Dx": "DragonFly", "Fx": "FreeBSD", "Nx": "NetBSD", "Ox": "OpenBSD",
          "Ux": "UNIX", "At": "AT&T UNIX"}  # fmt: skip
_STANDARDS = {
    "-ansiC": "ANSI X3.159-1989 (“ANSI C89”)", "-isoC": "ISO/IEC 9899:1990 (“ISO C90”)",
    "-isoC-99": "ISO/IEC 9899:1999 (“ISO C99”)", "-isoC-2011": "ISO/IEC 9899:2011 (“ISO C11”)",
    "-p1003.1": "IEEE Std 1003.1 (“POSIX.1”)", "-p1003.1-2001": "IEEE Std 1003.1-2001 (“POSIX.1”)",
    "-p1003.1-2008": "IEEE Std 1003.1-2008 (“POSIX.1”)", "-p1003.2": "IEEE Std 1003.2 (“POSIX.2”)",
    "-susv2": "Version 2 of the Single UNIX Specification (“SUSv2”)",
    "-susv3": "Version 3 of the Single UNIX Specification (“SUSv3”)",
    "-susv4": "Version 4 of the Single UNIX Specification (“SUSv4”)", "-xpg4.2": "X/Open Portability Guide Issue 4.2",
}  # fmt: skip
_CLOSING = set(".,:;)]?!")
_OPENING = set("([")


def _is_macro(tok: str) -> bool:
    return tok in _CALLABLE


class _Line:
    """The words an mdoc line prints, joined with roff's spacing (no space before closing punctuation
    or after an opening bracket, none where ``Ns`` says)."""

    def __init__(self, name: str, strings: dict[str, str]) -> None:
        self.name = name
        self.strings = strings
        self.parts: list[str] = []
        self.nospace = False

    def word(self, w: str, literal: bool = False) -> None:
        w = w if literal else plain(w, self.strings)
        if not w:
            return
        if self.parts and not self.nospace and not (w in _CLOSING or (len(w) == 1 and w in _CLOSING)):
            if self.parts[-1] not in _OPENING:
                self.parts.append(" ")
        self.parts.append(w)
        self.nospace = False

    def glue(self) -> None:
        self.nospace = True

    def text(self) -> str:
        return "".join(self.parts)


def inline(tokens: list[str], name: str, strings: dict[str, str]) -> str:
    """What a line of mdoc macros and words prints."""
    line = _Line(name, strings)
    _run(tokens, 0, len(tokens), line)
    return line.text()


def _args_until_macro(tokens: list[str], i: int, end: int) -> int:
    j = i
    while j < end and not _is_macro(tokens[j]):
        j += 1
    return j


def _trailing_punct(tokens: list[str], i: int, end: int) -> int:
    """The end of an enclosure's content: before the punctuation that closes the line."""
    j = end
    while j > i and tokens[j - 1] in _CLOSING:
        j -= 1
    return j


def _run(tokens: list[str], i: int, end: int, line: _Line) -> None:
    while i < end:
        tok = tokens[i]
        i += 1
        if not _is_macro(tok):
            line.word(tok)
            continue
        if tok in _ENCLOSE:
            stop = _trailing_punct(tokens, i, end)
            a, b = _ENCLOSE[tok][0], _ENCLOSE[tok][1]
            line.word(a, literal=True)
            line.glue()
            _run(tokens, i, stop, line)
            line.glue()
            line.word(b, literal=True)
            i = stop
        elif tok in _OPEN:
            line.word(_OPEN[tok], literal=True)
            line.glue()
        elif tok in _CLOSE:
            line.glue()
            line.word(_CLOSE[tok], literal=True)
        elif tok == "Fl":
            j = _args_until_macro(tokens, i, end)
            words = [t for t in tokens[i:j] if t not in _CLOSING]
            if not words:
                line.word("-", literal=True)
                if j < end and tokens[j] in ("Ar", "Cm", "Fl"):
                    line.glue()
            for t in tokens[i:j]:
                line.word(t if t in _CLOSING else "-" + plain(t, line.strings), literal=True)
            i = j
        elif tok == "Ar":
            j = _args_until_macro(tokens, i, end)
            if not [t for t in tokens[i:j] if t not in _CLOSING]:
                line.word("file ...", literal=True)
            _run(tokens, i, j, line)
            i = j
        elif tok == "Nm":
            j = _args_until_macro(tokens, i, end)
            if not [t for t in tokens[i:j] if t not in _CLOSING]:
                line.word(line.strings.get("\0name", ""), literal=True)
        elif tok == "Xr":
            j = _args_until_macro(tokens, i, end)
            ref = tokens[i:j]
            if ref:
                line.word(plain(ref[0], line.strings) + (f"({ref[1]})" if len(ref) > 1 else ""), literal=True)
                for t in ref[2:]:
                    line.word(t)
            i = j
        elif tok in ("Fn", "Fo"):
            j = _args_until_macro(tokens, i, end)
            stop = _trailing_punct(tokens, i, j)
            fn = tokens[i:stop]
            if fn:
                call = f"{fn[0]}({', '.join(fn[1:])}" + (")" if tok == "Fn" else "")
                line.word(plain(call, line.strings), literal=True)
            i = stop
        elif tok == "Fc":
            line.glue()
            line.word(")", literal=True)
        elif tok in ("Ns", "Ap"):
            line.glue()
            if tok == "Ap":
                line.word("'", literal=True)
                line.glue()
        elif tok == "Pf":
            if i < end:
                line.word(tokens[i])
                line.glue()
                i += 1
        elif tok in _NAMES:
            j = _args_until_macro(tokens, i, end)
            version = [t for t in tokens[i:j] if t not in _CLOSING]
            line.word(_NAMES[tok] + (" " + " ".join(version) if version else ""), literal=True)
            i += len(version)
        elif tok == "St":
            if i < end:
                line.word(_STANDARDS.get(tokens[i], tokens[i].lstrip("-")), literal=True)
                i += 1
        elif tok == "Ex":
            name = line.strings.get("\0name", "")
            line.word(f"The {name} utility exits 0 on success, and >0 if an error occurs.", literal=True)
            i = _args_until_macro(tokens, i, end)
        elif tok == "Rv":
            j = _args_until_macro(tokens, i, end)
            fns = [t for t in tokens[i:j] if t != "-std"] or [line.strings.get("\0name", "")]
            line.word(
                f"The {', '.join(f + '()' for f in fns)} function returns the value 0 if successful; otherwise the "
                "value -1 is returned and the global variable errno is set to indicate the error.",
                literal=True,
            )
            i = j
        elif tok == "In":
            if i < end:
                line.word(f"#include <{tokens[i]}>", literal=True)
                i += 1
        elif tok in ("Ta", "Xo", "Xc", "Ec", "Eo", "Es", "En", "Ot", "Ud", "Lb"):
            pass
        # every other macro prints its arguments as they are (Pa, Ev, Cm, Ic, Li, Sy, Em, Dv, Er ...)


def _split_cells(tokens: list[str], strings: dict[str, str]) -> list[str]:
    cells: list[list[str]] = []
    cur: list[str] = []
    for t in tokens:
        if t == "Ta" or t == "\t":
            cells.append(cur)
            cur = []
        else:
            cur.append(t)
    cells.append(cur)
    return [inline(c, "It", strings) for c in cells]


def read_mdoc(lines: list[str], fallback_title: str) -> tuple[str, str]:
    page = Page()
    strings: dict[str, str] = {}
    name = section = ""
    name_desc = ""
    sec_level = 2
    lists: list[str] = []  # the open lists' kinds: "tag", "item", "column"
    skip_else = False
    in_name = in_synopsis = False
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line[:1] not in ".'":
            if page.code is not None:
                page.text(plain(line, strings))
            else:
                page.text(plain(line, strings) if line.strip() else "")
            continue
        req = request(line)
        if req is None:
            continue
        mac, rest = req
        if mac in ("if", "ie", "el"):
            i, skip_else = branch(mac, rest, lines, i, skip_else)
            continue
        toks = args(rest.replace("\t", " Ta ")) if lists and lists[-1] == "column" else args(rest)
        if mac == "Dt":
            section = toks[1].lower() if len(toks) > 1 else ""
            if not name and toks:
                name = toks[0].lower() if toks[0].isupper() else toks[0]
        elif mac in ("Sh", "Ss"):
            page.end_code()
            lists.clear()
            sec_level = 2 if mac == "Sh" else 3
            head = inline(toks, mac, strings)
            in_name = mac == "Sh" and head.upper() == "NAME"
            in_synopsis = mac == "Sh" and head.upper() == "SYNOPSIS"
            page.heading(sec_level, sentence_case(head))
        elif mac == "Nm" and (in_name or in_synopsis):
            if in_name and toks and not strings.get("\0name"):
                strings["\0name"] = plain(toks[0], strings)
            if in_synopsis:
                page.end()  # each form of the command on a line of its own
            page.text(inline([mac, *toks], mac, strings))
        elif mac == "Nd":
            name_desc = inline(toks, mac, strings)
            page.text("— " + name_desc)
        elif mac in ("Pp", "Lp", "sp", "br"):
            if page.code is None:
                page.end()
        elif mac == "Bl":
            page.end()
            kind = "tag"
            if any(t in ("-bullet", "-dash", "-hyphen", "-enum", "-item") for t in toks):
                kind = "item"
            elif "-column" in toks:
                kind = "column"
            lists.append(kind)
        elif mac == "El":
            page.end()
            if lists:
                lists.pop()
            if not lists:
                page.back_to_section()
        elif mac == "It":
            kind = lists[-1] if lists else "tag"
            if kind == "item":
                page.item()
                if toks:
                    page.text(inline(toks, mac, strings))
            elif kind == "column":
                page.row(_split_cells(toks, strings))
            else:
                tag = inline(toks, mac, strings)
                while "Xo" in toks and "Xc" not in toks and i < len(lines):  # a tag continued on lines below
                    more = lines[i]
                    i += 1
                    macro_line = request(more) is not None
                    toks = args(more[1:]) if macro_line else [more]
                    tag += " " + (inline(toks, "It", strings) if macro_line else plain(more, strings))
                    tag = " ".join(tag.split())
                page.entry(min(6, sec_level + len(lists)), tag)
        elif mac in ("Bd",):
            page.end()
            if any(t in ("-literal", "-unfilled") for t in toks):
                page.start_code()
        elif mac == "Ed":
            page.end_code()
            page.end()
        elif mac == "Dl":
            page.start_code()
            page.text(inline(toks, mac, strings))
            page.end_code()
        elif mac == "D1":
            page.end()
            page.text(inline(toks, mac, strings))
            page.end()
        elif mac == "TS":
            i = table(lines, i, page, strings)
        elif mac == "ds" and toks:
            strings[toks[0]] = plain(rest[len(toks[0]) :].strip().lstrip('"'), strings)
        elif mac in _CALLABLE and mac not in ("Sh", "Ss"):
            text = inline([mac, *toks], mac, strings)
            if page.code is not None:
                page.text(text)
            elif text:
                if toks and toks[-1] == "Ns" or mac == "Pf" and len(toks) == 1:
                    page.text(text)
                    page.glue = True
                else:
                    page.text(text)
        elif mac in ("Dd", "Os", "Bk", "Ek", "Bf", "Ef", "Sm", "Rs", "Re", "An", "nr", "ad", "na", "hy", "nh"):
            pass
    title = page_title(strings.get("\0name", name), section, "") or fallback_title
    return title, page.result()
