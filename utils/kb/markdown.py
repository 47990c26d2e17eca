"""Markdown read as a document (markdown-it-py, the CommonMark parser Rich already depends on).

* YAML front matter (``---`` … ``---`` at the top) is metadata, never text: its ``title`` is the
  document's title. Otherwise the title is the first heading outside code.
* Headings become the structured readers' heading lines (utils/kb/structure.py); links read as
  their text, images and HTML (comments, tags) are dropped, ``**``/``_`` emphasis markers too;
  backticks around code names stay. List items keep a ``- `` marker, table rows read
  ``| a | b |``, fenced and indented code becomes a fenced block.
* A MyST directive's fence (```` ```{note} ````) is read like the reST directive: a note, a tab or a
  version note as prose ("Note: ...", "New in version 22.1: ..."), a table of contents as nothing;
  any other stays code.
* A MyST role (``{term}`wheel```, Markdown's form of reST's ``:term:`wheel```) reads as reST's
  does (utils/kb/rst.py, ``role_text``): no braces, a cross-reference as its words.
* An HTML comment that holds YAML metadata (its first word is ``YAML``; a documentation generator's
  "added in / changed in" notes) reads as its ``key: value`` lines, addresses left out: it is the
  only place such a page says when something appeared.
"""

from __future__ import annotations

import re
import threading

from ..text import FENCE
from .rst import VERSION_NOTES, role_text
from .structure import heading_line

_FRONT = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*$\n?", re.M | re.S)
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.M)
_YAML_COMMENT = re.compile(r"^<!--[ \t]*YAML\b(.*?)-->", re.S)
_LEFT_REF = re.compile(r"\[([^\]\n]+)\]\[[^\]\n]*\]")  # a reference link whose definition is missing
# "<count>", "<file name>": a placeholder in prose or a heading that CommonMark takes for an HTML tag.
_HTML_TAGS = frozenset(
    """a abbr b bdi bdo br cite code data del dfn em font i img ins kbd mark q rp rt ruby s samp small span
    strike strong sub sup time tt u var wbr div p details summary big center""".split()
)
_TAG_NAMES = "|".join(sorted(_HTML_TAGS, key=len, reverse=True))
_MYST_ROLE = re.compile(r"\{([A-Za-z][\w.+-]*(?::[\w.+-]+)?)\}$")  # "{term}" right before a code span
# A MyST directive is a fence named in braces ("```{note}"). A note, a tab or a version note is prose of
# the page, read like reST's ("Note: ...", "New in version 22.1: ..."); a table of contents is no text;
# any other (a command session, code) stays a fenced block.
_MYST_DIRECTIVE = re.compile(r"^\{([\w-]+)\}\s*(.*)$")
_MYST_LABELS = {n: n.capitalize() for n in "note warning tip important caution attention danger error hint".split()}
_MYST_LABELS["seealso"] = "See also"
_MYST_TITLED = {"admonition", "tab", "tab-item", "dropdown", "topic", "sidebar"}  # the argument is the title
_MYST_SKIP = {"toctree", "contents", "include"}
_MYST_OPTIONS = re.compile(r"\A(?:[ \t]*:[\w-]+:[^\n]*\n)+|\A\s*---\n(?s:.*?)\n---\n")  # ":class: tip" lines, or YAML
_PLACEHOLDER = re.compile(r"</?(?!(?:" + _TAG_NAMES + r")\b)[A-Za-z][\w.-]*>")
_KEY = re.compile(r"^[\w-]+:(?:\s|$)")
_URL_VALUE = re.compile(r"^\s*(?:-\s*)?[\w-]+:\s*\S+://\S*\s*$")

_local = threading.local()


def _parser():
    md = getattr(_local, "md", None)
    if md is None:
        from markdown_it import MarkdownIt

        md = _local.md = MarkdownIt("commonmark", {"html": True}).enable("table")
    return md


def front_matter(text: str) -> tuple[str, str]:
    """(title from the front matter or "", the text without it)."""
    m = _FRONT.match(text)
    if not m:
        return "", text
    t = _FRONT_TITLE.search(m.group(1))
    title = t.group(1).strip().strip("'\"") if t else ""
    return title, text[m.end() :]


def _inline(children) -> str:
    out: list[str] = []
    for c in children or ():
        if c.type == "text":
            out.append(c.content)
        elif c.type == "code_inline":
            role = _MYST_ROLE.search(out[-1]) if out else None
            if role:  # {term}`wheel`
                out[-1] = out[-1][: role.start()]
                shown, prose = role_text(role.group(1), c.content)
                out.append(shown if prose else f"`{shown}`")
            else:
                out.append(f"`{c.content}`")
        elif c.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif c.type == "html_inline" and c.content.lower().startswith("<sup"):
            out.append("^")
        elif c.type == "html_inline" and _PLACEHOLDER.fullmatch(c.content):
            out.append(c.content)  # a placeholder such as <count> or <pid>, not an HTML tag
        # links read as their text (their children are the text tokens around link_open/close);
        # images, other inline HTML and emphasis markers are dropped
    return _LEFT_REF.sub(r"\1", "".join(out)).strip()


