"""The offline engine: deterministic, extractive, no key and no network.

Decision: a rule-based policy — knowledge base first, then a web search, then read the most
promising unvisited pages, then reformulate the query with salient names learned from the facts
(enough to follow a two-hop question), and finally hand over to the human.
Analyzer: ranks sentences of the tool output against the question and the step's own query,
keeps the best with their sources; confidence from coverage of the question's terms and
agreement across sources. Report: the best-supported sentences with numbered citations.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from ..config import DEFAULT_CONFIDENCE
from ..registry import CRAWL, HITL, SEARCH_KB, SEARCH_WIKI, WEB_SEARCHES
from ..research.feedback import feedback_terms
from ..research.loopdata import ToolItem
from ..text import (
    STOPWORDS,
    bare_title,
    content_terms,
    fold,
    normalize_query,
    split_sentences,
    stem,
    term_set,
    without_marker,
)
from .base import EngineResult
from .protocol import BaseEngine
from .select import about_subject, choose, coverage, named_in, phrase, title_phrase
from .verdict import verdict

WEB_SEARCH = WEB_SEARCHES
MAX_FACTS_PER_ITEM = 3
MAX_FACTS_PER_STEP = 16
MAX_CRAWL_PER_STEP = 3
MIN_SCORE = 0.25
BRIDGE_FROM = 3  # the best facts whose named documents keep their opening sentence

_ENTITY = re.compile(
    r"\b[A-Z][\w'’.\-]*(?:\s+(?:(?:of|the|and|de|da|du|von|van|der|del|la|le|y)\s+)?[A-Z0-9][\w'’.\-]*)*"
)
_COMMON_CAPS = frozenset(
    """the a an in on at he she it they this that these those his her its their there here when where
    what which who how after before during while although however but and or if as by for from with
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday""".split()
)


def _weights(query: str, extra: list[str] = ()) -> dict[str, float]:
    w: dict[str, float] = {}
    caps = {stem(fold(m)) for m in re.findall(r"\b[A-Z][\w]+", query)} - {stem(s) for s in _COMMON_CAPS}
    for t in content_terms(query):
        s = stem(t)
        w[s] = 1.5 if (s in caps or t.isdigit()) else 1.0
    for t in extra:
        w.setdefault(stem(t), 0.5)
    return w


def _slug_terms(url: str) -> set[str]:
    path = unquote(urlsplit(url).path)
    path = re.sub(r"_[0-9a-f]{6}\.html?$|\.html?$", "", path)
    return term_set(re.sub(r"[_/\-.]+", " ", path))


def question_names(query: str) -> list[str]:
    """The names a question asks about, in order: "Lighthouse of Alexandria" in "When was the
    Lighthouse of Alexandria built?", "Scott Derrickson" and "Ed Wood" in "Were Scott Derrickson and
    Ed Wood of the same nationality?" (a capitalised question word is not part of a name)."""
    out: list[str] = []
    for m in _ENTITY.finditer(query):
        for part in re.split(r"\s+and\s+", m.group(0).strip(" .'’-")):
            words = part.split()
            while words and (fold(words[0]) in STOPWORDS or fold(words[0]) in _COMMON_CAPS):
                words.pop(0)
            name = " ".join(words)
            if name and content_terms(name) and name not in out:
                out.append(name)
    return out


def salient_entities(facts: list[dict], query_terms: set[str], limit: int = 3, top: int = 6) -> list[str]:
    """Names in the most question-relevant facts that the question does not mention, best first."""
    scores: dict[str, float] = {}
    best = sorted(facts, key=lambda f: (-f.get("qcov", 0.0), -f.get("score", 0.0)))[:top]
    for f in best:
        weight = f.get("qcov", f.get("score", 0.5))
        for m in _ENTITY.finditer(f["text"]):
            ent = m.group(0).strip(" .'’-")
            toks = content_terms(ent)
            if not toks or fold(ent) in _COMMON_CAPS:
                continue
            if all(stem(t) in query_terms or t in STOPWORDS for t in toks):
                continue
            words = len(ent.split())
            # max, not sum: a generic word found in many facts ("American") must not beat a name
            scores[ent] = max(scores.get(ent, 0.0), weight * (0.6 if words == 1 else 1.0 + 0.25 * min(words - 2, 2)))
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    out: list[str] = []
    for ent, _ in ranked:
        if any(fold(ent) in fold(o) for o in out):
            continue
        out.append(ent)
        if len(out) == limit:
            break
    return out


