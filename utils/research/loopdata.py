"""The research loop's data in flight, as types: what a Decision chose, what a tool found, the step
the Analyzer reads, and what an analysis says. They are plain Python objects while the loop runs and
become JSON only when a session is saved (`to_json`, called by utils/sessions.py); a session saved
mid-step comes back with `PendingStep.from_json`.

One meaning per field name: an item's and a fact's `form` is what its text is (a search `snippet`,
a whole `page`, a `kb` passage); a source's `kind` (research/state.py) is where it lives
(`external` on the web, `internal` in the knowledge base); an error record's `kind` is why it failed.
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
    source: int = 0  # its source number once recorded (research/state.py: add_source)

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

    extracted_info: list[dict]  # {"fact", "source", "score", and from the offline engine "qcov", "form", "retrieval"}
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


def to_json(value: object) -> object:
    """`json.dumps(default=...)` for the loop's types: how they are saved."""
    if isinstance(value, PendingStep):
        return value.to_json()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
