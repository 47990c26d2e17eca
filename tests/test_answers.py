"""Answers from documents, through the CLI and the offline engine: the passage that holds the value a
question asks for is quoted (with its heading, or the sentence before, when those name the subject),
and a question the documents cannot answer gets a low confidence and a report that says so."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from sleuth.utils.engine.notes import Weighed
from sleuth.utils.engine.offline import OfflineEngine, answer_facts, salient_entities
from sleuth.utils.engine.passages import confidence_features, question_weights
from sleuth.utils.engine.protocol import EngineContext
from sleuth.utils.research.loopdata import Choice, PendingStep, Source, ToolItem
from sleuth.utils.text import term_set


def fact(text, source, score=0.0, step=0, qcov=None, form=None, **notes) -> Weighed:
    """A fact as the offline engine weighed it (qcov: how much of the question it covers)."""
    return Weighed(text, source, score, step, form, qcov=qcov, **notes)


MANUAL = """# Spooler manual

The spooler collects print jobs from every workstation on the floor and sends them to the printers
in the order they arrived. It runs as a background service and keeps a small log of what it did.

## Options

### --spool-limit=<bytes>

Sets how much the spooler may hold in memory before it writes waiting jobs to disk.
The default is 4096 bytes.

### --retry=<count>

How often a job that a printer refused is sent again before the spooler gives up on it.
The default is 3 attempts.

### --log-dir=<path>

The folder where the spooler writes its log. Each day starts a new log file.

## Printers

Printers are found on the local network when the spooler starts. A printer that does not answer is
tried again every minute. Jobs for a printer that is gone are kept until an operator removes them.
"""

EVENTS = """# Message bus

## Subscribers

Every bus keeps a list of subscribers for each topic. The `subscriber_cap` setting of a bus
decides when the warning about too many subscribers on one topic is printed.

A subscriber that is no longer needed should be taken away again with `unsubscribe()`.
"""

WIDGETS = """# Widgets

## `make_widget(size)`

added: v5.4.2.

Creates a widget of the given size and puts it on the shelf of the current workshop.

## `paint_widget(widget, colour)`

added: v0.9.1.

Paints a widget that was made before. A widget can be painted again at any time.
"""

HEADERS = """# Mailbox limits

## Attachment size

Fixed value giving the largest attachment a message may carry, counted in bytes. Set to 48 KiB.
Messages with larger attachments are turned away before any filter runs.

## Message body

The body of a message is stored in pieces as it arrives, so a long body does not fill the disk.
"""

# A long options list (more than one chunk): each entry says what the option is, then a note, then
# its default on a short line of its own.
RUNNER = (
    "# Runner\n\n## run(command[, options])\n\nRuns a command in a shell and collects its output.\n\n"
    + "\n".join(
        f"* `{name}` {{number}} {what}. {more}. See the notes on `{name}` and encodings. **Default:** `{value}`."
        for name, what, more, value in [
            ("timeout", "In milliseconds the longest the command may run", "After that it is stopped", "0"),
            (
                "holdBytes",
                "Most bytes of printed text the runner saves from the command",
                "Past that, the command is halted",
                "512 * 64",
            ),
            ("retries", "How often a failed command is started again", "Each retry waits a second longer", "3"),
            ("columns", "Width of the pseudo terminal the command sees", "Lines longer than that wrap", "80"),
            (
                "niceness",
                "Scheduling priority the command starts with",
                "Higher values yield the processor sooner",
                "10",
            ),
            ("maxArgs", "Longest argument list passed to the command", "Longer lists are split into batches", "4096"),
            ("uid", "User identity of the process", "Only root can choose another user", "the caller's"),
            ("gid", "Group identity of the process", "Only root can choose another group", "the caller's"),
            ("killDelay", "Milliseconds between the polite and the forced stop", "Zero stops at once", "500"),
            ("maxLines", "Most lines of output echoed to the log", "Further lines are counted only", "1000"),
            ("pollInterval", "Milliseconds between checks on a running command", "Shorter intervals cost more", "250"),
        ]
    )
    + "\n"
)


def ask(cli, tmp_path, docs: dict[str, str], question: str) -> dict:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
    assert cli("kb", "ingest", str(folder)).returncode == 0
    proc = cli("--json", "--tools", "kb", question)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def opening(data: dict) -> str:
    """The answer's first passage: the text before its first citation."""
    return data["answer"].split("[")[0]


