"""Which files `kb ingest PATH...` reads: folders walked recursively, safely in hostile folders.

* Each file is read once, by its real path: a symlink to a file already met, or the same file named
  twice on the command line, is a duplicate (passed over, reported). When only the link's name says
  what type the file is (Debian's ``NEWS.rst.gz -> changelog.gz``), it is read by the link's name.
* Symlinks are followed only inside the folder given: one that leads out of it is passed over unless
  `follow_links` (`--follow-links`), and a symlinked folder is entered only then. A symlink that
  loops or leads nowhere is passed over; folders already walked are never walked again (no loops).
* Only regular files are opened: a FIFO, a device or a socket in a folder is passed over (reading
  one would block, or never end); one named on the command line is an error.
* Hidden files and folders (a leading dot) are left out; files that are not documents
  (readers.document_kind: by name, ``name.md.gz`` too, or by content for ``NEWS``) are `skipped`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .readers import document_kind, kind_of
from .renderings import one_each

# Why a path was passed over (IngestReport.passed_over): the reason is what `kb ingest` reports.
DUPLICATE = "the same file as another path (read once)"
LOOP = "a symlink that loops or leads nowhere"
OUTSIDE = "a symlink out of the folder given (use --follow-links to follow it)"
SPECIAL = "not a regular file (a FIFO, device or socket); not opened"


@dataclass
class Walk:
    files: list[Path] = field(default_factory=list)  # real paths, each once, in walk order
    errors: list[tuple[str, str]] = field(default_factory=list)  # paths given that cannot be read
    skipped: list[str] = field(default_factory=list)  # files in folders with an unsupported type
    passed_over: list[tuple[str, str]] = field(default_factory=list)  # (path, reason) loops, duplicates...


def _real(path: Path) -> Path | None:
    """The real path, or None for a symlink loop or a link to nothing."""
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):  # RuntimeError: Python 3.11's "Symlink loop"
        return None


def walk(paths: Iterable[str | Path], follow_links: bool = False) -> Walk:
    out = Walk()
    seen: set[Path] = set()

    def add(shown: Path, real: Path) -> None:
        if real in seen:
            out.passed_over.append((str(shown), DUPLICATE))
            return
        seen.add(real)
        out.files.append(real if kind_of(real)[0] is not None else shown)

    for given in paths:
        p = Path(given).expanduser()
        real = _real(p)
        if real is None:
            out.errors.append((str(p), "a symlink loop" if p.is_symlink() else "no such file or directory"))
        elif real.is_dir():
            _walk_folder(p, real, follow_links, out, add)
        elif stat.S_ISREG(real.stat().st_mode):
            add(p, real)  # a file named on the command line is read even through a symlink: it was asked for
        else:
            out.errors.append((str(p), SPECIAL))
    out.skipped = [s for s in out.skipped if _real(Path(s)) not in seen]  # read under a link's name
    return one_each(out)  # a page's second rendering, a stub: passed over (kb/renderings.py)


def _walk_folder(top: Path, top_real: Path, follow_links: bool, out: Walk, add) -> None:
    walked: set[Path] = set()
    for root, dirs, names in os.walk(top, followlinks=follow_links):
        here = _real(Path(root))
        if here is None or here in walked:  # a symlinked folder that loops back: walked once
            dirs[:] = []
            continue
        walked.add(here)
        kept = []
        for d in sorted(dirs):
            sub = Path(root) / d
            if d.startswith("."):
                continue
            if sub.is_symlink():
                target = _real(sub)
                if target is None:
                    out.passed_over.append((str(sub), LOOP))
                    continue
                if not follow_links:
                    if not target.is_relative_to(top_real):
                        out.passed_over.append((str(sub), OUTSIDE))
                    continue  # one inside the folder is walked under its real name
            kept.append(d)
        dirs[:] = kept
        for name in sorted(names):
            if name.startswith("."):
                continue
            f = Path(root) / name
            real = _real(f)
            if real is None:
                out.passed_over.append((str(f), LOOP))
                continue
            if f.is_symlink() and not follow_links and not real.is_relative_to(top_real):
                out.passed_over.append((str(f), OUTSIDE))
                continue
            try:
                mode = real.stat().st_mode
            except OSError as exc:
                out.errors.append((str(f), f"cannot read: {exc.strerror or exc}"))
                continue
            if not stat.S_ISREG(mode):
                out.passed_over.append((str(f), SPECIAL))
            elif document_kind(f) is not None:  # a document by its name (name.md.gz) or content (NEWS)
                add(f, real)
            else:
                out.skipped.append(str(f))
