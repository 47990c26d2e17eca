"""Which of the files a walk found say what another already says, so each page is read once.

* Renderings of one page: a doc set ships a page as HTML beside its source (``git-svn.html`` and
  ``git-svn.txt``; ``fs.html`` and ``fs.md.gz``; Sphinx's ``a/b.html`` and ``_sources/a/b.rst.txt``).
  The HTML is read (what a reader of the doc set sees, includes and generated parts resolved) and the
  source is passed over: both in the index would make every passage come twice, cited twice.
* A stub page: an HTML page that only sends the reader on ("this page has moved to ...", a meta
  refresh to another address, a line or two with a link to the new edition) is passed over: it holds
  nothing to answer from and, read, it would be cited over the page it points to.
* A man page that only includes another (``.so man1/other.1``) that is read too, and the parts of a
  split info manual (``find.info-1``) whose first file (``find.info``) is read, which reads them.

Each is reported as passed over with its reason (utils/cli/kb.py prints one line per reason).
"""

from __future__ import annotations

import re
from pathlib import Path

RENDERING = "the source of an HTML page that is read (one rendering of each page is read)"
STUB = "a stub page that only points to another page (moved, or a new edition)"
MAN_ALIAS = "a man page that only includes another man page that is read"
INFO_PART = "a part of an info manual that is read whole from its first file"

_STUB_BYTES = 32768  # a page larger than this is no stub
_STUB_WORDS = 60
_REFRESH = re.compile(rb"<meta[^>]+http-equiv\s*=\s*[\"']?refresh[^>]+url\s*=", re.I)
_MOVED = re.compile(
    r"\b(?:moved|relocated|redirect(?:ed|ing)?|new (?:location|home|address|edition|version)|"
    r"no longer (?:maintained|here|available|updated)|has been (?:replaced|superseded|retired|archived)|"
    r"superseded|now (?:lives|located|available) (?:at|on|in))\b",
    re.I,
)


def is_stub(data: bytes) -> bool:
    """Whether an HTML page only sends its reader elsewhere: a meta refresh to another address, or a
    few words about the page having moved (or a newer edition) with a link."""
    if len(data) > _STUB_BYTES:
        return False
    if _REFRESH.search(data[:4096]):
        return True
    if b"<a" not in data.lower():
        return False
    from lxml import etree, html

    try:
        root = html.document_fromstring(data)
    except (etree.ParserError, ValueError):
        return False
    etree.strip_elements(root, "script", "style", "template", "head", etree.Comment, with_tail=False)
    words = root.text_content().split()
    return 0 < len(words) <= _STUB_WORDS and bool(_MOVED.search(" ".join(words)))


def _head(path: Path, n: int) -> bytes:
    from .readers import COMPRESSED, decompress

    try:
        if path.stat().st_size > (n if not path.name.endswith(COMPRESSED) else n // 2):
            return b""
        data = path.read_bytes()
        return decompress(data) if path.name.lower().endswith(COMPRESSED) else data
    except Exception:  # noqa: BLE001 - an unreadable file is reported when it is read
        return b""


def _sphinx_page(f: Path, stem: str) -> Path | None:
    """The HTML page a Sphinx source (``<root>/_sources/a/b.rst.txt``) was built into."""
    parts = f.parts
    if "_sources" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("_sources")
    return Path(*parts[:i], *parts[i + 1 : -1], stem + ".html")


def one_each(walk):
    """The walk (kb/walk.py) with the files that repeat another, or point to one, moved to passed_over."""
    from .man import alias
    from .readers import COMPRESSED, _stem, kind_of

    files: list[Path] = walk.files
    kinds = {f: kind_of(f)[0] for f in files}
    html = {f for f, k in kinds.items() if k == "html"}
    pages = {(f.parent, _stem(f)) for f in html} | {(f.parent, f.name.rsplit(".", 1)[0]) for f in html}
    present = set(files)
    names = {(f.parent, f.name[: -len(COMPRESSED)] if f.name.endswith(COMPRESSED) else f.name) for f in files}
    kept: list[Path] = []
    for f in files:
        kind = kinds[f]
        stem = _stem(f)
        why = ""
        if kind in ("text", "markdown", "rst", "asciidoc"):
            if (f.parent, stem) in pages or (page := _sphinx_page(f, stem)) is not None and page in present:
                why = RENDERING
        elif kind == "html" and is_stub(_head(f, _STUB_BYTES)):
            why = STUB
        elif kind == "man" and (src := _head(f, 4096)):
            target = alias(src.decode("utf-8", "replace"))
            if target and _target_present(f, target, names):
                why = MAN_ALIAS
        elif kind == "info" and re.search(r"\.info-\d+$", f.name.removesuffix(COMPRESSED)):
            first = re.sub(r"-\d+$", "", f.name.removesuffix(COMPRESSED))
            if (f.parent, first) in names:
                why = INFO_PART
        if why:
            walk.passed_over.append((str(f), why))
        else:
            kept.append(f)
    walk.files = kept
    return walk


def _target_present(f: Path, target: str, names: set[tuple[Path, str]]) -> bool:
    """Whether the page a ``.so`` line names (relative to the man folder, or beside) is being read."""
    t = Path(target)
    for base in (f.parent.parent, f.parent):
        where = base / t.parent
        if (where, t.name) in names:
            return True
    return False