def cited(data: dict) -> set[str]:
    by_n = {s["n"]: s["url"] for s in data["sources"]}
    return {by_n[int(n)] for n in re.findall(r"\[(\d+)\]", data["answer"]) if int(n) in by_n}


def test_a_default_is_answered_by_the_sentence_that_holds_it(cli, tmp_path):
    data = ask(
        cli,
        tmp_path,
        {"spooler.md": MANUAL},
        "How much does the spooler keep in memory before it writes jobs to disk, unless I set it?",
    )
    first = opening(data)
    assert "4096 bytes" in first  # the value opens the answer, not a sentence that only shares words
    assert any(u.endswith("spooler.md") for u in cited(data))


def test_the_sentence_before_names_what_a_short_value_sentence_is_about(cli, tmp_path):
    data = ask(cli, tmp_path, {"limits.md": HEADERS}, "How big may a mailbox attachment get?")
    assert "largest attachment a message may carry, counted in bytes. Set to 48 KiB." in data["answer"]


def test_a_default_on_the_last_line_of_an_options_entry_is_quoted_with_the_whole_entry(cli, tmp_path):
    # "See the notes ... Default: `512 * 64`." alone does not say what the figure limits
    assert len(RUNNER.split()) > 220  # more than one chunk: the entry is kept whole in the KB too
    data = ask(
        cli,
        tmp_path,
        {"runner.md": RUNNER},
        "How many bytes of printed text does run() save before the command is halted, by default?",
    )
    first = opening(data)
    assert "Most bytes of printed text the runner saves from the command" in first and "`512 * 64`" in first


def test_a_section_number_in_a_heading_is_not_the_figure_a_question_asks_for(cli, tmp_path):
    # "4.3.7." places the section; the amount is in the sentence after the one that names the subject
    doc = (
        "# Indexer manual\n\n## 4.3.6. Start-up\n\nThe indexer starts with the shell and reads its options.\n\n"
        "## 4.3.7. Disk Needs\n\nThe indexer keeps a cache of file names on the disk of each "
        "worker. That cache never grows past 3 - 5 MB.\n\n## 4.3.8. Output\n\nThe indexer writes its "
        "findings to a report file, one finding per line.\n"
    )
    data = ask(
        cli,
        tmp_path,
        {"indexer.md": doc},
        "How much disk does the indexer's cache of file names take on every worker?",
    )
    first = opening(data)
    assert "3 - 5 MB" in first and "4.3.7" not in data["answer"]


def test_an_option_term_heads_its_description_like_a_heading(cli, tmp_path):
    # "--retries=<n> [default: 3]" names the option its description is about: not a list item
    doc = (
        "# Spooler options\n\nThe spooler reads these options when it starts.\n\n"
        "--retries=<n> [default: 3]\n\nHow often a job that a printer refused is sent again before the spooler "
        "gives up on it.\n\n--log-dir=<path>\n\nThe folder where the spooler writes its log, a new file each day.\n"
    )
    data = ask(cli, tmp_path, {"options.md": doc}, "How often does the spooler send a refused job again, by default?")
    assert data["answer"].startswith("--retries=<n> [default: 3]: How often a job that a printer refused is sent again")


def test_a_short_value_line_under_a_heading_is_quoted_with_the_heading(cli, tmp_path):
    # "added: v5.4.2." says nothing alone; under its heading it answers when make_widget() came
    data = ask(cli, tmp_path, {"widgets.md": WIDGETS}, "Which workshop release first shipped make_widget()?")
    assert "`make_widget(size)`: added: v5.4.2." in opening(data)


