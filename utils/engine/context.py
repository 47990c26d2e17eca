"""The context budget: a conservative token estimate, and packing of prompt sections so that a
prompt never exceeds its window — most relevant items first, long page text trimmed to the
passages that share the most terms with the question.

The estimate over-counts on purpose (no tokenizer is loaded): every digit, punctuation mark and
non-Latin character counts as a token of its own, and a run of Latin letters as one token per three
letters. Real tokenizers (BPE, SentencePiece) need fewer for ordinary text, so a prompt packed to
N estimated tokens fits in N real ones. It is additive over concatenation (the estimate of a + b is
at most that of a plus that of b), so sections packed separately add up to an upper bound."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import EngineError

_PIECE = re.compile(r"[A-Za-z]+|\s+|.", re.S)
CHAT_OVERHEAD = 24  # role markers and special tokens a chat template adds around one user message


def estimate_tokens(text: str) -> int:
    n = 0
    for m in _PIECE.finditer(text or ""):
        piece = m.group(0)
        c = piece[0]
        if c.isspace():
            n += 1 if (len(piece) > 1 or c == "\n") else 0  # a single space joins the next word's token
        elif c.isascii() and c.isalpha():
            n += -(-len(piece) // 3)
        else:
            n += 1
    return n


def _cut(text: str, budget: int) -> str:
    """The longest head of `text` within `budget` tokens, cut at a word boundary."""
    if estimate_tokens(text) <= budget:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # binary search on the character count
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) + 1 <= budget:
            lo = mid
        else:
            hi = mid - 1
    head = text[:lo]
    sp = head.rfind(" ")
    if sp > lo * 0.6:
        head = head[:sp]
    return head.rstrip() + "\u2026" if head.strip() else ""


def trim_to_tokens(text: str, budget: int, terms: set[str] | None = None) -> str:
    """Fit `text` into `budget` tokens. With question terms, keep the sentences that share the most
    terms with the question (the opening sentence gets a bonus: pages lead with their subject), in
    page order, marking gaps with an ellipsis; without terms, keep the head."""
    if budget <= 0:
        return ""
    if estimate_tokens(text) <= budget:
        return text
    if not terms:
        return _cut(text, budget)
    from ..text import split_sentences, term_set

    sents = split_sentences(text)
    if len(sents) < 2:
        return _cut(text, budget)
    scored = sorted(range(len(sents)), key=lambda i: (-(len(term_set(sents[i]) & terms) + (1.5 if i == 0 else 0)), i))
    chosen: list[int] = []
    used = 0
    for i in scored:
        cost = estimate_tokens(sents[i]) + 2  # the joiner and a possible gap mark
        if used + cost <= budget:
            chosen.append(i)
            used += cost
        elif not chosen:  # not even the best sentence fits whole: cut it
            return _cut(sents[i], budget)
    chosen.sort()
    parts, prev = [], -1
    for i in chosen:
        if prev >= 0 and i != prev + 1:
            parts.append("\u2026")
        parts.append(sents[i])
        prev = i
    out = " ".join(parts)
    return out if estimate_tokens(out) <= budget else _cut(out, budget)


@dataclass
class Section:
    """One variable part of a prompt: items in order of relevance, joined by `wrap`."""

    name: str
    items: list
    share: float = 1.0  # at most this fraction of the tokens still free when its turn comes
    empty: str = "(none)"
    wrap: Callable[[list[str]], str] | None = None  # formats the chosen items (may reorder them)
    fair: bool = False  # split the allowance evenly between items and trim each (page texts)
    terms: set[str] | None = None  # question terms for relevance trimming


Item = str | tuple[str, str]  # text, or (head kept whole, body that may be trimmed)


def _text(it: Item) -> str:
    return it if isinstance(it, str) else f"{it[0]}\n{it[1]}"


def _trim_item(it: Item, budget: int, terms) -> str:
    if isinstance(it, str):
        return trim_to_tokens(it, budget, terms)
    head = it[0]
    room = budget - estimate_tokens(head) - 1
    body = trim_to_tokens(it[1], room, terms) if room >= 8 else ""
    return f"{head}\n{body}" if body else ""


def _fair_fit(items: list[Item], allowance: int, terms) -> list[str]:
    """Water-filling: short items whole, the long ones share what is left, each trimmed."""
    costs = [estimate_tokens(_text(t)) + 2 for t in items]
    left, pending = allowance, sorted(range(len(items)), key=lambda i: costs[i])
    limits: dict[int, int] = {}
    while pending:
        share = left // len(pending)
        i = pending[0]
        if costs[i] <= share:
            limits[i] = costs[i]
            left -= costs[i]
            pending.pop(0)
        else:
            for j in pending:
                limits[j] = share
            break
    out = []
    for i, t in enumerate(items):
        lim = limits.get(i, 0) - 2
        if lim >= 12:
            out.append(_text(t) if costs[i] <= lim + 2 else _trim_item(t, lim, terms))
    return [t for t in out if t]


def _fit(sec: Section, allowance: int) -> list[str]:
    if sec.fair:
        return _fair_fit(sec.items, allowance, sec.terms)
    chosen, used = [], 0
    for it in sec.items:
        cost = estimate_tokens(_text(it)) + 1
        if used + cost <= allowance:
            chosen.append(_text(it))
            used += cost
        elif allowance - used >= 24:  # room for a useful piece: trim the item into it
            cut = _trim_item(it, allowance - used - 1, sec.terms)
            if cut:
                chosen.append(cut)
            break
        else:
            break
    return chosen


def pack(render: Callable[[dict[str, str]], str], sections: list[Section], budget: int) -> str:
    """Render a prompt whose variable sections are filled in priority order (the list order) so
    that the whole never exceeds `budget` estimated tokens. Raises EngineError when even the fixed
    part (instructions and question) does not fit."""
    wrap = {s.name: (s.wrap or "\n".join) for s in sections}
    filled = {s.name: s.empty for s in sections}
    fixed = estimate_tokens(render(filled))
    if fixed > budget:
        raise EngineError(
            f"context window too small: the prompt's fixed part needs ~{fixed} tokens, the budget is {budget} "
            "(raise --context-tokens)"
        )
    left = budget - fixed
    chosen: dict[str, list[str]] = {}
    for s in sections:
        allowance = int(left * s.share)
        sample = [_text(i)[:200] for i in s.items[:2]]
        framing = estimate_tokens(wrap[s.name](sample)) - sum(map(estimate_tokens, sample))  # tags, headers
        items = _fit(s, allowance - framing) if allowance > framing else []
        chosen[s.name] = items
        if items:
            filled[s.name] = wrap[s.name](items)
            left -= max(0, estimate_tokens(filled[s.name]) - estimate_tokens(s.empty))
    prompt = render(filled)
    while estimate_tokens(prompt) > budget:  # joins cost more than reckoned: drop the least relevant item
        name = next((s.name for s in reversed(sections) if chosen[s.name]), None)
        if name is None:
            raise EngineError(f"context window too small for the prompt (budget {budget} tokens)")
        chosen[name].pop()
        filled[name] = wrap[name](chosen[name]) if chosen[name] else next(s.empty for s in sections if s.name == name)
        prompt = render(filled)
    return prompt