def _yaml_comment(html: str) -> list[str]:
    """A YAML metadata comment as sentences: one per top-level key with a value and one per list item
    ("version: v2.0; description: ..."); keys without a value and addresses are left out."""
    m = _YAML_COMMENT.match(html.strip())
    if not m:
        return []
    items: list[list[str]] = []
    for line in m.group(1).splitlines():
        if not line.strip() or _URL_VALUE.match(line):
            continue
        stripped = line.strip()
        if stripped.startswith("- ") or not line[:1].isspace():
            stripped = stripped[2:] if stripped.startswith("- ") else stripped
            if stripped.endswith(":"):
                continue  # a key that only opens a list
            items.append([stripped])
        elif items and _KEY.match(stripped):
            items[-1].append(stripped)
        elif items:  # a long value goes on over the next lines
            items[-1][-1] += " " + stripped.strip("'\"")
    sentences = [_inline(_parser().parseInline("; ".join(parts))[0].children).rstrip(".") + "." for parts in items]
    return [" ".join(sentences)] if sentences else []


def _myst(info: str, content: str) -> list[str] | None:
    """A fence's blocks when it is a MyST directive of prose ("Note: text"), [] for one that is no
    text, None for code (any other fence)."""
    directive = _MYST_DIRECTIVE.match(info.strip())
    if not directive:
        return None
    name, arg = directive.group(1), directive.group(2).strip()
    if name in _MYST_SKIP:
        return []
    if name in VERSION_NOTES:
        label = f"{VERSION_NOTES[name]} {arg}".strip()
    elif name in _MYST_LABELS:
        label = _MYST_LABELS[name]
    elif name in _MYST_TITLED:
        label = arg
    else:
        return None
    body = read_markdown(_MYST_OPTIONS.sub("", content, count=1), "")[1].split("\n\n") if content.strip() else []
    body = [b for b in body if b]
    if not label:
        return body
    if body and not body[0].startswith(("#", FENCE, "|", "- ")):
        return [f"{label}{' ' if label[-1] in '.:?!' else ': '}{body[0]}", *body[1:]]
    return [label if label[-1] in ".:?!" else f"{label}.", *body]


def read_markdown(text: str, fallback_title: str) -> tuple[str, str]:
    """(title, text in the structured readers' form)."""
    title, body = front_matter(text)
    tokens = _parser().parse(body)
    blocks: list[str] = []
    prefix: list[str] = []  # list markers waiting for their item's first paragraph
    row: list[str] | None = None
    heading_level = 0
    ordered: list[int] = []  # counters of the open ordered lists (0 for a bullet list)
    for tok in tokens:
        t = tok.type
        if t == "heading_open":
            heading_level = int(tok.tag[1])
        elif t == "inline" and heading_level:
            text_ = _inline(tok.children)
            if not title and text_:
                title = text_.replace("`", "")
            blocks.append(heading_line(heading_level, text_))
            heading_level = 0
        elif t in ("bullet_list_open", "ordered_list_open"):
            ordered.append(int(tok.attrs.get("start", 1)) if t == "ordered_list_open" else 0)
        elif t in ("bullet_list_close", "ordered_list_close"):
            ordered.pop()
        elif t == "list_item_open":
            if ordered and ordered[-1]:
                prefix.append(f"{ordered[-1]}. ")
                ordered[-1] += 1
            else:
                prefix.append("- ")
        elif t == "tr_open":
            row = []
        elif t == "tr_close" and row is not None:
            blocks.append("| " + " | ".join(row) + " |")
            row = None
        elif t == "inline" and row is not None:
            row.append(_inline(tok.children))
        elif t == "inline":
            text_ = _inline(tok.children)
            if text_:
                blocks.append("".join(prefix) + text_ if prefix else text_)
                prefix.clear()
        elif t == "fence" and (prose := _myst(tok.info, tok.content)) is not None:
            blocks += prose
            prefix.clear()
        elif t in ("fence", "code_block"):
            code = tok.content.rstrip("\n")
            if code.strip():
                info = (tok.info or "").split()[:1] if t == "fence" else []
                blocks.append(f"{FENCE}{info[0] if info else ''}\n{code}\n{FENCE}")
            prefix.clear()
        elif t == "html_block":
            blocks += _yaml_comment(tok.content)
    return title or fallback_title, "\n\n".join(b for b in blocks if b)