def test_a_name_in_code_is_not_taken_for_the_amount_asked_for(cli, tmp_path):
    # the passage names the setting that decides it, but gives no figure: "how many" is not answered
    question = "How many subscribers can one topic have before the warning is printed?"
    data = ask(cli, tmp_path, {"events.md": EVENTS}, question)
    assert data["confidence"] <= 0.3
    assert data["answer"].startswith("The sources read do not appear to answer")


def test_a_question_the_documents_cannot_answer_gets_low_confidence(cli, tmp_path):
    data = ask(
        cli,
        tmp_path,
        {"spooler.md": MANUAL, "limits.md": HEADERS},
        "How many printers can the spooler send jobs to at the same time?",
    )
    assert data["confidence"] <= 0.35
    assert data["answer"].startswith(("The sources read do not appear to answer", "I could not find information")) or (
        "treat this as a lead to check, not a settled answer" in data["answer"]
    )


BACKUP = """# Backup tool

## Keeping copies

The tool keeps old copies of every file it backs up. Ask the operator before you change how many old copies are
kept, since a change applies to every machine at once.

## --keep=<count>

How many old copies of a file are kept. The default is 7 copies.
"""


def test_a_question_that_asks_for_a_default_without_the_word_is_answered_with_the_default(cli, tmp_path):
    # "unless I pick a count myself" asks for the default: its words are not what the question is about
    question = "How many old copies does the backup tool keep unless I pick a count myself?"
    data = ask(cli, tmp_path, {"backup.md": BACKUP}, question)
    assert not data["answer"].startswith("The sources read do not appear to answer")
    assert "The default is 7 copies." in opening(data)


PLAYER = """# Media player settings

## Subtitles

The player shows subtitles when the film has them and the viewer switched them on in the menu.

## subtitle-font

subtitle-font (string, default "Dejavu") The typeface subtitles are drawn in. Any font the system knows is
accepted.
"""


def test_a_default_given_as_a_quoted_word_answers_the_question(cli, tmp_path):
    # a default is often a word in quotes, not a figure or code: the answer states it, not "do not appear"
    question = "Which typeface does the player draw subtitles in unless I change it?"
    data = ask(cli, tmp_path, {"player.md": PLAYER}, question)
    assert not data["answer"].startswith("The sources read do not appear to answer")
    assert '"Dejavu"' in data["answer"]


def test_none_opening_a_sentence_is_not_a_lead_to_search_for():
    facts = [fact("None of the workers retry a job that timed out; the Night Scheduler does.", 1, 1.0, qcov=0.6)]
    leads = salient_entities(facts, term_set("Which part retries a job that timed out?"))
    assert "None" not in leads and "Night Scheduler" in leads


def test_after_the_whole_question_each_part_of_a_two_part_question_is_searched_on_its_own():
    q = "How long does the kettle keep water warm after boiling, and which switch turns off the warming plate?"
    asked, history = [], []
    for _ in range(3):
        got = OfflineEngine().decide(EngineContext(q, actions=["search_kb", "send_to_hitl"], history=history)).data
        asked.append((got.action, got.query_or_url))
        history.append({"action": got.action, "query_or_url": got.query_or_url, "ok": True})
    assert asked == [
        ("search_kb", q),
        ("search_kb", "How long does the kettle keep water warm after boiling"),
        ("search_kb", "which switch turns off the warming plate"),
    ]


def test_each_part_of_a_two_part_question_is_searched_and_answered(cli, tmp_path):
    # a dozen pages on keeping water warm crowd the whole question's search; the setting that turns the
    # warming off is found by searching the second part on its own
    docs = {
        f"kettle-{i}.md": f"# Kettle note {i}\n\nThe kettle keeps water warm after it boils; note {i} says "
        f"the warm water is kept at the brewing temperature and the keeping is logged by default."
        for i in range(12)
    }
    docs["warming.md"] = "# Warming\n\nAfter boiling, the kettle keeps water warm for 30 minutes."
    docs["settings.md"] = "# Switches\n\nThe HOLD_OFF switch turns off the warming plate entirely."
    question = "How long does the kettle keep water warm after boiling, and which switch turns off the warming plate?"
    data = ask(cli, tmp_path, docs, question)
    assert "30 minutes" in data["answer"] and "HOLD_OFF" in data["answer"]
    assert {"warming.md", "settings.md"} <= {u.rsplit("/", 1)[-1] for u in cited(data)}


