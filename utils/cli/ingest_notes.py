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
    others = sum(n for suffix, n in counts.items() if suffix not in DOCUMENT_FORMATS or suffix in readable)
    if others:
        example = next(p for p in skipped if Path(p).suffix.lower() not in DOCUMENT_FORMATS)
        files = "file" if others == 1 else "files"
        lines.append(
            f"skipped {others} {files} of other types (e.g. {example}); read are: {' '.join(sorted(readable))}"
        )
    return lines


def empty_folders(paths: list[str], files: list[Path]) -> list[str]:
    """The folders given that hold no file the knowledge base reads."""
    out = []
    for p in paths:
        folder = Path(p).expanduser()
        real = folder.resolve()  # files are listed by their real path (utils/kb/walk.py)
        if folder.is_dir() and not any(f.is_relative_to(folder) or f.is_relative_to(real) for f in files):
            out.append(p)
    return out
