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

from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Literal

Form = Literal["snippet", "page", "kb"]


@dataclass
class Choice:
    """The decision: what the Decision node chose, remapped to the tools offered (research/actions.py)."""

    action: str
    query_or_url: str
    reasoning: str = ""
    remapped_from: str | None = None  # the engine's choice when it was not offered


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
        return self.form == "kb"


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
            **asdict(self.decision),
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
                it.get("form", it.get("kind", "page")),  # older files called an item's form `kind`
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
    """What an engine's analyze() says about one step (the engines' dict, read once, here)."""

    extracted_info: list[dict]  # {"fact", "source", "score"}, and from the offline engine Fact's other fields
    assessment: str
    confidence_score: float
    suggestions_for_next_step: list[str] = field(default_factory=list)
    new_potential_urls: list[str] = field(default_factory=list)
    inconsistencies_found: str = ""

    @classmethod
    def from_data(cls, data: dict) -> Analysis:
        return cls(
            extracted_info=list(data.get("extracted_info", [])),
            assessment=data.get("assessment", ""),
            confidence_score=float(data.get("confidence_score", 0.0)),
            suggestions_for_next_step=list(data.get("suggestions_for_next_step", [])),
            new_potential_urls=list(data.get("new_potential_urls", [])),
            inconsistencies_found=data.get("inconsistencies_found", ""),
        )


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
    """A passage kept for the report: what one source says that bears on the question."""

    text: str
    source: int  # the number of its Source
    score: float = 0.0  # relevance to the question, 0..1
    step: int = 0  # the step that found it (0 while the analyzer is still weighing it)
    qcov: float | None = None  # offline analyzer: weighted share of the question's terms in it; None from an LLM
    form: Form | Literal[""] = ""  # what its text was read from; "" when an LLM extracted it
    retrieval: float | None = None  # KB facts (offline analyzer): the hit's retrieval score
    prior: float = 0.0  # offline analyzer, KB facts: what the KB's ranking of the chunk adds to its rank
    follow_up: bool = False  # offline analyzer: found by a search for a lead, not for the question itself
    sem: float | None = None  # offline analyzer: closeness in meaning to the question (engine/semantic.py)

    def to_json(self) -> dict:
        """The saved form: the analyzer's optional fields only when it set them, as sessions have held it."""
        data = {"text": self.text, "source": self.source, "score": self.score, "step": self.step}
        optional = {"qcov": self.qcov, "form": self.form or None, "retrieval": self.retrieval, "sem": self.sem}
        data |= {k: v for k, v in optional.items() if v is not None}
        data |= {k: v for k, v in (("prior", self.prior), ("follow_up", self.follow_up)) if v}
        return data

    @classmethod
    def from_json(cls, data: object) -> Fact:
        """A saved fact; older files called its `form` `kind`."""
        if not isinstance(data, dict) or not isinstance(data.get("source"), int):
            raise ValueError('its "extracted_information" include an entry that is not a fact with a source')
        known = {k: v for k, v in data.items() if k in _FACT_FIELDS}
        if "form" not in known and "kind" in data:
            known["form"] = data["kind"]
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