class OfflineEngine(BaseEngine):
    name = "offline"

    # ------------------------------------------------------------ decision
    def decide(self, ctx: dict) -> EngineResult:
        query = ctx["query"]
        actions = set(ctx["actions"])
        fb = feedback_terms(ctx.get("round_feedback", []))
        round_q = " ".join([query] + fb) if fb else query
        done = {(h["action"], normalize_query(h["query_or_url"])) for h in ctx.get("history", [])}
        failed_engines = {h["action"] for h in ctx.get("history", []) if h["action"] in WEB_SEARCH and not h.get("ok")}
        qterms = term_set(query) | {stem(t) for t in fb}

        def fresh(action: str, q: str) -> bool:
            return action in actions and (action, normalize_query(q)) not in done

        def pick(action: str, q: str, why: str) -> EngineResult:
            return EngineResult({"next_action": action, "query_or_url": q, "reasoning": why}, self.name)

        if fresh(SEARCH_KB, round_q):
            return pick(SEARCH_KB, round_q, "Start with the local knowledge base: it is fast and private.")
        for name in question_names(query):  # an entity question: the wiki has a page about what it names
            if fresh(SEARCH_WIKI, name):
                return pick(SEARCH_WIKI, name, f"Look up '{name}' in the wiki: the question is about it.")
        web = [a for a in WEB_SEARCH if a not in failed_engines] + [a for a in WEB_SEARCH if a in failed_engines]
        for a in web:
            if fresh(a, round_q):
                return pick(a, round_q, "Search the web for the question.")
            if a in actions:
                break  # one web engine per query; the search tool itself falls back to the other

        facts = [f for f in ctx.get("facts", []) if f["source"] not in set(ctx.get("excluded_sources", []))]
        entities = salient_entities(facts, qterms)
        ent_terms = set().union(*(term_set(e) for e in entities)) if entities else set()

        if CRAWL in actions:
            visited = set(ctx.get("visited_urls", []))
            scored = []
            for i, c in enumerate(ctx.get("candidate_urls", [])):
                if c.get("norm", c["url"]) in visited:
                    continue
                terms = term_set(f"{c.get('title', '')} {c.get('snippet', '')}") | _slug_terms(c["url"])
                s = len(terms & qterms) + 2.5 * len(terms & ent_terms)
                if s > 0:
                    scored.append((-s, i, c["url"]))
            if scored:
                urls = [u for _, _, u in sorted(scored)[:MAX_CRAWL_PER_STEP]]
                return pick(CRAWL, " ".join(urls), f"Read the {len(urls)} most promising unvisited page(s).")

        covered = set()
        for f in facts:
            covered |= term_set(f["text"])
        residual = [t for t in content_terms(round_q) if stem(t) not in covered][:3]
        for ent in entities:
            q2 = " ".join([ent] + [t for t in residual if stem(t) not in term_set(ent)])
            for a, q in ((SEARCH_KB, q2), (SEARCH_WIKI, ent), *((w, q2) for w in web)):
                if fresh(a, q):
                    return pick(a, q, f"Follow the lead '{ent}' found in the sources.")
        return EngineResult(
            {
                "next_action": HITL,
                "query_or_url": "",
                "reasoning": "Nothing new left to try with the tools offered.",
            },
            self.name,
            extra={"stop_reason": "exhausted"},
        )

    # ------------------------------------------------------------ analyzer
    def analyze(self, ctx: dict) -> EngineResult:
        query = ctx["query"]
        fb = feedback_terms(ctx.get("feedback", []))
        weights = _weights(query, fb)
        step_q = ctx.get("query_or_url", "") if ctx.get("action") != CRAWL else ""
        known = {fold(f["text"]) for f in ctx.get("facts", [])}
        excluded = set(ctx.get("excluded_sources", []))

        new_facts: list[dict] = []
        unread_leads: dict[int, tuple] = {}  # source -> (item, qcov, opening sentence), if no fact is kept

        def add(it: ToolItem, score: float, qcov: float, sent: str) -> None:
            known.add(fold(sent))
            fact = {
                "fact": sent,
                "source": it.source,
                "score": round(score, 3),
                "qcov": round(qcov, 3),
                "form": it.form,
            }
            if it.form == "kb" and it.score is not None:
                fact["retrieval"] = round(float(it.score), 3)  # the KB's own retrieval score
            new_facts.append(fact)

        for it in ctx.get("items", []):
            # A page reached by a link is read for what it is about (its title), like a crawled page.
            focus = _weights(it.title if it.linked else (step_q or it.title))
            cands = []
            # A sentence about the document's subject (its opening one, or one opening with a pronoun:
            # select.about_subject) is read with the title's words ("Edward Davis Wood Jr. ... was an
            # American filmmaker" under "Ed Wood").
            title_terms = term_set(bare_title(it.title))
            opens = it.lead  # the text starts at the document's start
            # ...and when the question names that title, the opening sentence is kept however few of
            # the question's words it shares: it says what the named thing is.
            named = opens and bool(named_in(query, {0: title_phrase(it.title)}, weights))
            for i, sent in enumerate(split_sentences(it.text)):
                sent = without_marker(sent)
                if not 25 <= len(sent) <= 800 or fold(sent) in known or sent.startswith(("#", "|", "```")):
                    continue
                terms = term_set(sent) | (title_terms if about_subject(sent, opens and i == 0) else set())
                qcov = coverage(terms, weights)
                fcov = coverage(terms, focus) if focus else 0.0
                score = max(qcov, 0.5 * fcov + 0.5 * qcov)
                if score >= MIN_SCORE or (named and i == 0):
                    cands.append((max(score, MIN_SCORE), qcov, sent))
                elif opens and it.source not in unread_leads:
                    unread_leads[it.source] = (it, qcov, sent)
            cands.sort(key=lambda c: -c[0])
            for score, qcov, sent in cands[:MAX_FACTS_PER_ITEM]:
                add(it, score, qcov, sent)
        # A document the best facts name (the bridge of a two-hop question) keeps its opening sentence
        # even when that shares few words with the question: it says what the named thing is.
        have = {f["source"] for f in new_facts}
        best = sorted(new_facts, key=lambda f: -f["score"])[:BRIDGE_FROM] + ctx.get("facts", [])[:BRIDGE_FROM]
        named_text = phrase(" ".join(f.get("fact", f.get("text", "")) for f in best))
        for src, (it, qcov, sent) in unread_leads.items():
            if src not in have and (title_phrase(it.title) or "\0") in named_text:
                add(it, MIN_SCORE, qcov, sent)
        # Every document keeps its best passage (a linked page may hold the second half of the
        # answer while sharing few words with the question); the rest compete on score.
        firsts, seen_src = [], set()
        for f in sorted(new_facts, key=lambda f: -f["score"]):
            if f["source"] not in seen_src:
                seen_src.add(f["source"])
                firsts.append(f)
        rest = sorted((f for f in new_facts if f not in firsts), key=lambda f: -f["score"])
        new_facts = sorted(firsts + rest[: max(0, MAX_FACTS_PER_STEP - len(firsts))], key=lambda f: -f["score"])

        all_facts = [{"qcov": 0.0, "form": "page", **f} for f in ctx.get("facts", [])] + [
            {"text": f["fact"], **{k: v for k, v in f.items() if k != "fact"}} for f in new_facts
        ]
        all_facts = [f for f in all_facts if f["source"] not in excluded]
        conf, cov = self._confidence(all_facts, weights)

        qterms = set(weights)
        ents = salient_entities(all_facts, qterms)
        ent_terms = set().union(*(term_set(e) for e in ents))
        urls: list[tuple[float, str]] = []
        for it in ctx.get("items", []):
            if it.form == "snippet" and it.url.startswith("http"):
                urls.append((len(term_set(it.title + " " + it.text) & qterms) + 0.5, it.url))
            for link in it.links[:300]:
                slug = _slug_terms(link)
                s = len(slug & qterms) + 1.5 * len(slug & ent_terms)
                if s > 0:
                    urls.append((s, link))
        seen, new_urls = set(), []
        for _, u in sorted(urls, key=lambda x: -x[0]):
            if u not in seen:
                seen.add(u)
                new_urls.append(u)
        sources = {f["source"] for f in new_facts}
        suggestions = [f"read {u}" for u in new_urls[:2]]
        if ents:
            suggestions.append(f"search for '{ents[0]}'")
        data = {
            "extracted_info": new_facts,
            "assessment": (
                f"{len(new_facts)} relevant passage(s) from {len(sources)} source(s) in this step; "
                f"the facts so far cover {cov:.0%} of the question's key terms."
            ),
            "confidence_score": conf,
            "suggestions_for_next_step": suggestions,
            "new_potential_urls": new_urls[:10],
            "inconsistencies_found": "",
        }
        return EngineResult(data, self.name)

    @staticmethod
    def _confidence(facts: list[dict], weights: dict[str, float]) -> tuple[float, float]:
        if not facts or not weights:
            return 0.0, 0.0
        # What the facts themselves say: a sentence read with its document's title (select.about_subject)
        # ranks higher among facts, but the title's words are not evidence the answer was found.
        said = [(f, coverage(terms, weights), terms) for f in facts for terms in [term_set(f["text"])]]
        union: set[str] = set()
        for _, c, terms in said:
            if c >= 0.2:
                union |= terms
        cov = coverage(union, weights)
        best = max(c * _trust(f) for f, c, _ in said)
        support = len({f["source"] for f, c, _ in said if c >= 0.4})
        conf = 0.45 * cov + 0.35 * best + 0.2 * min(1.0, support / 2)
        return round(min(conf, 0.95), 3), cov

    # ------------------------------------------------------------ report
    def report(self, ctx: dict, on_chunk=None) -> EngineResult:
        query = ctx["query"]
        weights = _weights(query, feedback_terms(ctx.get("feedback", [])))
        excluded = set(ctx.get("excluded_sources", []))
        facts = [f for f in ctx.get("facts", []) if f["source"] not in excluded]
        facts.sort(key=lambda f: (-f.get("qcov", 0), -f.get("score", 0)))
        full_text_sources = {f["source"] for f in facts if f.get("form") in ("page", "kb")}
        facts = [f for f in facts if not (f.get("form") == "snippet" and f["source"] in full_text_sources)]
        chosen = choose(query, facts, ctx.get("sources", []), weights)
        decided = verdict(query, chosen, facts, ctx.get("sources", []), weights)
        if decided:  # a yes/no comparison the facts settle: say so first, and state both facts
            chosen += [f for f in decided[1] if f not in chosen]
        if not chosen:
            text = "I could not find information that answers this question with the tools available. " + (
                ctx.get("why_nothing") or ""
            )
        else:
            text = " ".join(([decided[0]] if decided else []) + [f"{_sentence(f)} [{f['source']}]" for f in chosen])
        conf = round(ctx.get("confidence", 0.0), 2)  # compare what the reader sees
        if chosen and conf < ctx.get("threshold", DEFAULT_CONFIDENCE):
            text += (
                f"\n\n_Confidence {conf:.2f} is below the threshold {ctx.get('threshold', DEFAULT_CONFIDENCE):.2f}: "
                "treat this as a lead to check, not a settled answer._"
            )
        return EngineResult(text.strip(), self.name)


def _trust(fact: dict) -> float:
    """How much a fact's wording can be taken at face value: snippets are cut short, and a KB
    passage counts in proportion to the KB's own retrieval score."""
    if fact.get("form") == "snippet":
        return 0.75
    if fact.get("form") == "kb" and "retrieval" in fact:
        return 0.6 + 0.4 * fact["retrieval"]
    return 1.0


def _sentence(fact: dict) -> str:
    text = fact["text"].strip()
    if fact.get("form") == "snippet" and not text.endswith((".", "!", "?", '"', "\u201d")):
        text += "\u2026"  # search snippets are cut short: say so
    return text
