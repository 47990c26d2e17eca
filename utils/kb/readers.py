"""Reading files for the knowledge base, each kind as a document: Markdown (utils/kb/markdown.py),
reStructuredText through docutils (rst.py), AsciiDoc (asciidoc.py), HTML through the page extractor
with its headings, code and own title kept (html_doc.py), plain text with a help file's sections
(plaintext.py; a .txt that is AsciiDoc source is read as AsciiDoc), man pages in either macro set
(man.py, mdoc.py), GNU info manuals (info.py), PDF through the one PDF reader; a gzip-compressed
file (``name.md.gz``) is read as the kind its inner suffix names. Which files of a folder are read:
utils/kb/walk.py. Bytes are decoded by utils.web.decode, the same decoder the crawler uses.

What a file is (`document_kind`) is read from its name when the name says it (``.md``, ``.html``;
``.1`` … ``.9`` and ``.info`` are confirmed by the content), and from its content when the name
has no file type (``NEWS``, ``README.Debian``, ``changelog.gz``, ``find.info-1.gz``): a PDF, an
HTML page, a man page, an info manual, or text (plaintext.looks_like_prose); a name that is a known
type of another kind (``.json``, ``.css``, ``.png``) is not opened.

A structured reader's text marks headings and code one way (utils/kb/structure.py), from which each
chunk gets its heading path."""

from __future__ import annotations

import gzip
import io
import logging
import re
import zlib
from collections.abc import Iterable
from pathlib import Path

from ..errors import KBError, PdfUnreadable
from ..text import composed
from .limits import TEXT_CAP, capped_text, read_head

log = logging.getLogger(__name__)

FILE_TYPES = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".rest": "rst",
    ".rst.txt": "rst",  # Sphinx publishes its sources as name.rst.txt
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}
KIND_NAMES = {  # what `kb ingest` calls each kind when it counts what it read
    "man": ("man page", "man pages"),
    "info": ("info manual", "info manuals"),
    "html": ("HTML", "HTML"),
    "pdf": ("PDF", "PDF"),
    "markdown": ("Markdown", "Markdown"),
    "rst": ("reStructuredText", "reStructuredText"),
    "asciidoc": ("AsciiDoc", "AsciiDoc"),
    "text": ("text", "text"),
}
_MAN_SUFFIX = re.compile(r"\.(?:[1-9][a-z0-9]{0,6}|n|l)$")  # ls.1, printf.3p, ssl.1ssl, Tcl's .n
_INFO_SUFFIX = re.compile(r"\.info(?:-\d+)?$")
# Document formats whose markup no reader here reads: their text would come with it, so they are not
# read as text either (`kb ingest` names them as skipped: utils/cli/ingest_notes.py).
MARKUP_NOT_READ = frozenset(".org .tex .rtf .doc .docx .odt .epub .ipynb .xhtml .mdx".split())
SNIFF_BYTES = 65536
COMPRESSED = ".gz"
MAX_DECOMPRESSED = 64 * 1024 * 1024  # a compressed document may not unpack to more (a gzip bomb)


def _suffix(name: str) -> str:
    """The file's type suffix, the two-part one (".rst.txt") first; "" if none."""
    name = name.lower()
    for suf in FILE_TYPES:
        if suf.count(".") == 2 and name.endswith(suf) and len(name) > len(suf):
            return suf
    i = name.rfind(".")
    return name[i:] if i > 0 else ""


def kind_of(path: Path) -> tuple[str | None, bool]:
    """(kind, compressed): the reader a file's name sends it to (None: the name does not say), and
    whether it is gzipped."""
    name = path.name
    compressed = name.lower().endswith(COMPRESSED) and len(name) > len(COMPRESSED)
    if compressed:
        name = name[: -len(COMPRESSED)]
    kind = FILE_TYPES.get(_suffix(name))
    if kind is None and _MAN_SUFFIX.search(name):
        kind = "man"
    elif kind is None and _INFO_SUFFIX.search(name):
        kind = "info"
    return kind, compressed


def typed_elsewhere(name: str) -> bool:
    """Whether a name ends in a file type that is not a document's (``.json``, ``.css``, ``.png``):
    such a file is not opened. ``README.Debian``, ``NEWS``, ``INSTALL.unix`` name no type."""
    import mimetypes

    i = name.rfind(".")
    if i <= 0:
        return False
    if name[i:].lower() in MARKUP_NOT_READ:
        return True
    return mimetypes.MimeTypes().guess_type("x" + name[i:].lower(), strict=False)[0] is not None


