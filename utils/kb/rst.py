"""reStructuredText read as a document, through docutils' own parser.

Sphinx sources use roles and directives docutils does not know (``:func:``, ``.. versionadded::``,
``.. code-block::``); each one met in a file is registered before parsing with a generic handler, so
no markup and no error message reaches the text: a role reads as its text (``:ref:`words <target>```
as "words", ``:func:`~a.b``` as `` `b` ``, ``:pep:`8``` as "PEP 8"; ``:ref:`a-label``` as the title
of the section it labels when the file has it, else as the label's words), a code directive becomes
fenced code, a version note reads "New in version 3.2: ...", other directives keep their argument
and content. Files are never included (``.. include::``, raw input off) and reports are silenced
(report and halt level 5).

The doctree is then written in the structured readers' form: section titles as heading lines,
literal blocks as fenced code, list items with ``- ``, table rows ``| a | b |``, field lists
"name: value", inline literals in backticks.
"""

from __future__ import annotations

import io
import re
import threading

from .structure import as_text, fenced, heading_line

_ROLE = re.compile(r":([A-Za-z][\w.+-]*(?::[\w.+-]+)?):`")
_DIRECTIVE = re.compile(r"^\s*\.\.\s+([A-Za-z][\w.+-]*(?::[\w.+-]+)?)::", re.M)
_TARGET = re.compile(r"^(.*?)\s*<[^<>]*>$", re.S)
_CODE_DIRECTIVES = {"code-block", "sourcecode", "literalinclude", "highlight", "productionlist", "doctest", "testcode"}
VERSION_NOTES = {
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "versionremoved": "Removed in version",
}
_PROSE_ROLES = {
    "ref",
    "doc",
    "term",
    "numref",
    "any",
    "abbr",
    "dfn",
    "pep",
    "rfc",
    "download",
    "guilabel",
    "menuselection",
}
_SKIP_DIRECTIVES = {"toctree", "index", "highlight", "currentmodule", "moduleauthor", "sectionauthor", "tabularcolumns"}
_PROBLEM_MARKUP = re.compile(r"^(?::[\w.:+-]+:)?`+|`+(?::[\w.:+-]+:)?_*$|^\||\|_*$")
_lock = threading.Lock()
_registered: set[str] = set()


def _shown(text: str) -> str:
    """What a cross-reference role shows: "words <target>" -> words, "~a.b.c" -> c, "!x" -> x."""
    m = _TARGET.match(text)
    if m and m.group(1):
        return m.group(1)
    if text.startswith("~"):
        return text[1:].rsplit(".", 1)[-1]
    return text.lstrip("!")


_INVENTORY = re.compile(r"^[a-z][\w-]*:(?=\S)")  # "pypug:wheel": a term in another project's glossary


def role_text(name: str, text: str) -> tuple[str, bool]:
    """(what a role shows, whether it reads as words rather than as code): ":term:`pypug:wheel`" ->
    ("wheel", True), ":func:`~os.path.join`" -> ("join", False)."""
    role = name.split(":")[-1]
    if role in ("pep", "rfc") and not _TARGET.match(text):  # ":pep:`585`" reads "PEP 585", as Sphinx shows it
        return f"{role.upper()} {text.split('#')[0]}", True
    if role in _PROSE_ROLES:
        return _INVENTORY.sub("", _shown(text), count=1), True
    return _shown(text), False


_LABEL_ROLES = {"ref", "numref"}  # a label with no words of its own shows the title of what it labels


def _generic_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    from docutils import nodes

    shown, prose = role_text(name, text)
    if name.split(":")[-1] in _LABEL_ROLES and not _TARGET.match(text):
        # resolved when the text is written (_inline): the title of the section the label names, when
        # this file has it; otherwise the label's words, not its slug ("copy-operations" -> "copy operations")
        node = nodes.inline(rawtext, " ".join(re.split(r"[-_\s]+", shown)).strip())
        node["label"] = shown
        return [node], []
    return [nodes.Text(shown) if prose else nodes.literal(rawtext, shown)], []


def _labelled(node) -> str:
    """The title of the section a label in this document names, or ''."""
    from docutils import nodes

    doc = node.document
    ident = doc.nameids.get(nodes.fully_normalize_name(node["label"])) if doc is not None else None
    target = doc.ids.get(ident) if ident else None
    title = target.next_node(nodes.title) if isinstance(target, nodes.section) else None
    return " ".join(_inline(title).split()) if title is not None else ""


def _directive_class():
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives

    class AnyOptions(dict):
        def __missing__(self, key):
            return directives.unchanged

    class Generic(Directive):
        required_arguments = 0
        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True
        option_spec = AnyOptions({"class": directives.unchanged})

        def run(self):
            name = self.name.split(":")[-1].lower()
            arg = " ".join(self.arguments).strip()
            if name in _SKIP_DIRECTIVES:
                return []
            if name in _CODE_DIRECTIVES:
                code = "\n".join(self.content)
                return [nodes.literal_block(code, code)] if code.strip() else []
            box = nodes.container()
            if name in VERSION_NOTES:
                version, rest = (arg.split(None, 1) + ["", ""])[:2]
                para = nodes.paragraph(text=f"{VERSION_NOTES[name]} {version}" + (": " if rest.strip() else "."))
                if rest.strip():
                    inline, _msgs = self.state.inline_text(" ".join(rest.split()), self.lineno)
                    para += inline
                box += para
            elif arg:
                para = nodes.paragraph()
                para += self.state.inline_text(" ".join(arg.split()), self.lineno)[0]
                box += para
            if self.content:
                self.state.nested_parse(self.content, self.content_offset, box)
            return [box]

    return Generic