PLACES = {
    "Elmbrook": "Elmbrook is a village in Harlow Province, in the kingdom of Westland. A mill was built there in 1820.",
    "Harlow Province": "Harlow Province is a province of the kingdom of Westland, bordered by the hills of the north "
    "and the great lake to the east, with farms, orchards and three small towns along its one railway line that "
    "carried grain and timber for a century. The capital town of the province is Marston. It was formed in 1802.",
    "Marston": "Marston is a town of 9,000 people on the railway line, known for its grain market.",
    "Elm River": "The Elm is a river of Westland that flows from the northern hills into the great lake.",
}


def test_the_page_of_a_name_the_facts_bring_up_is_read_before_answering(cli, tmp_path):
    """A two-hop question on the web: the search snippets name the province, the province's own page says
    its capital. The answer comes from that page, read after the snippets; a sentence first seen in a
    snippet becomes a fact of its page once the page is read."""
    from webfixtures import LocalServer, ddg_html, page, send

    def serve(title):
        return lambda req: send(req, 200, page(title, f"<h1>{title}</h1><p>{PLACES[title]}</p>"))

    results: list[tuple[str, str, str]] = []  # (title, url, snippet) once the server's port is known
    routes = {f"/wiki/{t.replace(' ', '_')}": serve(t) for t in PLACES}
    routes["/robots.txt"] = lambda req: send(req, 200, "User-agent: *\nAllow: /\n", "text/plain")
    routes["/html/"] = lambda req: send(req, 200, ddg_html(results))
    server = LocalServer(routes)
    with server:
        results += [(t, server.url(f"/wiki/{t.replace(' ', '_')}"), PLACES[t][:150]) for t in PLACES]
        env = {
            "SLEUTH_DDG_URL": server.url("/html/"),
            "SLEUTH_ALLOW_PRIVATE_HOSTS": "1",
            "SLEUTH_CRAWL_INTERVAL": "0",
        }
        proc = cli(
            "--json",
            "--tools",
            "duckduckgo,crawl",
            "Which town is the capital of the province Elmbrook lies in?",
            env=env,
        )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert "Marston" in data["answer"]
    urls = cited(data)
    assert any(u.endswith("/wiki/Harlow_Province") for u in urls) and any(u.endswith("/wiki/Elmbrook") for u in urls)


def _fact(text: str, qcov: float, sem: float | None = None) -> Weighed:
    return fact(text, 1, qcov, qcov=qcov, form="kb", sem=sem)


def test_confidence_is_lower_when_the_question_is_in_words_found_everywhere():
    # the same answer to the same question: when the KB says the question's words are in most of its
    # passages, the one that answers is harder to tell apart, and the confidence says so
    q = "How many retries does the spooler make?"
    weights = question_weights(q)
    facts = [_fact("The spooler makes 3 retries before it gives up on a job.", 0.9, 0.7)]
    common = {t: 0.3 for t in weights}
    rare = {t: 5.5 for t in weights}
    x_common = confidence_features(facts, facts, weights, q, idf=common)
    x_rare = confidence_features(facts, facts, weights, q, idf=rare)
    assert x_common["specific"] < 0.1 < 0.9 < x_rare["specific"]
    assert confidence_features(facts, facts, weights, q)["specific"] == 0.0  # no KB rarity: the general model
    manual = [Source(1, "Spooler manual", "/docs/spooler.md", kind="internal")]
    engine = OfflineEngine()
    assert engine._confidence(facts, weights, q, manual, common) < engine._confidence(facts, weights, q, manual, rare)