def _head(path: Path, compressed: bool) -> bytes:
    try:
        with path.open("rb") as f:
            data = f.read(SNIFF_BYTES if not compressed else SNIFF_BYTES // 2)
    except OSError:
        return b""
    if compressed:
        try:
            data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, SNIFF_BYTES)
        except zlib.error:
            return b""
    return data


def sniff(head: bytes) -> str | None:
    """The kind of document these first bytes open: "pdf", "html", "man", "info", "text", or None."""
    from .man import looks_like_roff
    from .plaintext import looks_like_prose

    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:512].lower()
    if start.startswith(b"%pdf-"):
        return "pdf"
    if start.startswith((b"<!doctype html", b"<html")) or (start.startswith(b"<?xml") and b"<html" in start):
        return "html"
    if b"\x1f\nFile: " in head or b"\x1f\nIndirect:" in head or b"\x1f\nTag Table:" in head:
        return "info"
    if b"\x00" in head:
        return None
    text = head.decode("utf-8", "replace")
    if looks_like_roff(text):
        return "man"
    return "text" if looks_like_prose(head) else None


_kinds: dict[tuple[str, int, int], str | None] = {}


def document_kind(path: Path) -> str | None:
    """The kind of document a file is read as (None: not read); see the module's docstring."""
    by_name, compressed = kind_of(path)
    if by_name not in (None, "man", "info"):
        return by_name
    name = path.name[: -len(COMPRESSED)] if compressed else path.name
    if by_name is None and typed_elsewhere(name):
        return None
    try:
        st = path.stat()
    except OSError:
        return by_name
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _kinds:
        if len(_kinds) > 200_000:
            _kinds.clear()
        _kinds[key] = sniff(_head(path, compressed))
    return _kinds[key]


def _unsupported(path: Path) -> KBError:
    kind, compressed = kind_of(path)
    name = path.name[: -len(COMPRESSED)] if compressed else path.name
    suffix = _suffix(name)
    if kind is None and not typed_elsewhere(name):
        return KBError("not a document: not text (binary data, source code or a table of data)")
    what = f"compressed {suffix or '(none)'!r}" if compressed else repr(suffix or "(none)")
    supported = ", ".join(sorted(FILE_TYPES))
    return KBError(
        f"unsupported file type {what} (supported: {supported}, man pages (NAME.1 ... NAME.9), info manuals, "
        "text without an extension, and each of them gzipped as NAME.gz)"
    )


