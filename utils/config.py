"""Configuration: command-line flags, then environment variables, then a `.env` file.

`load_settings(args)` is the single place where this precedence is applied. It imports only
the standard library, python-dotenv and platformdirs, so it is safe on the `--help` path.
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path

from .registry import TOOL_NAMES

# the knowledge base's embeddings (utils/kb/embeddings.py); none: no vectors, BM25 alone
EMBEDDINGS = ("hash", "minilm", "gemini", "none")

# The defaults, each defined once: Settings, the help texts and the engines read them from here.
DEFAULT_CONFIDENCE = 0.7  # stop researching once the analysis is this sure
DEFAULT_MAX_ITERATIONS = 8  # tool steps per research round
# Five minutes a round: an offline round takes seconds, a hosted LLM one a minute or two (8 steps
# of 2 calls); past five minutes a person at a terminal is better served by the report so far.
DEFAULT_TIME_LIMIT_S = 300.0
DEFAULT_CACHE_TTL_S = 86400.0  # a day: search results and pages change slowly
DEFAULT_CRAWL_INTERVAL_S = 1.0  # between requests to one host: polite to small sites
DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"
DEFAULT_LLM_TIMEOUT_S, DEFAULT_LOCAL_LLM_TIMEOUT_S = 60.0, 300.0  # per request: a local model is slow
DEFAULT_CONTEXT_TOKENS, DEFAULT_LOCAL_CONTEXT_TOKENS = 32000, 4096  # prompt window (a cap on cost; a small model)

CSE_END = date(2027, 1, 1)  # Google's announced end of the Custom Search JSON API
ALL_TOOLS = TOOL_NAMES  # every tool in the registry (utils/registry.py), in its order
DEFAULT_WIKI_URL = "https://en.wikipedia.org/w/api.php"  # the wiki tool's default: English Wikipedia

# Every environment variable Sleuth reads (mirrored in .env.example).
ENV_VARS = {
    "GEMINI_API_KEY": "Gemini API key; enables the gemini engine",
    "GEMINI_MODEL": f"Gemini model name (default {DEFAULT_GEMINI_MODEL})",
    "GEMINI_BASE_URL": "Override the Gemini API endpoint (tests, proxies)",
    "OPENAI_API_KEY": "API key for the openai engine (optional for local servers)",
    "OPENAI_BASE_URL": "OpenAI-compatible server, e.g. http://localhost:11434/v1 (Ollama); enables the openai engine",
    "SLEUTH_MODEL": "Model name for the chosen engine (overrides GEMINI_MODEL)",
    "SLEUTH_CONTEXT_TOKENS": f"Prompt window in tokens (default {DEFAULT_CONTEXT_TOKENS}; "
    f"{DEFAULT_LOCAL_CONTEXT_TOKENS} for a local server)",
    "SLEUTH_MAX_COST": "Stop researching when the estimated cost reaches this many USD",
    "SLEUTH_PRICE": "USD per million input,output tokens for a model the price table lacks, e.g. 0.2,0.8",
    "SLEUTH_LLM_TIMEOUT": f"Seconds per LLM request (default {DEFAULT_LLM_TIMEOUT_S:g}; "
    f"{DEFAULT_LOCAL_LLM_TIMEOUT_S:g} for a local server)",
    "GOOGLE_API_KEY": "Google Custom Search JSON API key (optional; API closes 2027-01-01; GEMINI_API_KEY "
    "alone gives Google results through Gemini grounding)",
    "GOOGLE_CSE_ID": "Google Programmable Search Engine id (optional)",
    "GOOGLE_CSE_ENDPOINT": "Override the Custom Search endpoint (tests)",
    "SLEUTH_DDG_URL": "Override the DuckDuckGo HTML endpoint (tests)",
    "SEARXNG_URL": "Your SearXNG server (http://HOST:PORT); searched before DuckDuckGo (JSON format enabled)",
    "SLEUTH_ENGINE": "auto | gemini | openai | offline (default auto)",
    "SLEUTH_DATA_DIR": "Where sessions, cache and the knowledge base live",
    "SLEUTH_CHROMA_URL": "Use a Chroma server (http://HOST:PORT) instead of the embedded store",
    "SLEUTH_EMBEDDING": "Knowledge-base embedding: hash | minilm | gemini | none (no vectors); default: the KB's own",
    "SLEUTH_CONFIDENCE": f"Confidence threshold to stop researching (default {DEFAULT_CONFIDENCE})",
    "SLEUTH_MAX_ITERATIONS": f"Research step budget (default {DEFAULT_MAX_ITERATIONS})",
    "SLEUTH_TIME_LIMIT": "Wall-clock budget in seconds for each research round "
    f"(default {DEFAULT_TIME_LIMIT_S:g}; 0 = none)",
    "SLEUTH_MAX_TOKENS": "LLM token budget for each research round (default 0 = none)",
    "SLEUTH_TOOLS": "Comma-separated tools offered: " + ",".join(TOOL_NAMES),
    "SLEUTH_WIKI_URL": "The MediaWiki API (api.php) the wiki tool searches (default English Wikipedia's)",
    "SLEUTH_CACHE_TTL": f"Cache lifetime in seconds (default {DEFAULT_CACHE_TTL_S:g})",
    "SLEUTH_ALLOW_PRIVATE_HOSTS": "1 to allow crawling loopback/private addresses",
    "SLEUTH_IGNORE_ROBOTS": "1 to ignore robots.txt",
    "SLEUTH_CRAWL_INTERVAL": f"Minimum seconds between requests to one host (default {DEFAULT_CRAWL_INTERVAL_S})",
    "SLEUTH_MEMORY_LIMIT": "Remembered web pages kept in the KB, oldest evicted first (default 2000; 0 = no cap)",
}
# Remembered pages kept in the KB (--memory-limit), oldest evicted first: the size at which crowding
# was measured and found small (2,050 unrelated pages beside a 991-page corpus: answer recall 0.74 ->
# 0.73, both pages cited 0.90 -> 0.89; README, "Measured"); more has not been measured.
MEMORY_LIMIT = 2000


def default_data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("sleuth", appauthor=False))


def _truthy(value: str | None) -> bool:
    return str(value or "").strip().lower() in {"1", "true", "yes", "on"}


@dataclass
class Settings:
    engine: str = "auto"
    gemini_api_key: str = ""
    gemini_model: str = DEFAULT_GEMINI_MODEL
    gemini_base_url: str = ""
    model: str = ""  # --model / SLEUTH_MODEL: for whichever engine runs ("" = the engine's default)
    openai_api_key: str = ""
    openai_base_url: str = ""
    context_tokens: int = 0  # 0 = the engine's default
    max_cost: float = 0.0  # USD; 0 = no limit
    price: tuple[float, float] | None = None  # SLEUTH_PRICE: overrides the price table
    llm_timeout: float = 0.0  # seconds per LLM request; 0 = the engine's default
    google_api_key: str = ""
    google_cse_id: str = ""
    google_cse_endpoint: str = ""
    ddg_url: str = ""
    searxng_url: str = ""
    wiki_url: str = DEFAULT_WIKI_URL
    data_dir: Path = field(default_factory=default_data_dir)
    chroma_url: str = ""
    embedding: str = ""  # "": the KB's own (utils/kb/lifecycle.py)
    confidence: float = DEFAULT_CONFIDENCE
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    time_limit: float = DEFAULT_TIME_LIMIT_S
    max_tokens: int = 0  # 0: no token budget
    tools: tuple[str, ...] = ALL_TOOLS
    cache_ttl: float = DEFAULT_CACHE_TTL_S
    no_cache: bool = False
    allow_private_hosts: bool = False
    ignore_robots: bool = False
    crawl_interval: float = DEFAULT_CRAWL_INTERVAL_S
    remember: bool = True
    memory_limit: int = MEMORY_LIMIT  # remembered pages kept in the KB, oldest evicted first; 0: no cap

    @property
    def google_configured(self) -> bool:
        """Custom Search keys are set (whether or not the API has ended; see google_search_configured)."""
        return bool(self.google_api_key and self.google_cse_id)

    def google_search_configured(self, today: date | None = None) -> bool:
        """Some Google backend can answer: Custom Search before its end date, or Gemini grounding."""
        cse_alive = self.google_configured and (today or date.today()) < CSE_END
        return cse_alive or bool(self.gemini_api_key)

    def public_dict(self) -> dict:
        """Settings without secrets, JSON-ready (stored in sessions)."""
        d = asdict(self)
        d["data_dir"] = str(self.data_dir)
        d["tools"] = list(self.tools)
        d["price"] = list(self.price) if self.price else None
        for k in ("gemini_api_key", "google_api_key", "openai_api_key"):
            d[k] = "***" if d[k] else ""
        return d


def parse_tools(value: str) -> tuple[str, ...]:
    names = tuple(t.strip().lower() for t in value.split(",") if t.strip())
    unknown = [t for t in names if t not in ALL_TOOLS]
    if unknown or not names:
        raise ValueError(f"unknown tool(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(ALL_TOOLS)}")
    return names


def parse_price(value: str) -> tuple[float, float]:
    try:
        a, b = (float(x) for x in value.split(","))
    except ValueError as exc:
        raise ValueError(
            f"SLEUTH_PRICE={value!r} is not a price: give input,output USD per million tokens, e.g. 0.2,0.8"
        ) from exc
    if a < 0 or b < 0:
        raise ValueError("a price cannot be negative")
    return a, b


def add_engine_args(parser: argparse.ArgumentParser) -> None:
    """Flags of the commands that run an LLM engine (research, batch, bench)."""
    parser.add_argument(
        "--engine",
        choices=["auto", "gemini", "openai", "offline"],
        help="LLM engine (default auto: gemini if GEMINI_API_KEY is set, else openai if OPENAI_BASE_URL or "
        "OPENAI_API_KEY is set, else offline)",
    )
    parser.add_argument("--model", help="model name (env SLEUTH_MODEL; GEMINI_MODEL for gemini)")
    parser.add_argument(
        "--base-url", help="OpenAI-compatible server, e.g. http://localhost:11434/v1 (env OPENAI_BASE_URL)"
    )
    parser.add_argument(
        "--context-tokens",
        type=int,
        help=f"prompt window in tokens (default {DEFAULT_CONTEXT_TOKENS}; {DEFAULT_LOCAL_CONTEXT_TOKENS} for a local "
        "server)",
    )
    parser.add_argument("--max-cost", type=float, metavar="USD", help="stop researching at this estimated cost")
    parser.add_argument("--llm-timeout", type=float, metavar="S", help="seconds per LLM request")


def add_data_args(parser: argparse.ArgumentParser) -> None:
    """The data folder: every command that reads or writes sessions, the cache or the knowledge base."""
    parser.add_argument("--data-dir", help="folder for sessions, cache and KB (env SLEUTH_DATA_DIR)")


def add_kb_args(parser: argparse.ArgumentParser) -> None:
    """Where the knowledge base lives and how it embeds: research and `kb`."""
    parser.add_argument("--chroma-url", help="use a Chroma server, e.g. http://127.0.0.1:8000 (env SLEUTH_CHROMA_URL)")
    parser.add_argument(
        "--embedding", choices=EMBEDDINGS, help="KB embedding (default: the KB's own; none: BM25 alone)"
    )
    parser.add_argument(
        "--memory-limit",
        type=int,
        metavar="N",
        help=f"remembered web pages kept in the KB, oldest evicted first (default {MEMORY_LIMIT}; 0: no cap)",
    )


def add_web_args(parser: argparse.ArgumentParser, search: bool = True) -> None:
    """The cache and the network policy: research and `fetch` (which does not search)."""
    parser.add_argument("--cache-ttl", type=float, help=f"cache lifetime in seconds (default {DEFAULT_CACHE_TTL_S:g})")
    parser.add_argument("--no-cache", action="store_true", default=None, help="do not read or write the cache")
    parser.add_argument(
        "--allow-private-hosts",
        action="store_true",
        default=None,
        help="allow fetching loopback/private addresses (tests, intranets)",
    )
    if search:
        parser.add_argument("--searxng-url", help="your SearXNG server, searched before DuckDuckGo (env SEARXNG_URL)")
        parser.add_argument(
            "--wiki-url", help="the MediaWiki api.php the wiki tool searches (env SLEUTH_WIKI_URL; default Wikipedia)"
        )
    parser.add_argument("--ignore-robots", action="store_true", default=None, help="do not honour robots.txt")
    parser.add_argument(
        "--crawl-interval",
        type=float,
        help=f"minimum seconds between requests to one host (default {DEFAULT_CRAWL_INTERVAL_S:g})",
    )


def add_research_args(parser: argparse.ArgumentParser) -> None:
    """The budgets and tools of a research round (research, batch)."""
    parser.add_argument(
        "--confidence", type=float, help=f"stop when confidence reaches this (default {DEFAULT_CONFIDENCE})"
    )
    parser.add_argument(
        "--max-iterations", type=int, help=f"research step budget per round (default {DEFAULT_MAX_ITERATIONS})"
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help=f"wall-clock budget per round (default {DEFAULT_TIME_LIMIT_S:g}; 0: none)",
    )
    parser.add_argument(
        "--max-tokens", type=int, metavar="N", help="LLM token budget per research round (default: none)"
    )
    parser.add_argument("--tools", help=f"comma-separated tools to offer: {','.join(ALL_TOOLS)} (default all)")
    parser.add_argument(
        "--no-remember", action="store_true", default=None, help="do not add crawled pages to the knowledge base"
    )


def add_common_args(parser: argparse.ArgumentParser) -> None:
    """The data folder, the knowledge base and the network policy together (tests, scripts)."""
    add_data_args(parser)
    add_kb_args(parser)
    add_web_args(parser)


def add_global_args(parser: argparse.ArgumentParser) -> None:
    """Every global option: accepted before or after any command word; each command uses its own share."""
    add_engine_args(parser)
    add_research_args(parser)
    add_common_args(parser)


def ensure_data_dir(path: Path) -> Path:
    """Create the data folder and prove it writable, or raise ValueError with one line saying what to do.
    Runs before any command writes anything, so a bad folder never leaves half a session behind."""
    import tempfile

    try:
        if path.exists() and not path.is_dir():
            raise NotADirectoryError(0, "it is a file, not a folder")
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path, prefix=".sleuth-probe-"):
            pass
    except OSError as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
        raise ValueError(
            f"cannot use the data folder {path}: {reason}; set --data-dir or SLEUTH_DATA_DIR to a writable folder"
        ) from exc
    return path


def read_dotenv(path: str) -> dict:
    """The settings a `.env` file holds; one that cannot be read is a usage error naming it."""
    from dotenv import dotenv_values

    where = Path(path).absolute()
    try:
        return {k: v for k, v in dotenv_values(path, encoding="utf-8").items() if v is not None}
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"cannot read the settings file {where}: byte {exc.start + 1} is not UTF-8; "
            "save it as UTF-8 (or move it out of this folder)"
        ) from None
    except OSError as exc:
        raise ValueError(f"cannot read the settings file {where}: {exc.strerror or exc}") from None


def load_settings(
    args: argparse.Namespace | None = None, env: dict | None = None, dotenv_path: str | None = ".env"
) -> Settings:
    """Resolve settings: flags > environment > .env file in the working directory > defaults."""
    file_vals: dict = {}
    if env is None:
        if dotenv_path and Path(dotenv_path).is_file():
            file_vals = read_dotenv(dotenv_path)
            env = {**file_vals, **os.environ}
        else:
            env = dict(os.environ)
    a = vars(args) if args is not None else {}

    def pick(flag: str, var: str, default=None):
        v = a.get(flag)
        if v is not None:
            return v
        v = env.get(var)
        return v if v not in (None, "") else default

    s = Settings()
    s.engine = str(pick("engine", "SLEUTH_ENGINE", "auto")).lower()
    if s.engine not in ("auto", "gemini", "openai", "offline"):
        raise ValueError(f"unknown engine {s.engine!r}; choose auto, gemini, openai or offline")
    s.gemini_api_key = env.get("GEMINI_API_KEY", "") or ""
    s.gemini_model = env.get("GEMINI_MODEL") or s.gemini_model
    s.gemini_base_url = env.get("GEMINI_BASE_URL", "") or ""
    s.model = str(pick("model", "SLEUTH_MODEL", "") or "").strip()
    s.openai_api_key = env.get("OPENAI_API_KEY", "") or ""
    s.openai_base_url = str(pick("base_url", "OPENAI_BASE_URL", "") or "").strip()
    if s.openai_base_url and not s.openai_base_url.startswith(("http://", "https://")):
        raise ValueError(f"--base-url must be an http(s) URL, got {s.openai_base_url!r}")
    price = env.get("SLEUTH_PRICE")
    s.price = parse_price(price) if price else None
    s.google_api_key = env.get("GOOGLE_API_KEY", "") or ""
    s.google_cse_id = env.get("GOOGLE_CSE_ID", "") or ""
    s.google_cse_endpoint = env.get("GOOGLE_CSE_ENDPOINT", "") or ""
    s.ddg_url = env.get("SLEUTH_DDG_URL", "") or ""
    s.searxng_url = str(pick("searxng_url", "SEARXNG_URL", "") or "").strip()
    if s.searxng_url and not s.searxng_url.startswith(("http://", "https://")):
        raise ValueError(f"SEARXNG_URL must start with http:// or https:// (got {s.searxng_url!r})")
    s.wiki_url = str(pick("wiki_url", "SLEUTH_WIKI_URL", DEFAULT_WIKI_URL) or "").strip()
    if not s.wiki_url.startswith(("http://", "https://")):
        raise ValueError(f"--wiki-url must be the http(s) address of a wiki's api.php (got {s.wiki_url!r})")
    dd = pick("data_dir", "SLEUTH_DATA_DIR")
    s.data_dir = ensure_data_dir(Path(dd).expanduser().absolute() if dd else default_data_dir())
    s.chroma_url = pick("chroma_url", "SLEUTH_CHROMA_URL", "") or ""
    s.embedding = pick("embedding", "SLEUTH_EMBEDDING", "")
    if s.embedding and s.embedding not in EMBEDDINGS:
        raise ValueError(f"unknown embedding {s.embedding!r} (SLEUTH_EMBEDDING); choose from {', '.join(EMBEDDINGS)}")
    if s.embedding == "none" and s.chroma_url.strip():
        raise ValueError("--embedding none keeps no vectors, so it cannot use a Chroma server; leave out --chroma-url")

    def number(flag: str, var: str, default, kind=float):
        """A numeric setting; a value that is not one names where it came from and what it takes."""
        value = pick(flag, var, default)
        try:
            got = kind(value)
            if math.isnan(got):
                raise ValueError("nan")
            return got
        except (TypeError, ValueError):
            if a.get(flag) is not None:
                where = f"--{flag.replace('_', '-')} {value}"
            else:
                where = f"{var}={value}" + (" (in .env)" if var in file_vals and var not in os.environ else "")
            what = "a whole number" if kind is int else "a number"
            raise ValueError(f"{where} is not {what}; set {var} (or --{flag.replace('_', '-')}) to {what}") from None

    s.confidence = number("confidence", "SLEUTH_CONFIDENCE", s.confidence)
    s.max_iterations = number("max_iterations", "SLEUTH_MAX_ITERATIONS", s.max_iterations, int)
    s.time_limit = number("time_limit", "SLEUTH_TIME_LIMIT", s.time_limit)
    s.max_tokens = number("max_tokens", "SLEUTH_MAX_TOKENS", 0, int)
    s.cache_ttl = number("cache_ttl", "SLEUTH_CACHE_TTL", s.cache_ttl)
    s.crawl_interval = max(0.0, number("crawl_interval", "SLEUTH_CRAWL_INTERVAL", s.crawl_interval))
    s.context_tokens = number("context_tokens", "SLEUTH_CONTEXT_TOKENS", 0, int)
    s.max_cost = number("max_cost", "SLEUTH_MAX_COST", 0.0)
    s.llm_timeout = number("llm_timeout", "SLEUTH_LLM_TIMEOUT", 0.0)
    s.memory_limit = number("memory_limit", "SLEUTH_MEMORY_LIMIT", MEMORY_LIMIT, int)
    if s.context_tokens and s.context_tokens < 512:
        raise ValueError("--context-tokens must be at least 512")
    if s.memory_limit < 0:
        raise ValueError("--memory-limit must be 0 (no cap) or more")
    if s.max_cost < 0 or s.llm_timeout < 0:
        raise ValueError("--max-cost and --llm-timeout cannot be negative")
    if not 0.0 < s.confidence <= 1.0:
        raise ValueError("--confidence must be in (0, 1]")
    if s.time_limit < 0 or s.max_tokens < 0:
        raise ValueError("--time-limit and --max-tokens must be 0 (none) or more")
    if s.max_iterations < 1:
        raise ValueError("--max-iterations must be at least 1")
    tools = pick("tools", "SLEUTH_TOOLS")
    s.tools = parse_tools(tools) if tools else ALL_TOOLS
    s.no_cache = bool(a.get("no_cache"))
    s.allow_private_hosts = bool(a.get("allow_private_hosts")) or _truthy(env.get("SLEUTH_ALLOW_PRIVATE_HOSTS"))
    s.ignore_robots = bool(a.get("ignore_robots")) or _truthy(env.get("SLEUTH_IGNORE_ROBOTS"))
    if a.get("no_remember"):
        s.remember = False
    return s