def test_many_facts_as_close_as_the_best_one_make_a_crowd():
    q = "What does the spooler log?"
    weights = question_weights(q)
    alone = [_fact("The spooler logs every job it sends.", 0.8, 0.6)]
    alone += [_fact(f"Other {i}.", 0.2, 0.1) for i in range(9)]
    crowded = [_fact(f"The spooler logs thing {i}.", 0.8, 0.6) for i in range(10)]
    assert confidence_features(alone[:1], alone, weights, q)["crowd"] == 0.1
    assert confidence_features(crowded[:1], crowded, weights, q)["crowd"] == 1.0


def test_a_sentence_quoted_alone_and_with_the_one_after_it_is_quoted_whole():
    # the reader keeps "A." and "A. B." (B holds the value, A names its subject): one passage, and the
    # answer gives it whole, not the part that shares a few more of the question's words
    q = "What's the largest count of shelves a rack can hold?"
    weights = question_weights(q)
    part = "The count of shelves a rack can hold is limited as every shelf must fit under its 2-metre frame."
    whole = part + " For example, a rack of 40 thin shelves still fits."
    facts = [_fact(part, 0.9, 0.8), _fact(whole, 0.85, 0.7)]
    manual = [Source(1, "Racks", "/docs/racks.md", kind="internal")]
    chosen, _ = answer_facts(q, facts, manual, weights)
    assert [f.text for f in chosen] == [whole]


def test_the_fact_closest_in_meaning_opens_the_answer_over_one_sharing_more_words():
    # both were read for the question; one repeats more of its words, the other answers it (the sentence
    # model says so): the answer opens with the one that answers
    q = "Where does the spooler write its log?"
    weights = question_weights(q)
    wordy = fact("The spooler log lists what the spooler did; read the log to see it.", 1, 0.75, qcov=0.75, sem=0.35)
    answers = fact("Each day starts a new file in the folder given by --log-dir.", 2, 0.5, qcov=0.5, sem=0.75)
    docs = [Source(1, "Spooler manual", "/docs/spooler.md", kind="internal"), Source(2, "Options", "/docs/options.md")]
    chosen, _ = answer_facts(q, [wordy, answers], docs, weights)
    assert chosen[0] is answers


def test_a_name_the_page_read_links_to_is_read_before_the_answer_counts_as_settled():
    # the page read names who voices the part and links to her page: until that page is read (a link
    # found on this step's page counts, not only a search result), the confidence stays below any
    # threshold that would end the research; once it has been read, the link no longer holds it back
    q = "In which town was the singer who voices Nora Vale in Harbour Lights born?"
    text = (
        "Nora Vale is the main character of the radio play Harbour Lights, voiced by singer Mara Ellen "
        "Quist. Harbour Lights follows Nora Vale, a ferry pilot, through one stormy winter."
    )
    page = "http://127.0.0.1:9/wiki/Nora_Vale"
    bridge = "http://127.0.0.1:9/wiki/Mara_Ellen_Quist"
    item = ToolItem(page, "Nora Vale", text, "page", links=[bridge], lead=True, source=1)
    ctx = EngineContext(
        q,
        actions=["crawl_url", "send_to_hitl"],  # pages found can still be read
        step=PendingStep(1, Choice("crawl_url", page), [item]),
        sources=[Source(1, "Nora Vale", page)],
        visited_urls=[page],
    )
    engine = OfflineEngine()
    unread = engine.analyze(ctx).data.confidence_score
    read = engine.analyze(replace(ctx, visited_urls=[page, bridge])).data.confidence_score
    assert unread <= 0.6 < read


def test_the_page_titled_with_a_name_the_question_asks_about_is_read_first():
    # results that share more of the question's words come first by words alone; the page of the person
    # the question names is what it asks about, so the crawl reads it first
    q = "Which port holds the shipyard where Mira Tosh worked as a welder?"
    others = [
        {
            "url": f"http://127.0.0.1:9/wiki/Yard_{i}",
            "title": f"Shipyard {i}",
            "snippet": "A welder shipyard based in a port city, where its shipyard welder staff worked.",
        }
        for i in range(6)
    ]
    named = {"url": "http://127.0.0.1:9/wiki/Mira_Tosh", "title": "Mira Tosh", "snippet": "Mira Tosh is a writer."}
    ctx = EngineContext(q, actions=["crawl_url", "send_to_hitl"], candidate_urls=[*others, named])
    got = OfflineEngine().decide(ctx).data
    assert got.action == "crawl_url"
    assert got.query_or_url.split()[0] == named["url"]


