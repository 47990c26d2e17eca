"""What `kb ingest` says about the files it did not read: documents of a format it does not read,
named with the reason, other files counted, and folders that held nothing it reads."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

# Formats people keep notes and papers in that the knowledge base does not read (yet): the skip is
# named so that a user knows their documents were not taken in. Anything else (images, code, data)
# is only counted.
DOCUMENT_FORMATS = {
    ".rst": "reStructuredText",
    ".adoc": "AsciiDoc",
    ".org": "Org mode",
    ".tex": "LaTeX",
    ".rtf": "RTF",
    ".doc": "Word",
    ".docx": "Word",
    ".odt": "OpenDocument text",
    ".epub": "EPUB",
    ".ipynb": "Jupyter notebook",
    ".xhtml": "XHTML",
    ".mdx": "MDX",
    ".markdown": "Markdown",
    ".txt": "plain text",
}


def skipped_lines(skipped: list[str], readable: list[str]) -> list[str]:
    """One line per document format skipped ("127 .rst files: reStructuredText is not read"), then
    one for everything else; `readable` names the suffixes that are read, for the hint."""
    counts = Counter(Path(p).suffix.lower() for p in skipped)
    lines = []
    for suffix, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if suffix in DOCUMENT_FORMATS and suffix not in readable:
            files = "file" if n == 1 else "files"
            lines.append(f"skipped {n} {suffix} {files}: {DOCUMENT_FORMATS[suffix]} is not read")
    rest = [
        p
        for p in skipped
        if not (Path(p).suffix.lower() in DOCUMENT_FORMATS and Path(p).suffix.lower() not in readable)
    ]
    untyped = [p for p in rest if not _typed(p)]  # no file type in the name: its content was looked at
    if untyped:
        what = "file that is not a document" if len(untyped) == 1 else "files that are not documents"
        lines.append(f"skipped {len(untyped)} {what} (binary data, source code or a table of data), e.g. {untyped[0]}")
    others = [p for p in rest if _typed(p)]
    if others:
        files = "file" if len(others) == 1 else "files"
        lines.append(
            f"skipped {len(others)} {files} of other types (e.g. {others[0]}); read are: {' '.join(sorted(readable))}, "
            "man pages, info manuals and text without an extension"
        )
    return lines


def _typed(path: str) -> bool:
    from ..kb.readers import COMPRESSED, typed_elsewhere

    name = Path(path).name
    return typed_elsewhere(name[: -len(COMPRESSED)] if name.endswith(COMPRESSED) else name)


def kinds_line(kinds: dict[str, int]) -> str:
    """What was read, per kind, most first: "read 212 man pages, 40 HTML, 3 PDF, 12 text"."""
    from ..kb.readers import KIND_NAMES

    parts = []
    for kind, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])):
        one, many = KIND_NAMES.get(kind, (kind, kind))
        parts.append(f"{n} {one if n == 1 else many}")
    return "read " + ", ".join(parts) if parts else ""


def empty_folders(paths: list[str], files: list[str]) -> list[str]:
    """The folders given that hold none of `files` (the files an ingest found, as text): none that the
    knowledge base reads."""
    out = []
    for p in paths:
        folder = Path(p).expanduser()
        real = folder.resolve()  # files are listed by their real path (utils/kb/walk.py)
        if folder.is_dir() and not any(
            (path := Path(f)).is_relative_to(folder) or path.is_relative_to(real) for f in files
        ):
            out.append(p)
    return out