def decompress(data: bytes) -> bytes:
    """A gzip file's content; KBError if it is damaged or unpacks to more than MAX_DECOMPRESSED bytes."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            out = f.read(MAX_DECOMPRESSED + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise KBError(f"not a readable gzip file ({exc})") from exc
    if len(out) > MAX_DECOMPRESSED:
        raise KBError(
            f"unpacks to more than {MAX_DECOMPRESSED // (1024 * 1024)} MB; refused (unpack it yourself if it is meant)"
        )
    return out


def _decode(data: bytes) -> str:
    from ..web.decode import decode_body

    if b"\x00" in data[:8192]:
        raise KBError("looks like a binary file, not text")
    return decode_body(data, html=False)[0]


def _read_text(data: bytes, path: Path) -> tuple[str, str, bool]:
    from .asciidoc import looks_like_asciidoc, read_asciidoc
    from .plaintext import is_help_file, read_plain

    text = _decode(data)
    if not is_help_file(text) and looks_like_asciidoc(text):  # AsciiDoc sources are often named .txt
        return (*read_asciidoc(text, _stem(path)), True)
    return read_plain(text, _stem(path))


def _read_markdown(data: bytes, path: Path) -> tuple[str, str, bool]:
    from .markdown import read_markdown

    return (*read_markdown(_decode(data), _stem(path)), True)


def _read_rst(data: bytes, path: Path) -> tuple[str, str, bool]:
    from .rst import read_rst

    return (*read_rst(_decode(data), _stem(path)), True)


def _read_asciidoc(data: bytes, path: Path) -> tuple[str, str, bool]:
    from .asciidoc import read_asciidoc

    return (*read_asciidoc(_decode(data), _stem(path)), True)


def _read_html(data: bytes, path: Path, site: frozenset[str] = frozenset()) -> tuple[str, str, bool]:
    from .html_doc import read_html

    return (*read_html(data, path.absolute().as_uri(), _stem(path), site), True)  # relative paths too


def site_titles(files: Iterable[Path]) -> dict[Path, frozenset[str]]:
    """Per folder of HTML files, the title parts that name the site rather than a page (read from each
    page's <title> before the pages are read)."""
    from .html_doc import site_parts, title_tag_of

    by_folder: dict[Path, list[str]] = {}
    for f in files:
        if kind_of(f)[0] == "html":
            try:
                with f.open("rb") as fh:
                    head = fh.read(16384)
            except OSError:
                continue
            if kind_of(f)[1]:
                try:
                    head = gzip.GzipFile(fileobj=io.BytesIO(head)).read(16384)
                except (OSError, EOFError, zlib.error):
                    continue
            by_folder.setdefault(f.parent, []).append(title_tag_of(head))
    return {folder: site_parts(titles) for folder, titles in by_folder.items()}


def _read_man(data: bytes, path: Path) -> tuple[str, str, bool]:
    from .man import alias, alias_target, read_man

    source = _decode(data)
    if (other := alias(source)) is not None:  # a page that only includes another: read as that page
        target = alias_target(path, other)
        if target is None:
            raise KBError(f"a man page that only includes {other}, which is not there")
        raw = target.read_bytes()
        source = _decode(decompress(raw) if target.name.endswith(COMPRESSED) else raw)
    return (*read_man(source, _stem(path)), True)


def _read_info(data: bytes, path: Path) -> tuple[str, str, bool]:
    from .info import read_info

    def text(raw: bytes) -> str:  # an index entry's marks hold NUL bytes: not a sign of a binary file
        return _decode(re.sub(rb"\x00\x08\[[^\x00]*\x00\x08\]", b"", raw))

    def load(part: Path) -> str:
        raw = part.read_bytes()
        return text(decompress(raw) if part.name.lower().endswith(COMPRESSED) else raw)

    return (*read_info(text(data), _stem(path), path, load), True)


def _read_pdf(data: bytes, path: Path) -> tuple[str, str, bool]:
    from ..web.pdf import MAX_PAGES, read_pdf

    try:
        pdf = read_pdf(data)
    except PdfUnreadable as exc:
        raise KBError(str(exc)) from exc
    if pdf.truncated:
        log.warning("%s: only the first %d of its %d pages were read", path, MAX_PAGES, pdf.pages)
    return (pdf.title or path.stem), pdf.text, False


def _stem(path: Path) -> str:
    """The file's name without its type suffix (and .gz)."""
    name = path.name
    if name.lower().endswith(COMPRESSED):
        name = name[: -len(COMPRESSED)]
    suffix = _suffix(name)
    return name[: -len(suffix)] if suffix and FILE_TYPES.get(suffix) else Path(name).stem


_READERS = {
    "text": _read_text,
    "markdown": _read_markdown,
    "rst": _read_rst,
    "asciidoc": _read_asciidoc,
    "html": _read_html,
    "pdf": _read_pdf,
    "man": _read_man,
    "info": _read_info,
}


def read_document(path: Path, site: frozenset[str] = frozenset()) -> tuple[str, str, bytes, bool]:
    """(title, text, raw bytes, structured) of a supported file; KBError with a clear reason otherwise.
    `structured`: the text marks headings and code in the structured readers' form. `site`: title
    parts that name the site of an HTML file's folder (`site_titles`)."""
    kind, compressed = document_kind(path), kind_of(path)[1]
    if kind is None:
        raise _unsupported(path)
    whole = compressed or kind == "pdf"  # memory bounded (kb/limits.py): text beyond TEXT_CAP is not read
    try:
        data = read_head(path, MAX_DECOMPRESSED if whole else TEXT_CAP + 1, whole)
    except OSError as exc:
        raise KBError(f"cannot read: {exc.strerror or exc}") from exc
    content = decompress(data) if compressed else data
    content = content if kind == "pdf" else capped_text(content, path)
    title, text, structured = _read_html(content, path, site) if kind == "html" else _READERS[kind](content, path)
    title, text = composed(title), composed(text)  # a file name from macOS is decomposed
    if not text.strip():
        raise KBError("no text found" + (" (a scanned PDF without a text layer?)" if kind == "pdf" else ""))
    return title, text, data, structured


def read_file(path: Path) -> tuple[str, str, bytes]:
    """(title, text, raw bytes) of a supported file; KBError with a clear reason otherwise."""
    title, text, data, _ = read_document(path)
    return title, text, data