def test_the_value_asked_for_is_quoted_from_the_chunk_whose_sentence_names_the_subject():
    # the best passage says what the setting is; the sentence that gives its default comes later in the
    # same chunk, further in words and meaning from the question than passages of other documents
    q = "How long does the indexer pause between passes over one folder unless I set another?"
    weights = question_weights(q)
    names = fact("Sets the shortest pause between indexer passes over any one folder.", 1, 0.9, 1, 0.55, "kb")
    value = fact("The default is ninety seconds (90s).", 1, 0.5, 1, 0.38, "kb")
    others = [
        fact(
            f"An indexer pass over folder {n} may pause for files held open by other programs.",
            2 + n,
            0.6,
            1,
            0.5,
            "kb",
        )
        for n in range(3)
    ]
    for f, sem in ((names, 0.7), (value, 0.56), *((o, 0.68) for o in others)):
        f.prior, f.sem = 0.03, sem
    docs = [Source(1, "Indexer settings", "/docs/indexer.html")]
    docs += [Source(2 + n, f"Folders {n}", f"/docs/folders-{n}.html") for n in range(3)]
    chosen, _ = answer_facts(q, [names, *others, value], docs, weights)
    assert [f.text for f in chosen[:2]] == [names.text, value.text]


def test_the_next_passage_of_the_lead_document_joins_the_answer_when_it_says_something_else():
    # both passages of the manual answer with the question's own words ("returns"); the second says what
    # the first does not (what the figure measures), so it is quoted, not a passage of another document
    q = "What does tank.level() return?"
    weights = question_weights(q)
    first = fact("Always returns a whole number of litres.", 1, 0.6, 1, 0.55, "kb", sem=0.78, prior=0.2)
    second = fact("Returns a guess of how much water is left in the tank.", 1, 0.6, 1, 0.55, "kb", sem=0.67)
    second.prior = 0.2
    others = [
        fact(f"The level of tank {n} is read when it fills and tank.level() never changes.", 2 + n, 0.5, 1, 0.6, "kb")
        for n in range(3)
    ]
    for o in others:
        o.sem, o.prior = 0.5, 0.05
    docs = [Source(1, "Tank", "/docs/tank.md")] + [Source(2 + n, f"Tank {n}", f"/docs/tank-{n}.md") for n in range(3)]
    chosen, _ = answer_facts(q, [first, second, *others], docs, weights)
    assert [f.text for f in chosen[:2]] == [first.text, second.text]
    # the same passage again in other words adds nothing: it is not quoted beside the first
    again = fact("It always returns a number of litres that is whole.", 1, 0.6, 1, 0.55, "kb", sem=0.77, prior=0.2)
    chosen, _ = answer_facts(q, [first, again, *others], docs, weights)
    assert again not in chosen


def test_a_question_about_an_option_no_document_mentions_is_not_answered_with_confidence(cli, tmp_path):
    # the manual documents --spool-limit and --retry; --spool-dir is in nothing read, so whatever the
    # closest passages say, they do not answer, and the report names what was not found
    docs = {"spooler.md": MANUAL, "limits.md": HEADERS}
    data = ask(cli, tmp_path, docs, "What does the --spool-dir option of the spooler do?")
    assert data["confidence"] <= 0.25
    assert data["answer"].startswith("The sources read do not appear to answer this question.")
    assert "Nothing read mentions --spool-dir." in data["answer"]
    # an option the manual does document is answered as before, and nothing is said missing
    data = ask(cli, tmp_path, docs, "What does the --spool-limit option of the spooler do?")
    assert "Nothing read mentions" not in data["answer"]
    assert "how much the spooler may hold in memory" in data["answer"]


