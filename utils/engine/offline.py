"""The offline engine: deterministic, extractive, no key and no network.

Decision: a rule-based policy — knowledge base first, then a web search, then read the most
promising unvisited pages, then reformulate the query with salient names learned from the facts
(enough to follow a two-hop question), and finally hand over to the human.
Analyzer: ranks sentences of the tool output against the question and the step's own query,
keeps the best with their sources; confidence from coverage of the question's terms and
agreement across sources. Report: the best-supported sentences with numbered citations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from urllib.parse import urlsplit

from ..registry import CRAWL, HITL, SEARCH_KB, SEARCH_WIKI, WEB_SEARCHES
from ..research.feedback import feedback_terms
from ..research.loopdata import Analysis, Choice, Fact, Form, Source, StopReason, ToolItem
from ..text import bare_title, content_terms, fold, normalize_query, stem, term_set
from ..urls import link_title, normalize_url, path_words
from .leads import anchors, question_names, salient_entities
from .notes import Weighed, kb_idf, weighed, with_facts
from .passages import (
    FEATURES,
    KB_FEATURES,
    confidence_features,
    coverage,
    is_quotable,
    passages,
    plain_heading,
    question_parts,
    question_weights,
    refers_back,
    with_subject,
)
from .protocol import Answer, BaseEngine, EngineContext, EngineResult
from .reader import Candidate, default_reader
from .recent import Recent
from .select import about_subject, choose, named_in, phrase, title_phrase
from .tuning import OFFLINE as T
from .values import asks_for, code_names, code_share, holds, limit_word
from .verdict import asks_yes_no, verdict

WEB_SEARCH = WEB_SEARCHES


def _slug_terms(url: str) -> set[str]:
    return term_set(path_words(urlsplit(url).path))


class OfflineEngine(BaseEngine):
    name = "offline"
    ANSWERS_KEPT = 16  # answers composed lately, kept for the report (batch jobs share the engine)

    def __init__(self) -> None:
        super().__init__()
        self._answers: Recent[tuple[list[Weighed], tuple | None]] = Recent(self.ANSWERS_KEPT)

    def _answer(self, query: str, facts: list[Weighed], sources: list[Source], weights: dict[str, float]):
        """answer_facts, composed once for the same inputs: a step's analysis composes the answer to
        weigh it, and the report that follows (same facts, sources and weights) reuses it."""
        said = tuple(
            (f.text, f.source, f.score, f.step, f.form, f.qcov, f.retrieval, f.prior, f.follow_up, f.sem) for f in facts
        )
        read = tuple((s.n, s.title, s.url, s.snippet, s.excerpt) for s in sources)
        key = (query, tuple(weights.items()), said, read)
        return self._answers.get(key, lambda: answer_facts(query, facts, sources, weights))

    # ------------------------------------------------------------ decision
    def decide(self, ctx: EngineContext) -> EngineResult[Choice]:
        query = ctx.query
        actions = set(ctx.actions)
        fb = feedback_terms(list(ctx.round_feedback))
        round_q = " ".join([query] + fb) if fb else query
        done = {(h["action"], normalize_query(h["query_or_url"])) for h in ctx.history}
        failed_engines = {h["action"] for h in ctx.history if h["action"] in WEB_SEARCH and not h.get("ok")}
        qterms = term_set(query) | {stem(t) for t in fb}

        def fresh(action: str, q: str) -> bool:
            return action in actions and (action, normalize_query(q)) not in done

        def pick(action: str, q: str, why: str) -> EngineResult[Choice]:
            return EngineResult(Choice(action, q, why), self.name)

        limit = limit_word(query)  # a limit is searched for with the words that state one
        first = f"{round_q} {limit}" if limit else round_q
        if fresh(SEARCH_KB, first):
            return pick(SEARCH_KB, first, "Start with the local knowledge base: it is fast and private.")
        parts = question_parts(query)  # a two-part question: each part's passages, searched on its own too
        for part in parts:
            if fresh(SEARCH_KB, part):
                return pick(SEARCH_KB, part, "Search the knowledge base for one part of the question on its own.")
        for name in question_names(query):  # an entity question: the wiki has a page about what it names
            if fresh(SEARCH_WIKI, name):
                return pick(SEARCH_WIKI, name, f"Look up '{name}' in the wiki: the question is about it.")
        web = [a for a in WEB_SEARCH if a not in failed_engines] + [a for a in WEB_SEARCH if a in failed_engines]
        searches = [(round_q, "Search the web for the question.")]
        searches += [(part, "Search the web for one part of the question.") for part in parts]
        for q, why in searches:
            for a in web:
                if fresh(a, q):
                    return pick(a, q, why)
                if a in actions:
                    break  # one web engine per query; the search tool itself falls back to the other

        excluded = set(ctx.excluded_sources)
        facts = [f for f in weighed(ctx.facts, ctx.notes) if f.source not in excluded]
        weights = question_weights(query)
        entities = salient_entities(facts, qterms, named=anchors(query, list(ctx.sources), weights))
        ent_terms = set().union(*(term_set(e) for e in entities)) if entities else set()

        if CRAWL in actions:
            visited = set(ctx.visited_urls)
            scored = []
            for i, c in enumerate(ctx.candidate_urls):
                if c.get("norm", c["url"]) in visited:
                    continue
                terms = term_set(f"{c.get('title', '')} {c.get('snippet', '')}") | _slug_terms(c["url"])
                s = len(terms & qterms) + 2.5 * len(terms & ent_terms)
                if s >= T.MIN_CRAWL_SCORE:
                    # A page titled with a name the question asks about is read first: it is about that name.
                    title = title_phrase(c.get("title") or link_title(c["url"]))
                    scored.append((-bool(named_in(query, {0: title}, weights)), -s, i, c["url"]))
            if scored:
                urls = [u for *_, u in sorted(scored)[: T.MAX_CRAWL_PER_STEP]]
                return pick(CRAWL, " ".join(urls), f"Read the {len(urls)} most promising unvisited page(s).")

        covered = set()
        for f in facts:
            covered |= term_set(f.text)
        residual = [t for t in content_terms(round_q) if stem(t) not in covered][:3]
        for ent in entities:
            q2 = " ".join([ent] + [t for t in residual if stem(t) not in term_set(ent)])
            for a, q in ((SEARCH_KB, q2), (SEARCH_WIKI, ent), *((w, q2) for w in web)):
                if fresh(a, q):
                    return pick(a, q, f"Follow the lead '{ent}' found in the sources.")
        why = "Nothing new left to try with the tools offered."
        return EngineResult(Choice(HITL, "", why, stop_reason=StopReason.EXHAUSTED), self.name)

    # ------------------------------------------------------------ analyzer
    def analyze(self, ctx: EngineContext) -> EngineResult[Analysis]:
        """Facts from the step's items (_Reading.item), the documents the best facts name (_bridge_leads),
        one best passage per document then the rest by score (_keep), confidence, pages to read next."""
        query = ctx.query
        idf = kb_idf(ctx.notes, ctx.history, ctx.term_idf)  # the KB's word rarity, this step's search included
        weights = question_weights(query, feedback_terms(list(ctx.feedback)), idf[0])
        # A sentence already kept is not kept again, unless it was kept from a search snippet: read on
        # its page, it becomes a fact of the page (the report drops snippets of pages it has read).
        known = {fold(f.text) for f in ctx.facts if f.form != Form.SNIPPET}
        excluded = set(ctx.excluded_sources)
        step = ctx.step.step if ctx.step else 0
        new_facts: list[Weighed] = []
        unread_leads: dict[int, tuple] = {}  # source -> (item, qcov, opening sentence), if no fact is kept
        kb_rank = 0
        # A search for a lead the facts brought up (not for the question itself) finds the second hop of
        # a two-hop question, but seldom the passage that opens the answer.
        step_q = ctx.step.query_or_url if ctx.step and ctx.step.action != CRAWL else ""
        follow_up = bool(step_q) and not term_set(query) <= term_set(step_q) and step_q not in question_parts(query)
        read = _Reading(query, weights, step_q, idf[0].get if idf[0] else None)
        for it in ctx.items:
            cands, lead = read.item(it, known)
            # The KB ranked whole chunks against the question: its best chunks more likely hold the answer.
            prior = T.RANK_PRIOR / (1 + kb_rank) if it.form == Form.KB and not it.linked else 0.0
            kb_rank += it.form == Form.KB
            # A page the question names is its first hop: its sentences name the second.
            first_hop = bool(named_in(query, {0: title_phrase(it.title)}, weights))
            for score, qcov, sent, sem in cands[: T.MAX_FACTS_PER_ITEM + T.NAMED_EXTRA_FACTS * first_hop]:
                known.add(fold(sent))
                new_facts.append(_fact(it, sent, score + prior, qcov, prior, follow_up, sem))
            if lead and it.source not in unread_leads:
                unread_leads[it.source] = lead
        new_facts += _bridge_leads(new_facts, list(ctx.facts), unread_leads)
        new_facts = [replace(f, step=step) for f in _keep(new_facts)]  # dated with their step

        # A fact an LLM extracted counts as read from a page, and as covering none of the question.
        old = [
            f if f.qcov is not None and f.form else replace(f, qcov=f.qcov or 0.0, form=f.form or Form.PAGE)
            for f in weighed(ctx.facts, ctx.notes)
        ]
        all_facts = [f for f in old + new_facts if f.source not in excluded]
        sources = list(ctx.sources)
        conf = self._confidence(all_facts, weights, query, sources, idf[0])
        if all(f.form == Form.SNIPPET for f in all_facts):  # search snippets alone settle nothing
            conf = min(conf, T.SNIPPETS_ONLY_CAP)
        # the names to follow, once for the pages to read next, the bridge check and the suggestion
        named = anchors(query, sources, weights)  # the sources the question names
        ents = salient_entities(all_facts, set(weights), limit=max(3, T.BRIDGE_NAMES), named=named)
        new_urls = _next_urls(ctx.items, set(weights), ents[:3])
        if _unread_bridge(ents[: T.BRIDGE_NAMES], _unread_titles(ctx, new_urls)):
            conf = min(conf, T.UNREAD_BRIDGE_CAP)
        if _unnamed(query, all_facts, sources):
            conf = min(conf, T.UNKNOWN_NAME_CAP)
        found_in = {f.source for f in new_facts}
        suggestions = [f"read {u}" for u in new_urls[:2]] + ([f"search for '{ents[0]}'"] if ents else [])
        analysis = Analysis(
            facts=[f.fact() for f in new_facts],
            assessment=(
                f"{len(new_facts)} relevant passage(s) from {len(found_in)} source(s) in this step; "
                f"confidence {conf:.2f} that the answer is right."
            ),
            confidence_score=conf,
            suggestions_for_next_step=suggestions,
            new_potential_urls=new_urls[:10],
            notes=with_facts(ctx.notes, new_facts, idf),
        )
        return EngineResult(analysis, self.name)

    def _confidence(
        self,
        facts: list[Weighed],
        weights: dict[str, float],
        query: str,
        sources: list[Source],
        idf: dict | None = None,
    ) -> float:
        """How likely the answer the report would give now is right: a logistic model of what its facts
        say (passages.confidence_features), fitted by bench/calibrate.py; with the KB's word rarity
        (`idf`), the KB model (CONF_KB_*, `calibrate.py --kb`), which weighs two features more."""
        if not facts or not weights:
            return 0.0
        answer, decided = self._answer(query, facts, sources, weights)
        x = confidence_features(answer, facts, weights, query, bool(decided), idf)
        if idf:  # a KB large enough to say how rare the question's words are
            z = T.CONF_KB_INTERCEPT + sum(T.CONF_KB_WEIGHTS[k] * x[k] for k in KB_FEATURES)
        else:
            z = T.CONF_INTERCEPT + sum(T.CONF_WEIGHTS[k] * x[k] for k in FEATURES)
        p = min(1 / (1 + math.exp(-z)), T.CONF_MAX)
        if not decided and asks_yes_no(query):  # the answer says neither yes nor no
            p = min(p, T.NO_VERDICT_CAP)
        return round(p, 3)

    # ------------------------------------------------------------ report
    def report(self, ctx: EngineContext, on_chunk: Callable[[str], None] | None = None) -> EngineResult[Answer]:
        query = ctx.query
        idf = kb_idf(ctx.notes, ctx.history, ctx.term_idf)[0]
        weights = question_weights(query, feedback_terms(list(ctx.feedback)), idf)
        excluded = set(ctx.excluded_sources)
        facts = [f for f in weighed(ctx.facts, ctx.notes) if f.source not in excluded]
        sources = list(ctx.sources)
        chosen, decided = self._answer(query, facts, sources, weights)
        conf = round(ctx.confidence, 2)  # compare what the reader sees
        threshold = ctx.threshold
        if not chosen:
            text = "I could not find information that answers this question with the tools available. " + (
                ctx.why_nothing or ""
            )
        elif not decided and _not_answered(query, chosen, facts, sources):
            missing = "".join(f"Nothing read mentions {n}. " for n in _unnamed(query, facts, sources))
            text = (
                f"The sources read do not appear to answer this question. {missing}These passages come closest. "
                + " ".join(f"{_sentence(f)} [{f.source}]" for f in chosen)
            )
        else:
            text = " ".join(([decided[0]] if decided else []) + [f"{_sentence(f)} [{f.source}]" for f in chosen])
        if chosen and conf < threshold:
            text += (
                f"\n\n_Confidence {conf:.2f} is below the threshold {threshold:.2f}: "
                "treat this as a lead to check, not a settled answer._"
            )
        return EngineResult(Answer(text.strip()), self.name)


def answer_facts(query: str, facts: list[Weighed], sources: list[Source], weights: dict[str, float]):
    """(the facts an answer states, in order; a yes/no verdict and the facts it rests on, or None).

    Facts are ranked by the question alone (a follow-up search's own words made some score high in
    their step): first those about the question that hold the value it asks for, then by coverage,
    the value and the KB's ranking of their chunk. The best-ranked passage opens the answer, with the
    next one from the same document, and (for a default or an amount it does not state) the best one
    from the same chunk that does; select.choose adds the pair of documents that answers together
    (a two-hop question) and the documents the question names."""
    wants = asks_for(query)

    # With the sentence model (semantic.py), closeness in meaning joins the words in the rank, and
    # holding a value of the kind asked for no longer puts a fact first: the model tells better which
    # of the facts that hold a number is about the question.
    meaning = any(f.sem is not None for f in facts)

    def on_topic(f: Weighed, value: bool) -> bool:  # it holds the value asked for, and is about the subject
        return value and (f.qcov or 0) >= T.VALUE_FIRST_QCOV

    # A question in prose that names no code is answered in prose: a passage mostly of code (a
    # signature, a command line) answers it less well than its words and meaning suggest.
    prose = wants != "code" and not code_names(query)

    def rank(f: Weighed) -> tuple:
        value = holds(wants, f.text, query)
        strength = (f.qcov or 0) + T.VALUE_BONUS * value + f.prior - T.FOLLOW_UP_PENALTY * f.follow_up
        strength += T.ANSWER_MEANING_WEIGHT * (f.sem or 0)
        strength -= T.CODE_PENALTY * prose * code_share(f.text)
        return (-(on_topic(f, value) and not meaning), -strength, -f.score)

    # A sentence quoted alone and again inside a longer quote (joined to the sentence after it that holds
    # the value, under its heading, or as an item of the list a line introduces, where it ends with ";"
    # not ".") is one passage: the fuller quote stands for both, ranked as the better of the two.
    ranks = {id(f): rank(f) for f in facts}

    def within(f: Weighed, g: Weighed) -> bool:
        return g.source == f.source and len(g.text) > len(f.text) and f.text.rstrip(" .;,") in g.text

    inside: set[int] = set()
    for f in facts:
        for g in facts:
            if within(f, g):
                ranks[id(g)] = min(ranks[id(g)], ranks[id(f)])
                inside.add(id(f))
    facts = sorted((f for f in facts if id(f) not in inside), key=lambda f: ranks[id(f)])
    full_text_sources = {f.source for f in facts if f.form in (Form.PAGE, Form.KB)}
    facts = [f for f in facts if not (f.form == Form.SNIPPET and f.source in full_text_sources)]
    if not facts:
        return [], None
    chosen = choose(query, facts, sources, weights, lead=on_topic(facts[0], holds(wants, facts[0].text, query)))
    top = facts[:1]
    said = term_set(facts[0].text)
    for f in facts[1 : T.LEAD_FACTS]:  # the next passage of the same document, if it adds to the first
        own = term_set(f.text)
        adds = (
            coverage(own - said, weights) >= T.LEAD_GAIN
            or (holds(wants, f.text, query) and not holds(wants, facts[0].text, query))
            or len(own - said) >= T.LEAD_NEW * len(own)  # it says something else, not the first again
        )
        if f.source == facts[0].source and adds:
            top.append(f)
    if wants in ("default", "number") and not any(holds(wants, f.text, query) for f in top):
        # The passage that opens the answer names the subject; the value may come later in its chunk
        # ("Sets the shortest pause between indexer passes. [...] The default is ninety seconds.").
        # Facts of one chunk share their document, step and rank prior.
        lead = facts[0]
        same = (lead.source, lead.step, lead.prior)
        top += [f for f in facts[1:] if (f.source, f.step, f.prior) == same and holds(wants, f.text, query)][:1]
    top += [f for f in _part_values(query, facts, top + chosen) if f not in top]
    chosen = (top + [f for f in chosen if f not in top])[: T.MAX_ANSWER_FACTS]
    decided = verdict(query, chosen, facts, sources, weights)
    if decided:  # a yes/no comparison the facts settle: say so first, and state both facts
        chosen += [f for f in decided[1] if f not in chosen]
    return chosen, decided


def _part_values(query: str, facts: list[Weighed], chosen: list[Weighed]) -> list[Weighed]:
    """For a two-part question, the best-ranked fact that holds the kind of value a part asks for and
    is about that part (its own words, not the other part's), when no fact chosen does: "How do I
    sign a letter, and which signing scheme applies unless I pick one?" gets the command as well as the
    default."""

    def answers(f: Weighed, kind: str, part: str, own: set[str]) -> bool:
        return holds(kind, f.text, part) and not own.isdisjoint(term_set(f.text))

    parts = question_parts(query)
    out: list[Weighed] = []
    for part in parts:
        kind = asks_for(part)
        if not kind:
            continue
        others = set().union(*(term_set(p) for p in parts if p != part))
        own = term_set(part) - others
        if not own:
            continue
        if not any(answers(f, kind, part, own) for f in chosen + out):
            out += [f for f in facts if answers(f, kind, part, own)][:1]
    return out


def _not_answered(query: str, chosen: list[Weighed], facts: list[Weighed], sources: list[Source]) -> bool:
    """Whether what the answer would quote visibly fails the question: a name in code it asks about is
    in nothing read, or it asks for a kind of value (a default, a number, a release) that no quoted
    passage holds. A low confidence alone is not enough: the confidence line says how far to trust it."""
    wants = asks_for(query)
    return bool(_unnamed(query, facts, sources)) or (
        wants is not None and not any(holds(wants, f.text, query) for f in chosen)
    )


def _unnamed(query: str, facts: Sequence[Fact], sources: Sequence[Source]) -> list[str]:
    """The names in code the question asks about that nothing read mentions (the text kept of each
    source, its facts): the documents read do not cover them ("--env-file" in docs older than it)."""
    names = code_names(query)
    if not names:
        return []
    read = fold(" ".join([f.text for f in facts] + [f"{s.title} {s.snippet} {s.excerpt}" for s in sources]))
    # "tank.level" is mentioned where a page about tank names "level" alone
    return [n for n in names if fold(n) not in read and fold(n.rsplit(".", 1)[-1]) not in read]


def _sentence(fact: Weighed) -> str:
    text = fact.text.strip()
    if fact.form == Form.SNIPPET and not text.endswith((".", "!", "?", '"', "\u201d")):
        text += "\u2026"  # search snippets are cut short: say so
    return text


class _Reading:
    """How one analysis step reads its items: the question's weights, the kind of value it asks
    for, and the step's own query (a follow-up search reads its results for what it looked for)."""

    def __init__(
        self, query: str, weights: dict[str, float], step_query: str, idf: Callable[[str], float | None] | None = None
    ):
        self.query, self.weights, self.step_query = query, weights, step_query
        self.idf = idf  # the KB's word rarity, for a trained reader (reader.py)
        self.wants = asks_for(query)

    def item(self, it: ToolItem, known: set[str]) -> tuple[list[tuple[float, float, str, float | None]], tuple | None]:
        """(candidates (score, qcov, quote, closeness in meaning) best first, the item's opening lead
        when nothing scored)."""
        title = it.title
        # A page reached by a link is read for what it is about (its title), like a crawled page.
        focus = question_weights(title if it.linked else (self.step_query or title))
        # A sentence about the document's subject (its opening one, or one opening with a pronoun:
        # select.about_subject) is read with the title's words ("Ivo Karl Brandt ... was a
        # Norlish clockmaker" under "Ivo Brandt").
        title_terms = term_set(bare_title(title))
        opens = it.lead  # the text starts at the document's start
        # ...and when the question names that title, the opening sentence is kept however few of
        # the question's words it shares: it says what the named thing is.
        named = opens and bool(named_in(self.query, {0: title_phrase(title)}, self.weights))
        cands: list[tuple[float, float, str, Candidate]] = []
        lead = None
        first = True  # the document's first sentence (a heading above it, e.g. its <h1>, does not count)
        for p in passages(it.text, it.section):
            opening = opens and first and not p.title_line
            first = first and p.title_line
            if p.code and self.wants != "code":
                continue
            quote, value = self.quote(p)
            if not is_quotable(quote) or fold(quote) in known:
                continue
            shown = with_subject(quote, p, it.title)
            if shown != quote and fold(shown) in known:
                continue
            # what a line ending with a colon introduces is quoted with it, but the line is scored on
            # its own words: the words of a whole list would outscore the sentence that answers
            said = quote.removesuffix(f" {p.then}") if p.then else quote
            if it.form == Form.SNIPPET and not term_set(said) - set(self.weights) - title_terms:
                continue  # a search snippet in the question's own words says nothing of the page
            terms = term_set(said) | (title_terms if about_subject(quote, opening) else set())
            qcov = coverage(terms, self.weights)
            framed = coverage(terms | p.context, self.weights)
            full = qcov + T.CONTEXT_WEIGHT * (framed - qcov)
            score = max(full, T.FOCUS_WEIGHT * coverage(terms | p.context, focus) + (1 - T.FOCUS_WEIGHT) * full)
            score += T.VALUE_BONUS * value
            if score >= T.MIN_SCORE or (named and opening):
                # The reader reads the sentence under its heading: "added: v5.4.2" is about what its
                # heading names, as the words of a sentence's frame count for it above.
                head = f"{it.section} › {plain_heading(p.heading)}" if p.heading else it.section
                cands.append((max(score, T.MIN_SCORE), full, shown, Candidate(quote, head)))
            elif opens and lead is None:
                lead = (it, qcov, quote)
        cands.sort(key=lambda c: -c[0])
        return self.by_meaning(cands), lead

    def by_meaning(
        self, cands: list[tuple[float, float, str, Candidate]]
    ) -> list[tuple[float, float, str, float | None]]:
        """The best candidates by words (score, qcov, quote, the passage under its heading), re-ranked by
        the reader (reader.py; by default the sentence model's closeness in meaning to the question:
        words alone cannot tell which of several sentences on the subject answers it). When the reader
        cannot score (no sentence model), the ranking by words stands."""
        sims = default_reader().scores(self.query, [c for *_, c in cands[: T.MEANING_CANDIDATES]], self.idf)
        plain = [(score, qcov, quote) for score, qcov, quote, _ in cands]
        top = plain[: T.MEANING_CANDIDATES]
        if sims is None:
            return [(*c, None) for c in plain]
        ranked: list[tuple[float, float, str, float | None]] = sorted(
            ((score + T.MEANING_WEIGHT * s, qcov, quote, s) for (score, qcov, quote), s in zip(top, sims, strict=True)),
            key=lambda c: -c[0],
        )
        return ranked + [(*c, None) for c in plain[T.MEANING_CANDIDATES :]]

    def quote(self, p) -> tuple[str, bool]:
        """What to quote for a passage, and whether that holds the value asked for: the sentence; or,
        when the value is in the heading it sits under, the heading and the sentence; or, when it is
        a short value line that closes a short paragraph (an option's list item), the whole paragraph;
        or, when the value is in it but its subject is in the sentence before, that sentence and this
        one; or, when it is a short value line opening what a heading names ("added: v5.4.2." under
        "make_widget()"), or a sentence opening it that refers back to it ("This variable overrides ..."
        under "SPOOL_CHIME"), the heading and the line."""
        sent = p.text
        headed = bool(p.heading) and p.heading != sent  # it sits under a heading-like line
        # "The main differences are:" and the list, when that fits a quote with its heading or sentence before
        if p.then and len(p.heading) + len(p.before) + len(sent) + len(p.then) + 4 < T.MAX_CHARS:
            sent = f"{sent} {p.then}"

        def under() -> str:
            return f"{plain_heading(p.heading)}: {sent}"

        if holds(self.wants, sent, self.query):
            if p.before and len(sent) < T.MIN_CHARS and p.item and len(p.item) <= T.ITEM_MAX_CHARS:
                return p.item, True  # an option's entry: what it is, then "Default: `512 * 64`."
            if p.before and (
                len(sent) < T.MIN_CHARS
                or coverage(term_set(p.before) | p.own, self.weights) - coverage(p.own, self.weights) >= T.JOIN_GAIN
            ):
                return f"{p.before} {sent}", True
            if headed and not p.before and (len(sent) < T.MIN_CHARS or refers_back(sent)):
                return under(), True
            return sent, True
        if headed and holds(self.wants, plain_heading(p.heading), self.query):
            return under(), True
        if headed and not p.before and refers_back(sent):
            return under(), False  # "SPOOL_CHIME: This variable overrides the alert sound."
        return sent, False


def _fact(
    it: ToolItem,
    sent: str,
    score: float,
    qcov: float,
    prior: float = 0.0,
    follow_up: bool = False,
    sem: float | None = None,
) -> Weighed:
    return Weighed(
        sent,
        it.source,
        round(score, 3),
        qcov=round(qcov, 3),
        form=it.form,
        retrieval=round(float(it.score), 3) if it.form == Form.KB and it.score is not None else None,
        prior=round(prior, 3),  # what the KB's ranking of its chunk adds
        follow_up=follow_up,
        sem=sem,
    )


def _bridge_leads(new_facts: list[Weighed], old_facts: Sequence[Fact], unread_leads: dict[int, tuple]) -> list[Weighed]:
    """A document the best facts name (the bridge of a two-hop question) keeps its opening sentence
    even when that shares few words with the question: it says what the named thing is."""
    have = {f.source for f in new_facts}
    best = [*sorted(new_facts, key=lambda f: -f.score)[: T.BRIDGE_FROM], *old_facts[: T.BRIDGE_FROM]]
    named_text = phrase(" ".join(f.text for f in best))
    return [
        _fact(it, sent, T.MIN_SCORE, qcov)
        for src, (it, qcov, sent) in unread_leads.items()
        if src not in have and (title_phrase(it.title) or "\0") in named_text
    ]


def _keep(new_facts: list[Weighed]) -> list[Weighed]:
    """Every document keeps its best passage (a linked page may hold the second half of the answer
    while sharing few words with the question); the rest compete on score."""
    firsts, seen_src = [], set()
    for f in sorted(new_facts, key=lambda f: -f.score):
        if f.source not in seen_src:
            seen_src.add(f.source)
            firsts.append(f)
    rest = sorted((f for f in new_facts if f not in firsts), key=lambda f: -f.score)
    return sorted(firsts + rest[: max(0, T.MAX_FACTS_PER_STEP - len(firsts))], key=lambda f: -f.score)


def _unread_titles(ctx: EngineContext, new_urls: list[str]) -> list[str]:
    """Pages found but not read, while reading is possible: search results by their titles, links
    (this step's too) by the title their address spells."""
    if not ctx.can_crawl:
        return []
    found = ctx.candidate_urls
    titles = [c["title"] for c in found if c.get("title")][:50]
    read_before = set(ctx.visited_urls)
    links = [u for u in new_urls if normalize_url(u) not in read_before]
    return titles + [link_title(u) for u in [c["url"] for c in found if not c.get("title")][:50] + links]


def _unread_bridge(leads: list[str], unread_titles: list[str]) -> bool:
    """Whether the best leads (names the best facts bring up that the question does not) name a page
    found but not read: the second hop of a two-hop question is on that page."""
    unread = {title_phrase(t) for t in unread_titles} - {""}
    for ent in leads:
        p = phrase(ent)
        if len(p.split()) >= 2 and any(p == u or (len(u.split()) > 1 and u in p) for u in unread):
            return True
    return False


def _next_urls(items: list[ToolItem], qterms: set[str], leads: list[str]) -> list[str]:
    """Pages worth reading next: search results and links, by the question's and the leads' words."""
    ent_terms = set().union(*(term_set(e) for e in leads))
    urls: list[tuple[float, str]] = []
    for it in items:
        if it.form == Form.SNIPPET and it.url.startswith("http"):
            urls.append((len(term_set(it.title + " " + it.text) & qterms) + 0.5, it.url))
        for link in it.links[:300]:
            slug = _slug_terms(link)
            s = len(slug & qterms) + 1.5 * len(slug & ent_terms)
            if s > 0:
                urls.append((s, link))
    return list(dict.fromkeys(u for _, u in sorted(urls, key=lambda x: -x[0])))
