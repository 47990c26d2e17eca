"""Links between documents of the knowledge base, followed the way a crawler follows a page's links.

The KB keeps the text of an ingested HTML file, not its links; the file itself still has them.
`linked_sources` reads the file again and returns the other ingested documents it links to. A
root-relative link (`/wiki/X.html`) in a saved copy of a site is resolved against the nearest
folder above the document that holds the target, i.e. the root of the copy.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .hits import Hit

HTML_SUFFIXES = (".html", ".htm", ".xhtml")
MAX_LINKS = 200  # per document
MAX_BYTES = 5_000_000
ROOT_LEVELS = 6  # folders above a document searched for the root of a site copy


class _Hrefs(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("a", "area") and len(self.hrefs) < MAX_LINKS * 4:
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href.strip())


def _resolve(href: str, doc: Path) -> Path | None:
    parts = urlsplit(href)
    if parts.scheme not in ("", "file") or (parts.netloc and parts.scheme != "file"):
        return None  # another site: not a document of this folder
    path = unquote(parts.path)
    if not path:
        return None
    if path.startswith("/"):
        if parts.scheme == "file":
            cand = Path(path)
            return cand if cand.is_file() else None
        for anc in list(doc.parents)[:ROOT_LEVELS]:
            cand = anc / path.lstrip("/")
            if cand.is_file():
                return cand
        return None
    cand = (doc.parent / path).resolve()
    return cand if cand.is_file() else None


def linked_sources(source: str, known: Callable[[str], bool]) -> list[str]:
    """The ingested documents (KB source strings) an ingested HTML file links to, in page order."""
    doc = Path(source)
    if doc.suffix.lower() not in HTML_SUFFIXES or not doc.is_absolute():
        return []
    try:
        if doc.stat().st_size > MAX_BYTES:
            return []
        data = doc.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    parser = _Hrefs()
    try:
        parser.feed(data)
    except Exception:  # noqa: BLE001 - a broken page just has no links to follow
        return []
    out: list[str] = []
    for href in parser.hrefs:
        target = _resolve(href, doc)
        if target is None:
            continue
        key = str(target.resolve())
        if key != source and key not in out and known(key):
            out.append(key)
            if len(out) == MAX_LINKS:
                break
    return out


def _names(title: str, text: str) -> bool:
    """The (folded) title stands in the (folded) text as whole words: "ed stone" is not in "used stone"."""
    return re.search(rf"(?<!\w){re.escape(title)}(?!\w)", text) is not None


def follow(kb, hits: list, query: str, from_docs: int = 3, keep: int = 4) -> list:
    """Chunks of documents linked from the best hits' documents (at most one per document, `keep`
    in all), ranked by the words they share with `query` and by whether the hit that links to them
    names them in its text (the way a reader follows a link in a sentence, not in a menu); scored
    below the hit that linked to them."""
    from ..text import bare_title, fold, term_set

    want = term_set(query)
    seen = {h.source for h in hits}
    parents: dict[str, list] = {}
    for h in hits:
        if h.source in parents or len(parents) < from_docs:
            parents.setdefault(h.source, []).append(h)
    linked: dict[str, tuple[float, str]] = {}  # target -> (parent score, parent text)
    for src, hs in parents.items():
        for target in linked_sources(src, lambda s: kb.has_source(s)):
            if target not in seen and target not in linked:
                linked[target] = (hs[0].score, fold(" ".join(h.text for h in hs)))
    if not linked:
        return []
    best: dict[str, tuple[float, Hit]] = {}
    named_by: dict[tuple[str, str], bool] = {}  # (document, title) -> the linking text names it
    for c in kb.chunks_of(list(linked), per_source=5):
        share = len(term_set(f"{c.title} {c.text}") & want) / len(want) if want else 0.0
        key = (c.source, c.title)
        if key not in named_by:
            title = fold(bare_title(c.title))
            named_by[key] = len(title) > 3 and _names(title, linked[c.source][1])
        s = share + 0.5 * named_by[key]
        if s > 0 and s > best.get(c.source, (0.0, None))[0]:
            best[c.source] = (s, c)
    ranked = sorted(best.values(), key=lambda sc: -sc[0])[:keep]
    out = []
    for s, c in ranked:
        c.score = round(linked[c.source][0] * min(1.0, 0.5 + 0.5 * s), 4)
        c.metadata["via_link"] = True
        out.append(c)
    return out