def test_a_passage_a_page_and_its_rendering_both_hold_is_read_once(cli, tmp_path):
    # every tip is in the folder twice, as its Markdown source and as the HTML rendered from it: read
    # twice, the tips fill every place the search gives and the option's entry is never read
    kinds = ("printer", "queue", "network", "paper", "driver", "toner", "server", "font")
    docs = {}
    for kind in kinds:
        tip = (
            f"How long the spooler waits before it retries a {kind} job, and how long a {kind} job waits "
            f"before the spooler retries it, depends on the {kind}."
        )
        docs[f"{kind}.md"] = f"# Retrying {kind} jobs\n\n{tip}"
        docs[f"{kind}.html"] = (
            f"<html><head><title>Retrying {kind} jobs | Spooler docs</title></head><body><main>"
            f"<h1>Retrying {kind} jobs</h1><p>{tip}</p></main><footer><p>Built from {kind}.md.</p></footer>"
            "</body></html>"
        )
    docs["options.md"] = (
        "# Options\n\n## retry_delay\n\nHow long a failed job waits before it is retried. Default: 30 seconds."
    )
    data = ask(cli, tmp_path, docs, "How long does the spooler wait before retrying a job, unless I set another?")
    assert "Default: 30 seconds." in data["answer"]
    assert any(u.endswith("options.md") for u in cited(data))


def test_a_default_written_with_a_short_unit_is_quoted_as_the_value(cli, tmp_path):
    # "30s", "2min", "200ms": a number with its unit run on is a value like "30 seconds"
    docs = {
        "options.md": "# Options\n\n## retry_delay\n\nHow long a failed job waits before the spooler retries it. "
        "Default: 30s.\n\n## retry_limit\n\nHow many times the spooler retries a failed job before it gives up."
    }
    data = ask(
        cli, tmp_path, docs, "How long does the spooler wait before retrying a failed job, unless I set another?"
    )
    assert "Default: 30s." in data["answer"]


def test_a_yes_no_question_the_answer_says_neither_yes_nor_no_to_is_not_answered_with_confidence(cli, tmp_path):
    # the passage that decides it is quoted, but nothing says "yes" or "no": the reader is told to check
    docs = {
        "spooler.md": "# Spooler\n\n## Retries\n\nThe spooler retries a failed print job on the same printer "
        "up to three times. A failed print job is then moved to the held queue on that printer.",
    }
    data = ask(cli, tmp_path, docs, "Does the spooler retry a failed print job on the same printer?")
    assert "retries a failed print job on the same printer up to three times" in data["answer"]
    assert data["confidence"] < 0.7 and "treat this as a lead to check" in data["answer"]


def test_a_sentence_that_introduces_a_list_is_quoted_with_the_list(cli, tmp_path):
    # "The spooler refuses a job when:" says nothing alone; what answers is the list after it
    docs = {
        "spooler.md": "# Spooler\n\n## Refused jobs\n\nThe spooler keeps a job waiting while its printer is busy. "
        "The spooler refuses a print job outright when:\n\n- the job is larger than the spool limit;\n\n"
        "- the printer named in the job is not known;\n\n- the job comes from a workstation that is blocked.\n\n"
        "A refused job is logged with the reason it was refused.",
    }
    data = ask(cli, tmp_path, docs, "In which cases does the spooler refuse a print job outright?")
    assert re.search(
        r"refuses a print job outright when: the job is larger than the spool limit; the printer", data["answer"]
    )


