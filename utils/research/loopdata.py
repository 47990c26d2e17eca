"""The research loop's data, as types: what a Decision chose, what a tool found, the step the
Analyzer reads, what an analysis says, and what the session keeps of it (the numbered sources and
the facts). They are plain Python objects while the loop runs and become JSON only when a session is
saved (research/state.py: `saved_form`, with each type's `to_json`); `restored` reads them back with
`from_json`, which takes the defaults for what an older file lacks and ignores what it does not know.

One meaning per field name: an item's and a fact's `form` is what its text is (a search `snippet`,
a whole `page`, a `kb` passage); a source's `kind` is where it lives (`external` on the web,
`internal` in the knowledge base); an error record's `kind` is why it failed.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from enum import StrEnum
from typing import Literal


class Form(StrEnum):
    """What an item's or a fact's text is. Spelled here only (tests/test_layout.py)."""

    SNIPPET = "snippet"  # a search result's snippet
    PAGE = "page"  # a whole page read (crawled, or a wiki page)
    KB = "kb"  # a knowledge-base passage


class StopReason(StrEnum):
    """Why a research round stopped (research/loopguard.py, the Decision node). Spelled here only
    (tests/test_layout.py); saved in sessions as its string."""

    CONFIDENT = "confident"  # confidence >= threshold
    DECIDED = "decided"  # the engine chose to hand over itself
    EXHAUSTED = "exhausted"  # the offline policy has nothing left to try
    BUDGET = "budget"  # --max-iterations, --max-tokens or --max-cost reached
    LOOP_REPEAT = "loop_repeat"  # the same normalized action+query again
    LOOP_REVISIT = "loop_revisit"  # a URL already visited
    STALL = "stall"  # confidence not improving for 3 analyses
    TOOL_FAILURES = "tool_failures"  # tools failing repeatedly
    NO_TOOLS = "no_tools"  # nothing usable is offered
    TIME_LIMIT = "time_limit"  # --time-limit spent for this round
    INTERRUPTED = "interrupted"  # Ctrl-C; the session can be resumed


Stop = tuple[StopReason, str]  # a stop reason and the detail shown with it


def form_of(value: object, default: Form | None = Form.PAGE) -> Form | None:
    """A saved form read back (older files may hold anything): the Form, or `default`."""
    try:
        return Form(str(value))
    except ValueError:
        return default


@dataclass
class Choice:
    """The decision: what the Decision node chose, remapped to the tools offered (research/actions.py)."""

    action: str
    query_or_url: str
    reasoning: str = ""
    remapped_from: str | None = None  # the engine's choice when it was not offered
    stop_reason: StopReason | None = None  # an engine handing over says why (None: it decided)

    def to_json(self) -> dict:
        return {
            "action": self.action,
            "query_or_url": self.query_or_url,
            "reasoning": self.reasoning,
            "remapped_from": self.remapped_from,
        }


@dataclass
class ToolItem:
    """One thing a tool found: a search result, a page it read, or a knowledge-base passage."""

    url: str  # web URL, or the KB document (path/URL)
    title: str
    text: str  # what the Analyzer reads
    form: Form
    snippet: str = ""  # kept with the source
    tool: str = ""  # the backend that found it ("" = the tool node's own name)
    kb_id: str | None = None  # KB passages: the chunk id
    score: float | None = None  # KB passages: the retrieval score
    linked: bool = False  # KB passages reached by a link from another hit
    lead: bool = False  # the text starts at the document's start
    section: str = ""  # KB passages: the heading path of the chunk ("Title › Section"), "" if none
    links: list[str] = field(default_factory=list)  # pages: the links found in it
    requested: str = ""  # pages: the URL asked for, when a redirect landed elsewhere
    source: int = 0  # its Source's number once recorded (research/state.py: add_source)

    @property
    def internal(self) -> bool:
        """Found in the knowledge base rather than on the web (its source's kind)."""
        return self.form == Form.KB


@dataclass
class ToolOutcome:
    """What one tool step came to (utils/steps.py): the items found, and how the tool fared."""

    ok: bool
    items: list[ToolItem] = field(default_factory=list)
    tool_used: str | None = None  # the tool (or search backend) that produced the items
    error: str | None = None
    errors: list[dict] = field(default_factory=list)  # per backend or URL: {"kind", "message", ...}
    fallback_used: bool = False  # a search backend other than the first asked answered
    retrieval_confidence: float | None = None  # KB searches: the best hit's score
    fetched: list[str] = field(default_factory=list)  # crawls: the URLs asked for (read or refused)
    elapsed_ms: int = 0


@dataclass
class PendingStep:
    """The step in flight: the Decision's choice, then what the tool found, for the Analyzer."""

    step: int
    decision: Choice
    items: list[ToolItem] = field(default_factory=list)
    tool_used: str | None = None  # the tool that produced the items (after remap and fallback)

    @property
    def action(self) -> str:
        return self.decision.action

    @property
    def query_or_url(self) -> str:
        return self.decision.query_or_url

    def to_json(self) -> dict:
        """The saved form (a flat object, as sessions have always held it)."""
        return {
            **self.decision.to_json(),
            "step": self.step,
            "items": [asdict(i) for i in self.items],
            "tool_used": self.tool_used,
        }

    @classmethod
    def from_json(cls, data: dict) -> PendingStep | None:
        """A saved step in flight (None for none); unknown fields of older files are ignored."""
        if not data or "action" not in data:
            return None
        names = {f.name for f in fields(ToolItem)} - {"url", "title", "text", "form"}
        items = [
            ToolItem(
                it.get("url", ""),
                it.get("title", ""),
                it.get("text", ""),
                form_of(it.get("form", it.get("kind"))) or Form.PAGE,  # older files called an item's form `kind`
                **{k: v for k, v in it.items() if k in names},
            )
            for it in data.get("items", [])
            if isinstance(it, dict)
        ]
        decision = Choice(
            data["action"], data.get("query_or_url", ""), data.get("reasoning", ""), data.get("remapped_from")
        )
        return cls(int(data.get("step", 0)), decision, items, data.get("tool_used"))


@dataclass
class Analysis:
    """What an engine's analyze() says about one step."""

    facts: list[Fact]  # what the step's items say that bears on the question, dated with the step
    assessment: str
    confidence_score: float
    suggestions_for_next_step: list[str] = field(default_factory=list)
    new_potential_urls: list[str] = field(default_factory=list)
    inconsistencies_found: str = ""
    notes: dict[str, dict] = field(default_factory=dict)  # engine name -> its notes, kept in the session


@dataclass
class Source:
    """A numbered source: a web page, or a document in the knowledge base (research/state.py: add_source)."""

    n: int  # citation number, 1-based, stable for the session
    title: str = ""
    url: str = ""  # web URL, or the KB document (path/URL) for internal sources
    kb_id: str | None = None  # chunk id for KB hits
    tool: str = ""  # search backend (duckduckgo, searxng, google_cse, google_grounding; old: google) | crawl | kb
    kind: Literal["external", "internal"] = "external"
    snippet: str = ""
    excerpt: str = ""  # bounded text kept to verify citations (research/citations.py); "" in old sessions
    redirected_from: str = ""  # the URL first found (a search redirect link) when crawling landed elsewhere

    def to_json(self) -> dict:
        """The saved form (`redirected_from` only when there was a redirect, as sessions have held it)."""
        data = asdict(self)
        if not self.redirected_from:
            del data["redirected_from"]
        return data

    @classmethod
    def from_json(cls, data: object) -> Source:
        if not isinstance(data, dict) or not isinstance(data.get("n"), int):
            raise ValueError('its "sources" include an entry that is not a numbered source')
        return cls(**{k: v for k, v in data.items() if k in _SOURCE_FIELDS})


@dataclass
class Fact:
    """A passage kept for the report: what one source says that bears on the question. What an
    engine weighed to choose it stays with the engine (its notes, keyed by `key`)."""

    text: str
    source: int  # the number of its Source
    score: float = 0.0  # relevance to the question, 0..1
    step: int = 0  # the step that found it
    form: Form | None = None  # what its text was read from; None when an LLM extracted it

    @property
    def key(self) -> str:
        """The fact's identity across saves: its step, its source and a digest of its text."""
        digest = hashlib.blake2b(self.text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
        return f"{self.step}:{self.source}:{digest}"

    def to_json(self) -> dict:
        """The saved form (`form` only when known, as sessions have held it)."""
        data: dict[str, object] = {"text": self.text, "source": self.source, "score": self.score, "step": self.step}
        if self.form:
            data["form"] = self.form
        return data

    @classmethod
    def from_json(cls, data: object) -> Fact:
        """A saved fact; older files called its `form` `kind` (and held the offline engine's notes, ignored)."""
        if not isinstance(data, dict) or not isinstance(data.get("source"), int):
            raise ValueError('its "extracted_information" include an entry that is not a fact with a source')
        known = {k: v for k, v in data.items() if k in _FACT_FIELDS}
        if "form" not in known and "kind" in data:
            known["form"] = data["kind"]
        if "form" in known:
            known["form"] = form_of(known["form"], None)
        return cls(**{"text": "", **known})


_SOURCE_FIELDS = frozenset(f.name for f in fields(Source))
_FACT_FIELDS = frozenset(f.name for f in fields(Fact))


def to_json(value: object) -> object:
    """`json.dumps(default=...)` for the loop's types: how they are saved."""
    if isinstance(value, PendingStep | Source | Fact):
        return value.to_json()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