def _register(text: str) -> None:
    """Register a generic handler for each role and directive the text uses that docutils lacks."""
    from docutils.parsers.rst import directives, roles

    with _lock:
        generic = None
        for name in set(_ROLE.findall(text)) - _registered:
            if name not in roles._role_registry and name not in roles._roles:  # noqa: SLF001
                roles.register_local_role(name, _generic_role)
            _registered.add(name)
        for name in set(_DIRECTIVE.findall(text)) - _registered:
            if name in _CODE_DIRECTIVES or (
                name not in directives._directive_registry and name not in directives._directives  # noqa: SLF001
            ):
                generic = generic or _directive_class()
                directives.register_directive(name, generic)
            _registered.add(name)


_SETTINGS = {
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": None,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "doctitle_xform": False,
    "sectsubtitle_xform": False,
    "syntax_highlight": "none",
    "input_encoding": "unicode",
    "character_level_inline_markup": False,
}


def _inline(node) -> str:
    from docutils import nodes

    out: list[str] = []
    for c in node.children:
        if isinstance(c, nodes.Text):
            out.append(str(c))
        elif isinstance(c, nodes.literal):
            out.append(f"`{c.astext()}`")
        elif isinstance(
            c, (nodes.system_message, nodes.target, nodes.footnote_reference, nodes.substitution_definition)
        ):
            continue
        elif isinstance(c, nodes.problematic):
            out.append(_PROBLEM_MARKUP.sub("", c.astext()))
        elif isinstance(c, nodes.image):
            continue
        elif isinstance(c, nodes.inline) and c.get("label"):
            out.append(_labelled(c) or c.astext())
        else:
            out.append(_inline(c))
    return "".join(out)


def _blocks(node, depth: int, out: list[str], prefix: str = "") -> None:
    """Append the node's blocks; `prefix` goes before its first paragraph (a list marker)."""
    from docutils import nodes

    for c in node.children:
        if isinstance(c, (nodes.system_message, nodes.comment, nodes.target, nodes.substitution_definition)):
            continue
        if isinstance(c, (nodes.raw, nodes.image, nodes.figure)) and not isinstance(c, nodes.figure):
            continue
        if isinstance(c, nodes.section):
            title = c.next_node(nodes.title)
            if title is not None:
                out.append(heading_line(depth + 1, _inline(title)))
            _blocks(c, depth + 1, out)
        elif isinstance(c, nodes.title):
            if not isinstance(node, nodes.section):
                out.append(as_text(" ".join(_inline(c).split())))
        elif isinstance(c, (nodes.paragraph, nodes.rubric, nodes.term, nodes.attribution, nodes.caption)):
            text = " ".join(_inline(c).split())
            if text:
                out.append(as_text(prefix + text))
                prefix = ""
        elif isinstance(c, (nodes.literal_block, nodes.doctest_block)):
            block = fenced(c.astext().split("\n"))
            if block:
                out.append(block)
        elif isinstance(c, (nodes.bullet_list, nodes.enumerated_list)):
            for n, item in enumerate(c.children, 1):
                mark = f"{n}. " if isinstance(c, nodes.enumerated_list) else "- "
                _blocks(item, depth, out, mark)
        elif isinstance(c, nodes.field):
            name = " ".join(_inline(c[0]).split())
            body: list[str] = []
            _blocks(c[1], depth, body)
            out.append(as_text(f"{name}: {' '.join(body)}" if body else name))
        elif isinstance(c, nodes.option_list_item):
            opts = ", ".join(o.astext() for o in c[0].children)
            body = []
            _blocks(c[1], depth, body) if len(c) > 1 else None
            out.append(as_text(f"{opts} {' '.join(body)}".strip()))
        elif isinstance(c, nodes.row):
            cells = [" ".join(e.astext().split()) for e in c.children]
            if any(cells):
                out.append("| " + " | ".join(cells) + " |")
        elif isinstance(c, nodes.line):
            text = " ".join(_inline(c).split())
            if text:
                out.append(as_text(text))
        elif isinstance(c, nodes.Admonition) and not isinstance(c, nodes.admonition):
            inner: list[str] = []
            _blocks(c, depth, inner)
            label = c.tagname.capitalize()
            if inner and not inner[0].startswith(("```", "#", "|")):
                inner[0] = f"{label}: {inner[0]}"
            out += inner
        elif isinstance(c, nodes.Element):
            _blocks(c, depth, out, prefix)
            prefix = ""


def read_rst(text: str, fallback_title: str) -> tuple[str, str]:
    """(title, text in the structured readers' form). The title is the first section title."""
    from docutils import nodes
    from docutils.core import publish_doctree

    _register(text)
    settings = dict(_SETTINGS, warning_stream=io.StringIO())
    doc = publish_doctree(text, settings_overrides=settings)
    title = doc.next_node(nodes.title)
    out: list[str] = []
    _blocks(doc, 0, out)
    head = " ".join(_inline(title).replace("`", "").split()) if title is not None else ""
    return head or fallback_title, "\n\n".join(b for b in out if b)