def test_a_list_quoted_with_the_line_that_introduces_it_ranks_by_that_line_not_by_all_its_items():
    # the items together share most of the question's words; the sentence that names the tool answers
    text = (
        "# Sweepers\n\n## Problems\n\nIn a busy print queue, these problems can occur:\n\n"
        "- stuck jobs, when a printer keeps a job in its queue without printing it;\n\n"
        "- lost jobs, when a workstation drops off the network;\n\n- twin jobs, when two workstations send one file."
        "\n\n## Tools\n\nThe broom tool finds stuck jobs in busy print queues."
    )
    q = "Which tool finds stuck jobs that a printer keeps in its queue without printing them?"
    item = ToolItem(url="/docs/sweepers.md", title="Sweepers", text=text, form="kb", source=1, score=1.0)
    ctx = EngineContext(
        q, step=PendingStep(1, Choice("search_kb", q), [item]), sources=[Source(1, "Sweepers", "/docs/sweepers.md")]
    )
    kept = [f.text for f in OfflineEngine().analyze(ctx).data.facts]
    answer = kept.index("The broom tool finds stuck jobs in busy print queues.")
    assert not any(k.startswith("In a busy print queue, these problems can occur: stuck jobs") for k in kept[:answer])


def test_an_item_that_answers_is_quoted_in_its_list_at_the_items_rank_and_not_twice():
    # the item alone is the best passage; the list that holds it ranks lower on the words of its own line
    q = "What disk space does the spooler set aside for each waiting print job?"
    weights = question_weights(q)
    item = fact(
        "each waiting print job takes up to 6 MB of spooler disk space.", 1, 0.9, 1, 0.8, "kb", sem=0.8, prior=0.2
    )
    listed = fact(
        "The spooler's needs are as follows: logs are rotated once a day; each waiting print job takes up to 6 MB "
        "of spooler disk space; a copy of each job stays in the archive.",
        1, 0.6, 1, 0.5, "kb", sem=0.5, prior=0.2,
    )  # fmt: skip
    others = [
        fact(f"Print job {n} of the spooler keeps its pages on disk while it waits.", 2 + n, 0.7, 1, 0.7, "kb")
        for n in range(3)
    ]
    for o in others:
        o.sem, o.prior = 0.7, 0.05
    docs = [Source(1, "Spooler", "/docs/spooler.md")] + [
        Source(2 + n, f"Job {n}", f"/docs/job-{n}.md") for n in range(3)
    ]
    chosen, _ = answer_facts(q, [listed, *others, item], docs, weights)
    assert chosen[0] is listed  # the list, which holds the answer, opens the answer
    assert item not in chosen  # ...and its item is not quoted again on its own


def test_a_sentence_that_refers_back_to_the_term_above_it_is_quoted_with_that_term(cli, tmp_path):
    # "This variable ..." says nothing of which variable: the term it sits under is its subject
    docs = {
        "environment.md": "# Environment\n\nThe spooler reads a few variables from its environment at start-up.\n\n"
        "SPOOL_VIEWER\n\nThe viewer the spooler uses to show long job lists.\n\nSPOOL_CHIME\n\n"
        "This variable overrides the alert sound named in the spooler's configuration file.",
    }
    data = ask(cli, tmp_path, docs, "Which variable overrides the alert sound of the spooler?")
    assert "SPOOL_CHIME: This variable overrides the alert sound" in data["answer"]


def test_a_line_that_introduces_a_table_is_not_quoted_with_the_table_markup(cli, tmp_path):
    docs = {
        "limits.md": "# Limits\n\nThe spooler was built with few limits, and those it has can be raised when it is "
        "built.\n\nThe spooler's queue limits are the following:\n\n| limit | value |\n| --- | --- |\n"
        "| waiting jobs per printer | 20 |\n| printers per spooler | 64 |\n",
    }
    data = ask(cli, tmp_path, docs, "What are the spooler's queue limits?")
    assert "The spooler's queue limits are the following:" in data["answer"]
    assert "|" not in data["answer"]


def test_a_how_question_about_a_measure_it_was_never_told_of_is_answered_with_the_figure(cli, tmp_path):
    # "how wide" asks for a measure as "how long" does: the sentence with the figure answers it
    doc = (
        "# Panel layout\n\nPanels sit side by side in the main window. A panel can be wide or narrow: drag "
        "the edge of a panel to change it. Its width stops at 640 pixels.\n"
    )
    data = ask(cli, tmp_path, {"panels.md": doc}, "How wide can a panel be?")
    assert "640 pixels" in opening(data)
