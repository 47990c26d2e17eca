"""Page metadata for the extractor: title (og:title, <h1>, <title>), publication date (meta tags,
JSON-LD, itemprop, <time>, the address), the page's own article text in JSON-LD (``articleBody``) and
absolute out-links."""

from __future__ import annotations

import json
import re
from urllib.parse import SplitResult, urljoin, urlsplit


def text_of(el) -> str:
    return "".join(t for t in el.itertext() if isinstance(t, str))


_WS = re.compile(r"\s+")


def _clean(s: str | None) -> str:
    return _WS.sub(" ", s or "").strip()


def meta_map(root) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in root.iter("meta"):
        key = (m.get("property") or m.get("name") or m.get("itemprop") or "").strip().lower()
        val = m.get("content")
        if key and val and key not in out:
            out[key] = val.strip()
    return out


_SITE_SEP_RE = re.compile(r"\s+[|\u2013\u2014•·»›~/-]{1,2}\s+")  # " | Site", " - Site", " » Site"...
_NOT_ALNUM_RE = re.compile(r"\W+")
_SITE_SLACK = 12  # a last segment may add this many letters to a site's name ("Rezept von Backen.de")
_GENERIC_SLD = frozenset("co com org net gov edu ac or ne go gob mil nic".split())


def _letters(text: str) -> str:
    """Lower-cased letters and digits only: how a site's name is compared ("Backen.de" -> "backende")."""
    return _NOT_ALNUM_RE.sub("", text.lower()).replace("_", "")


def _parts(url: str) -> SplitResult:
    """The address's parts; an unparsable one ("http://[bad/") has none (no host, path or date)."""
    try:
        return urlsplit(url)
    except ValueError:
        return urlsplit("")


def _site_names(meta: dict[str, str], url: str) -> list[str]:
    """The page's names for its site (og:site_name, application-name, twitter:site) and its domain's
    own name ("hausinfo" for www.hausinfo.ch), as :func:`_letters`."""
    names = [meta.get(k, "") for k in ("og:site_name", "application-name", "twitter:site")]
    host = _parts(url).hostname or ""
    labels = host.split(".")
    if len(labels) >= 3 and labels[-2] in _GENERIC_SLD:  # www.example.co.uk
        labels.pop(-2)
    if len(labels) >= 2:
        names.append(labels[-2])
    keys = (_letters(n) for n in names)
    return [k for k in keys if len(k) >= 3]


def _names_site(segment: str, names: list[str]) -> bool:
    seg = _letters(segment)
    if len(seg) < 3:
        return False
    return any(seg in n or (n in seg and len(seg) <= len(n) + _SITE_SLACK) for n in names)


def _without_site(title: str, meta: dict[str, str], url: str) -> str:
    """A title less its trailing site name (" | Site", " - Site.de"), at most two segments of it."""
    names: list[str] | None = None
    for _ in range(2):
        seps = list(_SITE_SEP_RE.finditer(title))
        if not seps:
            break
        if names is None:
            names = _site_names(meta, url)
        if not names or not _names_site(title[seps[-1].end() :], names):
            break
        title = title[: seps[-1].start()].strip()
    return title


def title_of(root, meta: dict[str, str], url: str = "") -> str:
    """The page's title: og:title (or another declared title), else its <h1> when the <title> holds it,
    else the longest part of the <title>; less a trailing site name."""
    return _without_site(_title_of(root, meta), meta, url)


def _title_of(root, meta: dict[str, str]) -> str:
    for key in ("og:title", "twitter:title", "dc.title", "headline"):
        if meta.get(key):
            return _clean(meta[key])
    page_title = ""
    t = root.find(".//title")
    if t is not None:
        page_title = _clean(text_of(t))
    for h1 in root.iter("h1"):
        h = _clean(text_of(h1))
        if h and (not page_title or h.lower() in page_title.lower()):
            return h
    if page_title:
        # "Headline | Site name" -> the longest segment
        parts = [p.strip() for p in re.split(r"\s+[|\u2013\u2014•·»:-]\s+", page_title) if p.strip()]
        if len(parts) > 1:
            return max(parts, key=len)
    return page_title


_MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), start=1)}
_ISO_RE = re.compile(
    r"^\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
    r"\s*(Z|[+-]\d{2}:?\d{2})?)?"
)
_COMPACT_RE = re.compile(r"^\s*(\d{4})(\d{2})(\d{2})(?:T?(\d{2})(\d{2})(\d{2})?)?\b")
_TEXT_DATE_RE = re.compile(
    r"\b(?:(\d{1,2})\s+([A-Za-z]{3})[a-z]*\.?,?\s+(\d{4})"  # 5 March 2024
    r"|([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4}))\b"
)  # March 5th, 2024


def _norm_date(value: str | None) -> str | None:
    """Normalise a machine-readable date to ISO ('YYYY-MM-DD' or full ISO with time), else None."""
    if not value:
        return None
    value = value.strip()
    m = _ISO_RE.match(value)
    if m:
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if not (1 <= mo <= 12 and 1 <= d <= 31 and 1900 <= y <= 2100):
            return None
        if m.group(4) is None:
            return f"{y:04d}-{mo:02d}-{d:02d}"
        out = f"{y:04d}-{mo:02d}-{d:02d}T{int(m.group(4)):02d}:{m.group(5)}:{m.group(6) or '00'}"
        tz = m.group(7)
        if tz:
            out += "Z" if tz == "Z" else (tz if ":" in tz else tz[:3] + ":" + tz[3:])
        return out
    m = _COMPACT_RE.match(value)
    if m and 1900 <= int(m.group(1)) <= 2100 and 1 <= int(m.group(2)) <= 12 and 1 <= int(m.group(3)) <= 31:
        return f"{m.group(1)}-{m.group(2)}-{m.group(3)}"
    m = _TEXT_DATE_RE.search(value)
    if m:
        if m.group(1):
            day, month, year = m.group(1), m.group(2), m.group(3)
        else:
            month, day, year = m.group(4), m.group(5), m.group(6)
        month_n = _MONTHS.get(month.lower())
        if month_n and 1 <= int(day) <= 31 and 1900 <= int(year) <= 2100:
            return f"{int(year):04d}-{month_n:02d}-{int(day):02d}"
    return None


