"""``sleuth fetch URL... [--json]``: fetch pages with Sleuth's crawler and print their text.

Without ``--json``: for each URL a header line (title and final URL) followed by the extracted
main text; failures go to stderr. With ``--json``: one JSON object per URL per line on stdout,
in the order given (keys url, final_url, status, title, published, text, links, error, plus
error_kind, content_type, elapsed_ms, from_cache). Every URL gets its line or its error; the exit
status is 0 when all succeeded, 1 when any failed, 2 for usage errors.
"""

from __future__ import annotations

import argparse
import sys

from ..config import add_data_args, add_web_args, load_settings
from .output import out, out_json

PROG = "sleuth fetch"


def build_parser() -> argparse.ArgumentParser:
    from .args import Parser, accept_global_options, invoked_as

    p = Parser(
        prog=f"{invoked_as()} fetch",
        description="Fetch web pages politely and safely (robots.txt, SSRF guard, size and time limits) "
        "and print their main text.",
    )
    p.add_argument("urls", nargs="+", metavar="URL", help="http(s) URL(s) to fetch")
    p.add_argument("--json", action="store_true", help="print one JSON object per URL per line")
    add_data_args(p)
    add_web_args(p, search=False)
    accept_global_options(p)  # the global settings of an alias (--engine, --tools...) are taken
    return p


def _age(cache, url: str) -> str:
    from urllib.parse import urldefrag

    from ..urls import normalize_url
    from ..web.fetcher import CACHE_NAMESPACE

    seconds = cache.age(CACHE_NAMESPACE, normalize_url(urldefrag(url)[0]))
    if seconds is None:
        return ""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f", fetched {seconds / size:.0f} {unit} ago"
    return f", fetched {seconds:.0f} s ago"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse: 2 for usage errors, 0 for --help
        return int(exc.code) if isinstance(exc.code, int) else 2
    try:
        settings = load_settings(args)
    except ValueError as exc:
        out(f"{PROG}: error: {exc}", stream=sys.stderr)
        return 2

    from ..storage import WriteProblems
    from ..web.cache import open_cache
    from ..web.fetcher import Fetcher

    problems = WriteProblems()  # a cache that found no room (a full disk): one line at the end, status 2
    cache = open_cache(settings.data_dir, ttl=settings.cache_ttl, no_cache=settings.no_cache, problems=problems)
    fetcher = Fetcher.from_settings(settings, cache=cache)
    try:
        results = fetcher.fetch_many(args.urls)
        ages = {res.url: _age(cache, res.url) for res in results if res.from_cache}
    except KeyboardInterrupt as exc:  # Ctrl-C (130) or SIGTERM (143)
        from .output import interrupted_status

        out(f"{PROG}: interrupted", stream=sys.stderr)
        return interrupted_status(exc)
    finally:
        fetcher.close()
        cache.close()

    failed = 0
    for res in results:
        if res.from_cache:  # said, so that a stale page is not taken for today's
            out(f"{PROG}: {res.url}: from the cache{ages[res.url]} (--no-cache to fetch again)", stream=sys.stderr)
        if res.error:
            failed += 1
            out(f"{PROG}: {res.url}: {res.error}", stream=sys.stderr)
        if args.json:
            out_json(res.to_dict())
        elif not res.error:
            header = f"== {res.title} — {res.final_url}" if res.title else f"== {res.final_url}"
            out(header)
            if res.text:
                out(res.text.rstrip())
            else:  # fetched, but nothing reads as text (an image page, binary data served as HTML)
                out(f"{PROG}: {res.url}: no text found on the page", stream=sys.stderr)
            out()
    sys.stdout.flush()
    if problems:
        out(f"{PROG}: {problems.line()}", stream=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
