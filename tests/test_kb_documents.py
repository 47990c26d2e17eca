"""Documents read as documents: each format's title, text without markup, heading paths, fenced code,
gzip-compressed files; what `kb search` shows a user. Fixtures in tests/fixtures/docs were written
for these tests."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from kbfiles import clean_env, ingest, search, write_files

from sleuth.utils.kb import readers
from sleuth.utils.kb.chunking import chunk_sections
from sleuth.utils.kb.store import KnowledgeBase
from sleuth.utils.kb.structure import sections
from sleuth.utils.text import paragraphs, split_sentences

DOCS = Path(__file__).resolve().parent / "fixtures" / "docs"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    clean_env(monkeypatch, tmp_path)


def site(tmp_path: Path, pages: dict[str, str]) -> Path:
    """A folder holding these pages (name -> HTML)."""
    return write_files(tmp_path / "site", pages)


def all_text(data_dir: Path, name: str) -> str:
    kb = KnowledgeBase(data_dir / "kb")
    try:
        hits = [h for h in kb.chunks_of([str((DOCS / name).resolve())], per_source=50)]
    finally:
        kb.close()
    return "\n\n".join(h.text for h in hits)


def html_paragraphs(tmp_path: Path, title: str, body: str) -> list[str]:
    """The paragraphs Sleuth reads from an HTML page titled `title` whose <body> is `body`."""
    page = tmp_path / "page.html"
    page.write_text(f"<html><head><title>{title}</title></head><body>{body}</body></html>", encoding="utf-8")
    return readers.read_document(page)[1].split("\n\n")


def test_markdown_front_matter_is_the_title_and_never_text(capsys, data_dir):
    assert ingest(capsys, data_dir, DOCS / "kettle-guide.md")[0] == 0
    hit = search(capsys, data_dir, "default brewing temperature")[0]
    assert hit["title"] == "Kettle Guide"
    assert hit["section"] == "Kettle Guide › Installing"  # the path at the chunk's start; a short file is one chunk
    assert "## Brewing temperature\n\nThe default brewing temperature" in hit["text"]  # a heading inside it
    text = all_text(data_dir, "kettle-guide.md")
    for markup in ("---", "title:", "description:", "](", "![", "<!--", "editor's note", "**"):
        assert markup not in text
    assert "See the download page for other systems." in text
    assert "`96`" in text  # backticks around a code name stay
    # the fenced block is kept whole, its "#" line is code, not the title or a heading
    assert "```sh\n# this comment is not a heading\nkettle install --all\n```" in text


def test_restructuredtext_reads_without_roles_directives_or_underlines(capsys, data_dir):
    rc, out, err = ingest(capsys, data_dir, DOCS / "shelf-notes.rst")
    assert rc == 0 and "ERROR" not in out + err and "Unknown" not in out + err
    hit = search(capsys, data_dir, "how many keys can a shelf hold")[0]
    assert hit["title"] == "Shelf Notes" and hit["section"] == "Shelf Notes › Storage limits"
    assert "A shelf holds at most `MAX_KEYS` keys, that is 4096 keys per file." in hit["text"]
    text = all_text(data_dir, "shelf-notes.rst")
    for markup in (":ref:", ":func:", ":const:", ":doc:", "``shelf", ".. ", "===", "---", "System Message", "synopsis"):
        assert markup not in text
    assert "See the pickling rules and `open`." in text
    assert "New in version 2.4: The writeback flag." in text
    assert "Note: Close the shelf when done." in text and "other-page" in text
    assert '```\nimport shelf\ndb = shelf.open("data")\n```' in text


def test_a_restructuredtext_reference_by_label_reads_as_the_section_title_it_names(tmp_path):
    page = tmp_path / "copying.rst"
    page.write_text(
        "Copying\n=======\n\nFiles are copied in chunks; see the :ref:`fast-copy-calls` section. "
        "Archives are described in :ref:`archive-formats`, the format in :pep:`273`.\n\n"
        ".. _fast-copy-calls:\n\nFaster copies on some systems\n-----------------------------\n\n"
        "Some systems copy a whole file in one call.\n",
        encoding="utf-8",
    )
    text = readers.read_document(page)[1]
    assert "see the Faster copies on some systems section." in text  # the label names a section of this file
    assert "Archives are described in archive formats, the format in PEP 273." in text  # elsewhere: its words
    assert "fast-copy-calls" not in text and "archive-formats" not in text


def test_a_myst_role_in_markdown_reads_like_a_restructuredtext_role(tmp_path):
    page = tmp_path / "wheels.md"
    page.write_text(
        "# Wheels\n\nGiven a {term}`pypug:source distribution` for a package, the tool builds a "
        "{term}`wheel <pypug:wheel>` and keeps it (see {ref}`the cache <wheel-cache>`) next to "
        "{py:func}`~shelf.tools.build`. A file named `{pid}.log` is written too.\n",
        encoding="utf-8",
    )
    title, text, _, _ = readers.read_document(page)
    assert title == "Wheels"
    assert (
        "Given a source distribution for a package, the tool builds a wheel and keeps it (see the cache) next to "
        "`build`. A file named `{pid}.log` is written too." in text
    )


def test_a_myst_directive_reads_like_the_restructuredtext_one(tmp_path):
    page = tmp_path / "cache.md"
    page.write_text(
        "# Cache\n\nThe tool keeps downloads in a cache.\n\n"
        "```{versionadded} 20.1\nThe `cache` command.\n```\n\n"
        "```{note}\n:class: margin\nThe cache holds at most 2 GB unless told otherwise.\n```\n\n"
        "```{toctree}\ninstall\nusage\n```\n\n"
        "```{tool-cli}\n$ tool cache dir\n```\n",
        encoding="utf-8",
    )
    text = readers.read_document(page)[1]
    assert "New in version 20.1: The `cache` command." in text
    assert "Note: The cache holds at most 2 GB unless told otherwise." in text  # prose: it can be quoted
    assert "```{tool-cli}\n$ tool cache dir\n```" in text  # a command session stays code
    for markup in ("{note}", "{versionadded}", ":class:", "toctree", "install\nusage"):
        assert markup not in text


def test_asciidoc_reads_without_markup(capsys, data_dir):
    assert ingest(capsys, data_dir, DOCS / "lantern-manual.adoc")[0] == 0
    hit = search(capsys, data_dir, "default glow level")[0]
    assert hit["title"] == "Lantern Manual"
    assert hit["section"].startswith("Lantern Manual › Getting started")
    text = all_text(data_dir, "lantern-manual.adoc")
    for markup in ("{tool}", "link:", "[[", "<<", "*", "+logs+", ":toc:", "Ann Writer", "[source"):
        assert markup not in text
    assert "The lantern command lights rooms and writes logs. Read the FAQ and the flags section." in text
    assert "```\nlantern --glow 7 hall\n```" in text


def test_an_asciidoc_source_named_txt_reads_as_asciidoc_and_a_help_file_stays_one(tmp_path):
    source = tmp_path / "lantern-manual.txt"  # man pages' AsciiDoc sources are often named .txt
    source.write_bytes((DOCS / "lantern-manual.adoc").read_bytes())
    assert readers.read_document(source)[:2] == readers.read_document(DOCS / "lantern-manual.adoc")[:2]
    assert readers.read_document(source)[3]
    # a help file that quotes a few lines looking like AsciiDoc (<<id>>) is still read as a help file
    help_file = tmp_path / "teapot.txt"
    help_file.write_text(
        (DOCS / "teapot.txt").read_text(encoding="utf-8") + "\n".join(f"  tea.c <<brew{i}>>" for i in range(5)),
        encoding="utf-8",
    )
    assert readers.read_document(help_file)[0] == "Teapot help"


def test_asciidoc_conditional_text_and_a_code_phrase_broken_across_lines_read_without_markup(tmp_path):
    page = tmp_path / "lamp-config.adoc"
    page.write_text(
        "= lamp-config(1)\n:lamp-dimmer: 1\n\n== OPTIONS\n\n"
        "LAMP_EDITOR::\n    The editor for lamp notes.  The order of preference is the `$LAMP_EDITOR`\n"
        "    variable, then the `lamp.editor` setting, then `$VISUAL`, then `$EDITOR`.  Example: `lamp\n"
        "    config --edit`.\n"
        "ifdef::lamp-build-editor[]\n    This build chose {lamp-build-editor} as the default.\n"
        "endif::lamp-build-editor[]\n\n"
        "ifndef::lamp-dimmer[]\n--glow::\n    Light every room at full glow.\nendif::lamp-dimmer[]\n"
        "ifdef::lamp-dimmer[]\n--glow=<level>::\n    Light every room at the given glow level.\n"
        "endif::lamp-dimmer[]\n\nifdef::lamp-timer[--timer::  Switch off after a while.]\n",
        encoding="utf-8",
    )
    text = readers.read_document(page)[1]
    flat = " ".join(text.split())
    assert (
        "The order of preference is the $LAMP_EDITOR variable, then the lamp.editor setting, then $VISUAL, "
        "then $EDITOR. Example: lamp config --edit." in flat
    )
    # text for a build or an including page is kept (it may hold); the page's own setting rules some out
    assert "This build chose" in flat and "Switch off after a while." in flat
    assert "Light every room at the given glow level." in flat
    assert "full glow" not in flat
    for markup in ("ifdef", "ifndef", "endif", ":lamp", "`"):
        assert markup not in text


def test_an_asciidoc_note_laid_out_as_a_table_reads_as_a_note_not_a_table_row(tmp_path):
    page = tmp_path / "build.html"
    page.write_text(
        "<html><head><title>Building</title></head><body><div class='sect1'><h2>Building</h2>"
        "<div class='paragraph'><p>Build the tool from a fresh clone of its sources with the make command.</p></div>"
        "<div class='admonitionblock'><table><tr><td class='icon'><div class='title'>Note</div></td>"
        "<td class='content'>The build runs in parallel when you pass the jobs option to make.</td></tr></table></div>"
        "</div></body></html>",
        encoding="utf-8",
    )
    text = readers.read_document(page)[1]
    assert "Note: The build runs in parallel when you pass the jobs option to make." in text.split("\n\n")
    assert "| Note |" not in text  # a table row is never quoted in an answer


def test_every_term_of_an_html_definition_list_is_kept_with_its_definition(tmp_path):
    # a short term between short definitions is what they are about, not a stray line of the layout
    paras = html_paragraphs(
        tmp_path,
        "spool-var(1)",
        "<div class='sect1'><h2>VARIABLES</h2><dl>"
        "<dt>SPOOL_CHIME</dt><dd><p>Sound played by the spooler when a job is done. The value is read once, when "
        "the spooler starts; the order of preference is the environment variable, then the settings file, "
        "then the sound picked at install time.</p></dd>"
        "<dt>SPOOL_VIEWER</dt><dd><p>Viewer the spooler opens for long job lists. The value is read once, when "
        "the spooler starts; the order of preference is the environment variable, then the settings file, then "
        "the viewer picked at install time.</p></dd>"
        "<dt>SPOOL_FIRST_TRAY</dt><dd><p>The label of the first tray of a newly added printer.</p></dd>"
        "</dl></div>",
    )
    for term in ("SPOOL_CHIME", "SPOOL_VIEWER", "SPOOL_FIRST_TRAY"):  # each term heads its entry
        assert f"## {term}" in paras
    definition = "- SPOOL_FIRST_TRAY: The label of the first tray of a newly added printer."  # naming its term
    assert paras.index("## SPOOL_FIRST_TRAY") + 1 == paras.index(definition)


def test_html_list_items_read_as_list_items_not_as_headings(tmp_path):
    # a short item is not a heading-like line the text after the list would sit under
    paras = html_paragraphs(
        tmp_path,
        "Limits",
        "<div class='sect1'><h2>Limits</h2>"
        "<p>The spooler was written with few fixed limits; the ones it has are listed here, each with what it "
        "bounds and how it can be changed when the spooler is built from its sources.</p>"
        "<p><b>Largest number of trays</b></p><p>The tray limit of the spooler's job table bounds:</p>"
        "<ul><li>The number of trays in a job record</li><li><p>The number of slots in a printer entry</p></li></ul>"
        "<p>The default setting of the tray limit is 24 and it can be raised at build time to 96.</p>"
        "</div>",
    )
    assert "- The number of trays in a job record" in paras
    assert "- The number of slots in a printer entry" in paras
    assert "Largest number of trays" in paras  # a sub-heading set in bold stays one


def test_a_power_written_with_a_superscript_reads_as_a_power_not_as_a_bigger_figure(tmp_path):
    text = "\n\n".join(
        html_paragraphs(
            tmp_path,
            "Limits",
            "<h1>Limits</h1><p>A job of any kind the spooler stores is kept under 4 MB (2<sup>22</sup> - 1 bytes), "
            "and a queue holds at most 2<sup>20</sup> jobs; see the notes<sup>1</sup> on both limits, which were "
            "raised in the second release.</p>",
        )
    )
    assert "4 MB (2^22 - 1 bytes)" in text and "at most 2^20 jobs" in text
    assert "see the notes1 on both" in text  # a footnote's mark after a word is not a power


def test_html_title_is_the_pages_own_part_and_its_pre_is_code(capsys, data_dir):
    assert ingest(capsys, data_dir, DOCS / "frobnicate.html")[0] == 0
    hit = search(capsys, data_dir, "maximum number of retries")[0]
    assert hit["title"] == "Frobnicate"  # not the site's "Gizmo 1.2 documentation"
    assert hit["section"] == "Frobnicate › Retry limits"
    text = all_text(data_dir, "frobnicate.html")
    assert text.startswith("The frobnicate command rearranges")  # its <h1> is the title, not repeated
    assert "¶" not in text and "Next topic" not in text
    assert "```\ngizmo frobnicate --retries 12\ngizmo status\n```" in text


def test_an_h1_that_is_not_the_title_stays_in_the_text(tmp_path):
    page = tmp_path / "wiring.html"
    page.write_text(
        "<html><head><title>Gizmo Manual</title></head><body><article><h1>Wiring the gizmo</h1>"
        "<p>Wiring the gizmo takes two cables and a steady hand, as this chapter of the manual shows.</p>"
        "<p>Each cable goes to the port of its own colour, the red one first and the blue one second.</p>"
        "</article></body></html>",
        encoding="utf-8",
    )
    title, text, _, structured = readers.read_document(page)
    assert structured and title == "Gizmo Manual"
    assert text.startswith("# Wiring the gizmo\n\nWiring the gizmo takes two cables")


def test_a_note_box_s_title_does_not_take_the_text_after_the_box_out_of_its_section(tmp_path):
    page = tmp_path / "dump.html"
    page.write_text(
        "<html><head><title>Dump tool</title></head><body><div class='refentry'><h1>Dump tool</h1>"
        "<h2>Options</h2><p>The dump tool writes the contents of a store to a file that can be read back.</p>"
        "<div class='note'><h3 class='title'>Note</h3><p>A dump taken while the store is busy may be slow.</p></div>"
        "<p>The layout option picks how the output is laid out, plain text or a packed archive.</p>"
        "</div></body></html>",
        encoding="utf-8",
    )
    title, text, _, _ = readers.read_document(page)
    after = [sec.label for sec in sections(title, text) if "layout option picks" in sec.text]
    assert after == ["Dump tool › Options"]  # not "Dump tool › Options › Note"
    assert "A dump taken while the store is busy may be slow." in text  # the note is still read


def test_a_link_that_is_only_a_mark_is_not_read_as_part_of_the_text(tmp_path):
    page = tmp_path / "api.html"
    page.write_text(
        "<html><head><title>API</title></head><body><div class='body' role='main'><section id='api'>"
        "<h1>API<a class='headerlink' href='#api' title='Permalink to this heading'>¶</a></h1>"
        "<dl><dt id='open_store'>open_store(path, mode='r')<a class='headerlink' href='#open_store'>¶</a></dt>"
        "<dd><p>Opens the store at path and returns a handle that reads and writes its records.</p></dd></dl>"
        "<p>A store opened for reading can be shared by many threads at once. <a href='#open_store'>§</a></p>"
        "<ul><li><p>Fix a crash when a store is closed twice (A. Author) <a href='https://example.org/c/1a2b'>§</a>"
        "</p></li></ul>"
        "</section></div></body></html>",
        encoding="utf-8",
    )
    title, text, _, _ = readers.read_document(page)
    assert "open_store(path, mode='r')" in text
    assert "Opens the store at path and returns a handle" in text
    assert "Fix a crash when a store is closed twice (A. Author)" in text
    assert not set("¶§") & set(text)  # "open_store(path, mode='r')¶" would be quoted with its mark


def test_a_folder_s_shared_title_part_is_the_site_not_the_page(capsys, tmp_path, data_dir):
    folder = tmp_path / "site"
    folder.mkdir()
    page = "<html><head><title>{} — Gizmo 1.2 documentation</title></head><body><p>{}</p></body></html>"
    for name in ("Widget ordering", "Lock retries", "Status line"):
        prose = f"The {name.lower()} page of the manual explains this part of the gizmo in plain words for readers."
        (folder / f"{name.split()[0].lower()}.html").write_text(page.format(name, prose), encoding="utf-8")
    (folder / "chapter.html").write_text(
        "<html><head><title>Chapter 3: Wiring</title></head><body><h1>Chapter 3: Wiring</h1>"
        "<p>Wiring the gizmo takes two cables and a steady hand, as this chapter shows in detail.</p></body></html>",
        encoding="utf-8",
    )
    assert ingest(capsys, data_dir, folder)[0] == 0
    assert search(capsys, data_dir, "lock retries")[0]["title"] == "Lock retries"
    assert search(capsys, data_dir, "wiring cables")[0]["title"] == "Chapter 3: Wiring"


def test_a_page_titled_with_two_parts_of_its_own_keeps_both(capsys, tmp_path, data_dir):
    # "spool — Print queue management — Gizmo 2.0 documentation": the module's name and what it does are
    # the page's, only the last part is the site's
    pages = {
        f"{name}.html": f"<html><head><title>{name} — {what} — Gizmo 2.0 documentation</title></head><body>"
        f"<h1>{name} — {what}<a class='headerlink' href='#{name}'>¶</a></h1>"
        f"<p>The {name} module offers {what.lower()} for the gizmo, in a few plain functions for readers.</p>"
        "</body></html>"
        for name, what in (("spool", "Print queue management"), ("lamp", "Light control"), ("dial", "Number input"))
    }
    assert ingest(capsys, data_dir, site(tmp_path, pages))[0] == 0
    assert search(capsys, data_dir, "print queue management")[0]["title"] == "spool — Print queue management"


def test_a_site_banner_h1_is_not_the_title_and_a_heading_s_permalink_mark_is_not_its_text(capsys, tmp_path, data_dir):
    # every page shows the site's name as its <h1>; the page's own heading is an <h2>, and each heading
    # ends in a "#" link to itself
    pages = {
        f"{page.lower()}.html": f"<html><head><title>{page} | Gizmo 2.0 Documentation</title></head><body>"
        "<header><h1>Gizmo 2.0 documentation</h1></header><main>"
        f"<h2>{page}<span><a class='mark' href='#{page}'>#</a></span></h2>"
        f"<p>The {page.lower()} module of the gizmo is described on this page in plain words for readers.</p>"
        f"<h3><code>{call}</code><span><a class='mark' href='#{call}'>#</a></span></h3>"
        f"<p>Calling {call} on a {page.lower()} object blocks the gizmo until the operation is done.</p>"
        "</main></body></html>"
        for page, call in (("Timers", "wait(ms)"), ("Files", "open(path)"), ("Sockets", "listen(port)"))
    }
    assert ingest(capsys, data_dir, site(tmp_path, pages))[0] == 0
    hit = search(capsys, data_dir, "calling listen blocks the gizmo")[0]
    assert hit["title"] == "Sockets"  # not "Gizmo 2.0 Documentation", the name of every page
    assert "\n### listen(port)\n" in hit["text"]  # the call's heading, without its "#", heads its entry
    assert "Gizmo 2.0 documentation" not in hit["text"]


def test_help_file_sections_become_heading_paths(capsys, data_dir):
    assert ingest(capsys, data_dir, DOCS / "teapot.txt")[0] == 0
    hit = search(capsys, data_dir, "steeptime seconds")[0]
    assert hit["title"] == "Teapot help"
    assert hit["section"] == "Teapot help › 2. Options › 'steeptime' 'st'"
    text = all_text(data_dir, "teapot.txt")
    assert "*teapot" not in text and "|teapot-pouring|" not in text and "For Teapot version" not in text
    assert "```\n:pour {cups}\n:pour 2\n```" in text
    assert "The spout keeps dripping" in text


def test_a_text_file_without_structure_is_read_as_it_is(tmp_path):
    note = tmp_path / "note.txt"
    note.write_text("Plain words.\n\n# not a heading in a plain note\n", encoding="utf-8")
    title, text, _, structured = readers.read_document(note)
    assert (title, structured) == ("note", False) and text == note.read_text(encoding="utf-8")


def test_gzip_compressed_documents_read_like_plain_ones(capsys, tmp_path, data_dir):
    folder = tmp_path / "docs"
    folder.mkdir()
    write_files(
        folder,
        {
            "kettle-guide.md.gz": (DOCS / "kettle-guide.md").read_bytes(),
            "teapot.txt.gz": (DOCS / "teapot.txt").read_bytes(),
            "kettle.json.gz": b'{"title": "not a document"}',
        },
    )
    rc, out, err = ingest(capsys, data_dir, folder)
    assert rc == 0 and "2 added" in out
    hit = search(capsys, data_dir, "default brewing temperature")[0]
    assert hit["title"] == "Kettle Guide" and hit["source"].endswith("kettle-guide.md.gz")
    assert hit["section"] == "Kettle Guide › Installing"
    assert "title:" not in hit["text"]
    rc, out, err = ingest(capsys, data_dir, folder / "kettle.json.gz")
    assert rc == 1 and "unsupported file type compressed '.json'" in err


def test_a_gzip_bomb_or_a_damaged_gzip_is_refused_with_a_clear_reason(capsys, monkeypatch, tmp_path, data_dir):
    bomb = tmp_path / "bomb.txt.gz"
    bomb.write_bytes(gzip.compress(b"a" * 200_000))
    broken = tmp_path / "broken.md.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00 this is not deflate data")
    monkeypatch.setattr(readers, "MAX_DECOMPRESSED", 100_000)
    rc, out, err = ingest(capsys, data_dir, bomb, broken)
    assert rc == 1 and "Traceback" not in err
    assert "bomb.txt.gz" in err and "unpacks to more than" in err
    assert "broken.md.gz" in err and "not a readable gzip file" in err


def test_chunks_do_not_straddle_top_level_sections():
    body = " ".join(f"Alpha fact number {i} is about the first topic." for i in range(18))
    other = " ".join(f"Beta fact number {i} is about the second topic." for i in range(18))
    text = f"# Guide\n\n## First topic\n\n{body}\n\n## Second topic\n\n{other}\n"
    pieces, spans, labels = chunk_sections(sections("Guide", text))
    chunks = ["\n\n".join(pieces[a:b]) for a, b in spans]
    assert labels == ["Guide › First topic", "Guide › Second topic"]
    assert "Beta" not in chunks[0] and "Alpha" not in chunks[1]


def test_a_fenced_block_is_one_paragraph_and_one_sentence():
    text = "Run it like this:\n\n```sh\nmake all\n\nmake test. Then stop.\n```\n\nDone. Next."
    code = "```sh\nmake all\n\nmake test. Then stop.\n```"
    assert paragraphs(text) == ["Run it like this:", code, "Done. Next."]
    assert split_sentences(text) == ["Run it like this:", code, "Done.", "Next."]


def test_a_kb_from_the_previous_version_still_opens(capsys, tmp_path, data_dir):
    assert ingest(capsys, data_dir, DOCS / "kettle-guide.md")[0] == 0
    db = sqlite3.connect(data_dir / "kb" / "lexical.sqlite")
    db.execute("ALTER TABLE chunks DROP COLUMN section")  # the table as the previous version made it
    db.commit()
    db.close()
    hit = search(capsys, data_dir, "default brewing temperature")[0]
    assert hit["title"] == "Kettle Guide" and hit["section"] == ""
    copy = tmp_path / "teapot.txt"
    shutil.copy(DOCS / "teapot.txt", copy)
    assert ingest(capsys, data_dir, copy)[0] == 0  # and takes new documents, with their heading paths
    assert search(capsys, data_dir, "steeptime seconds")[0]["section"].startswith("Teapot help › 2. Options")


def test_a_placeholder_in_angle_brackets_is_kept_in_markdown(cli, tmp_path):
    """CommonMark reads `<count>` as an HTML tag; in documentation it is a placeholder to keep."""
    note = tmp_path / "spool.md"
    note.write_text(
        "# Spooler\n\n## --retry=<count>\n\nHow often a refused job is sent again. Logs go to spool.<pid>.log.\n"
    )
    assert cli("kb", "ingest", str(note)).returncode == 0
    hit = json.loads(cli("kb", "search", "--json", "retry refused job").stdout)["hits"][0]
    assert "--retry=<count>" in hit["section"] and "spool.<pid>.log" in hit["text"]