_DATE_META_KEYS = (
    "article:published_time",
    "og:published_time",
    "article:published",
    "datepublished",
    "publishdate",
    "publish-date",
    "publish_date",
    "pubdate",
    "published_time",
    "date",
    "dc.date.issued",
    "dc.date",
    "dcterms.date",
    "dcterms.issued",
    "sailthru.date",
    "parsely-pub-date",
    "article.published",
    "cxenseparse:recs:publishtime",
)


def _jsonld_values(obj, key: str, depth: int = 0):
    """The string values of ``key`` in a JSON-LD object, its @graph and its main entity, outermost first."""
    if depth > 8:
        return
    if isinstance(obj, dict):
        v = obj.get(key)
        if isinstance(v, str):
            yield v
        for nested in ("@graph", "mainEntity", "mainEntityOfPage", "itemListElement"):
            if nested in obj:
                yield from _jsonld_values(obj[nested], key, depth + 1)
    elif isinstance(obj, list):
        for item in obj[:50]:
            yield from _jsonld_values(item, key, depth + 1)


def jsonld(root) -> list:
    """The parsed JSON of each JSON-LD script of the page (read it before the scripts are dropped)."""
    out = []
    for script in root.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json" or not script.text:
            continue
        data = json_in(script.text)
        if data is not None:
            out.append(data)
    return out


_BLOCK_TAG_RE = re.compile(r"</?(?:p|div|br|li|h[1-6]|blockquote|ul|ol|tr|section)\b[^>]*>", re.I)


def declared_body(ld: list) -> str:
    """The article text the page declares in its JSON-LD (``ld``: ``articleBody``, the longest if
    several), each of its lines a paragraph; "" when there is none.  Markup inside it is read as text."""
    best = ""
    for data in ld:
        for body in _jsonld_values(data, "articleBody"):
            if len(body) > len(best):
                best = body
    if "<" in best and ">" in best:
        from lxml import etree

        marked = "<div>" + _BLOCK_TAG_RE.sub("\n", best) + "</div>"  # a block's end is a line's end
        try:
            frag = etree.fromstring(marked, parser=etree.HTMLParser())
            best = "".join(t for t in frag.itertext() if isinstance(t, str)) if frag is not None else best
        except (etree.ParserError, etree.XMLSyntaxError, ValueError):
            pass
    lines = (" ".join(line.split()) for line in best.splitlines())
    return "\n\n".join(line for line in lines if line)


def json_in(raw: str):
    """The JSON value in a script body, tolerating wrappers such as <!-- --> or //<![CDATA[ ]]>."""
    decoder = json.JSONDecoder()
    for start in sorted(i for i in (raw.find("{"), raw.find("[")) if i >= 0):
        try:
            return decoder.raw_decode(raw, start)[0]
        except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's stack allows
            continue
    return None


def published_date(root, meta: dict[str, str], ld: list, url: str = "") -> str | None:
    """The page's publication date (ISO): from its meta tags, JSON-LD (``ld``, from :func:`jsonld`),
    itemprop or <time> elements, else from a date in its address."""
    for key in _DATE_META_KEYS:
        d = _norm_date(meta.get(key))
        if d:
            return d
    for key in ("datePublished", "dateCreated"):
        for data in ld:
            for v in _jsonld_values(data, key):
                d = _norm_date(v)
                if d:
                    return d
    for el in root.xpath('//*[@itemprop="datePublished"]'):
        d = _norm_date(el.get("content") or el.get("datetime") or text_of(el))
        if d:
            return d
    times = list(root.iter("time"))
    for t in sorted(times, key=lambda t: t.get("pubdate") is None):  # <time pubdate> first
        d = _norm_date(t.get("datetime"))
        if d:
            return d
    m = _URL_DATE_RE.search(_parts(url).path)  # a blog's /2019/01/31/slug permalink
    return _norm_date("-".join(m.groups())) if m else None


_URL_DATE_RE = re.compile(r"/((?:19|20)\d\d)[/-](0[1-9]|1[0-2])[/-](0[1-9]|[12]\d|3[01])(?=[/.-]|$)")


def out_links(root, base: str) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    parts = _parts(base)
    # the base's scheme and host, for the fast path below; without one, links go through urljoin
    site = f"{parts.scheme}://{parts.netloc}" if parts.netloc and parts.scheme.lower() in ("http", "https") else ""
    for a in root.iter("a", "area"):
        href = a.get("href")
        if not href:
            continue
        href = href.strip()
        if not href or href[0] == "#":
            continue
        if href.startswith(("http://", "https://")):
            absolute = href
        elif site and href[0] == "/" and not href.startswith("//") and "/." not in href:
            absolute = site + href  # fast path for the common root-relative link
        else:
            try:
                absolute = urljoin(base, href) if base else href
            except ValueError:
                continue
            if not absolute.lower().startswith(("http://", "https://")):
                continue
        absolute = absolute.partition("#")[0]
        if absolute not in seen:
            seen.add(absolute)
            out.append(absolute)
    return out
