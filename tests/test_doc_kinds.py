"""Every documentation folder a user has: man pages (both macro sets), info manuals, text without an
extension found by its content, through `kb ingest` and a question answered offline. The fixtures in
tests/fixtures/doc-kinds were written for these tests."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from kbfiles import clean_env, ingest, search, write_files

from sleuth.utils.kb import readers
from sleuth.utils.kb.roff import plain

KINDS = Path(__file__).resolve().parent / "fixtures" / "doc-kinds"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    clean_env(monkeypatch, tmp_path)


def top_hit(capsys, data_dir: Path, query: str) -> dict:
    return search(capsys, data_dir, query, k=1)[0]


def answer(cli, question: str, data_dir: Path) -> dict:
    proc = cli("--json", "--tools", "kb", question, data_dir=data_dir)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_questions_answered_only_by_a_man_page_option_a_release_note_and_an_info_entry(cli, tmp_path):
    data = tmp_path / "data"
    proc = cli("kb", "ingest", str(KINDS), data_dir=data)
    assert proc.returncode == 0, proc.stderr
    assert "unsupported" not in proc.stderr
    assert "read 3 text, 2 man pages, 1 HTML, 1 info manual, 1 PDF" in proc.stdout
    assert "passed over 1 path(s): the source of an HTML page that is read" in proc.stderr  # kiln-directives.md
    assert "passed over 1 path(s): a stub page" in proc.stderr and "old-directives.html" in proc.stderr
    asked = {
        "What is the default ramp rate of kilnctl?": "150 degrees",  # a man page's .TP option
        "How long does tarpd hold a knocking client by default?": "37",  # an mdoc .It Fl entry
        "Which version of kilnctl added the bisque program?": "3.4",  # a NEWS file's release note
        "Which sieve mesh catches the lumps that would pinhole a glaze?": "80",  # an info manual's table entry
        "What exit status does kilnctl give when the thermocouple fails?": "4:",
        "What is the default of kiln_telemetry_buffer?": "1073741824",  # a row of a table under its heading
        "Since which release is there a kiln_watchdog_interval directive?": "2.9.7",  # a row under column headers
        "What do potters call the fault caused by opening the kiln lid too hot?": "dunting",  # a PDF's sentence
        "Which release made the firing log rotate every day?": "v2.8.0",  # a changelog's entry, by its release
    }
    for question, expected in asked.items():
        got = answer(cli, question, data)
        assert expected in got["answer"], (question, got["answer"])
        urls = [s["url"] for s in got["sources"]]
        assert not any(u.endswith(("kiln-directives.md", "old-directives.html")) for u in urls)  # read once


def test_each_option_of_a_man_page_carries_its_heading_path(capsys, data_dir):
    assert ingest(capsys, data_dir, KINDS)[0] == 0
    hit = top_hit(capsys, data_dir, "ramp rate degrees per hour")
    assert hit["title"] == "kilnctl(1)"
    assert "### -r, --ramp-rate=DEGREES\n\n- -r, --ramp-rate=DEGREES: raise the temperature" in hit["text"]
    assert "\\f" not in hit["text"] and ".TP" not in hit["text"]
    hit = top_hit(capsys, data_dir, "knocking client first byte")
    assert hit["title"] == "tarpd(8)"
    assert "### -w seconds\n\n- -w seconds: Hold each knocking client" in hit["text"]
    assert "tarpd [-dv] [-w seconds] address" in hit["text"]  # mdoc's Op, Fl, Ar read as they print


def test_text_after_an_option_list_is_under_its_section_again(tmp_path):
    title, text = readers.read_document(KINDS / "kilnctl.1.gz")[:2]
    from sleuth.utils.kb.structure import sections

    by_text = {s.text.split("\n")[-1]: s.label for s in sections(title, text)}
    assert by_text["Text after the list belongs to the description again."] == "kilnctl(1) › Description"
    assert by_text["- 4: the thermocouple failed during the firing."] == "kilnctl(1) › Exit status › 4"
    assert by_text[
        "- --cone-pack: wait for the witness cones to bend before the program moves to its next segment."
    ] == ("kilnctl(1) › Description › --cone-pack")


def test_a_folder_of_man_pages_is_read_and_counted(capsys, tmp_path, data_dir):
    man = write_files(
        tmp_path / "man",
        {
            "man1/kilnctl.1.gz": gzip.decompress((KINDS / "kilnctl.1.gz").read_bytes()),
            "man8/tarpd.8": (KINDS / "tarpd.8").read_bytes(),
            "man1/kiln.1": ".so man1/kilnctl.1\n",  # an alias of another page
            "man8/kilnd.8.gz": ".TH KILND 8\n.SH NAME\nkilnd \\- the kiln daemon\n.SH OPTIONS\n.TP\n.B \\-\\-port\n"
            "the serial port.\n",
        },
    )
    rc, out, err = ingest(capsys, data_dir, man)
    assert rc == 0, err
    assert "read 3 man pages" in out
    assert "passed over 1 path(s): a man page that only includes another man page that is read" in err
    assert "skipped" not in err and "unsupported" not in err
    assert top_hit(capsys, data_dir, "kiln daemon serial port")["title"] == "kilnd(8)"
    assert top_hit(capsys, data_dir, "pottery kiln shell")["title"] == "kilnctl(1)"


def test_text_without_an_extension_is_found_by_its_content_not_its_name(capsys, tmp_path, data_dir):
    folder = write_files(
        tmp_path / "pkg",
        {
            "WHATSNEW": "Release 2.0\n\nThe spooler now retries a refused job three times.\n",
            "copyright.Debian": "The spooler is free software; the license is the MIT license.\n",
            "history.gz": "Release 1.0\n\nFirst release of the spooler, with a single queue.\n",
            "spoolctl": b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8,  # a program
            "index": "".join(f"job{i}\tqueue{i}\t/var/spool/{i}\n" for i in range(40)),  # data
        },
    )
    rc, out, err = ingest(capsys, data_dir, folder)
    assert rc == 0, err
    assert "read 3 text" in out
    assert "skipped 2 files" in err and "not documents" in err
    assert top_hit(capsys, data_dir, "refused job retries")["source"].endswith("WHATSNEW")
    assert top_hit(capsys, data_dir, "single queue first release")["source"].endswith("history.gz")


def test_an_info_manual_reads_by_node_without_menus_or_tag_table(tmp_path):
    title, text = readers.read_document(KINDS / "glaze.info")[:2]
    assert title == "Glaze manual"
    assert "## 1 Mixing" in text and "### '--sieve-mesh=N'" in text
    for navigation in ("* Menu:", "Tag Table", "File: glaze.info", "\x1f", "*note"):
        assert navigation not in text


def test_a_table_row_reads_with_its_headers_under_its_heading(tmp_path):
    from sleuth.utils.kb.structure import sections

    title, text = readers.read_document(KINDS / "kiln-directives.html")[:2]
    by_text = {s.text.split("\n")[-1]: s.label for s in sections(title, text)}
    assert "- Default: kiln_telemetry_buffer 1073741824;" in text
    assert "- Directive: kiln_watchdog_interval; Default: 45s; Since: 2.9.7" in text
    assert "| Directive | Default | Since |" not in text  # the header row is read with each row, not alone
    assert by_text["- soak: A pause at the peak temperature that lets the heat reach the middle of thick pots."] == (
        "Kiln directives › Terms › soak"
    )
    assert by_text["Text after the terms belongs to the terms section again."] == "Kiln directives › Terms"
    sec = next(s for s in sections(title, text) if "Default: kiln_telemetry_buffer" in s.text)
    assert sec.label == "Kiln directives › kiln_telemetry_buffer"


def test_pdf_text_has_no_running_headers_footers_or_words_broken_at_line_ends(capsys, tmp_path, data_dir):
    title, text = readers.read_document(KINDS / "field-guide.pdf")[:2]
    assert title == "Kilnctl Field Guide"
    assert "wall of the firing chamber." in text  # "cham-" at a line's end, "ber." on the next
    assert "Page 2 of 3" not in text and "Kilnctl Field Guide" not in text  # the footer, the running header
    damaged = tmp_path / "damaged.pdf"
    damaged.write_bytes((KINDS / "field-guide.pdf").read_bytes()[:300])
    rc, _, err = ingest(capsys, data_dir, damaged)
    assert rc == 1
    assert err.count("damaged.pdf") == 1 and len(err.strip().splitlines()) == 1  # named once, nothing else


def test_a_sphinx_page_and_its_source_are_read_once_and_ingest_says_so(capsys, tmp_path, data_dir):
    site = write_files(
        tmp_path / "build",
        {
            "guide/firing.html": "<html><head><title>Firing</title></head><body><h1>Firing</h1>"
            "<p>A bisque firing drives the water out of the clay before the glaze goes on.</p></body></html>",
            "_sources/guide/firing.rst.txt": "Firing\n======\n\n"
            "A bisque firing drives the water out of the clay before the glaze goes on.\n",
        },
    )
    rc, out, err = ingest(capsys, data_dir, site)
    assert rc == 0 and "read 1 HTML" in out and "1 added" in out
    assert "passed over 1 path(s): the source of an HTML page that is read" in err and "firing.rst.txt" in err


def test_a_split_info_manual_reads_whole_from_its_first_file_and_its_parts_are_passed_over(capsys, tmp_path, data_dir):
    folder = write_files(
        tmp_path / "info",
        {
            "clay.info": b"This is clay.info, produced by hand.\n\n\x1f\nIndirect:\nclay.info-1: 120\n\x1f\n"
            b"Tag Table:\n(Indirect)\nNode: Top\x7f120\n\x1f\nEnd Tag Table\n",
            "clay.info-1.gz": b"This is clay.info, produced by hand.\n\n"
            b"\x1f\nFile: clay.info,  Node: Top,  Up: (dir)\n\n"
            b"Clay manual\n***********\n\n\x00\x08[index\x00\x08]Wedging the clay drives out the air pockets.\n",
        },
    )
    rc, out, err = ingest(capsys, data_dir, folder)
    assert rc == 0, err
    assert "read 1 info manual" in out
    assert "passed over 1 path(s): a part of an info manual" in err
    assert top_hit(capsys, data_dir, "wedging air pockets")["title"] == "Clay manual"


def test_roff_escapes_read_as_the_characters_they_print():
    assert plain(r"\fB\-\-all\fR") == "--all"
    assert plain(r"\(lqquoted\(rq \(em caf\['e] \[u00E9]t\(e9") == "“quoted” — café ét"
    assert plain(r"a\ b\~c\&d\s-1SMALL\s0 \*(lqx\*(rq") == "a b cdSMALL “x”"


MAN_HEAD = ".TH KILNWATCH 1\n.SH NAME\nkilnwatch \\- watch a kiln\n.SH DESCRIPTION\n"
MDOC_HEAD = ".Dd January 1, 2026\n.Dt KILNWATCH 1\n.Os\n.Sh NAME\n.Nm kilnwatch\n.Nd watch a kiln\n.Sh DESCRIPTION\n"


@pytest.mark.parametrize("head", [MAN_HEAD, MDOC_HEAD], ids=["man", "mdoc"])
def test_roff_conditionals_read_as_a_terminal_shows_them(tmp_path, head):
    page = tmp_path / "kilnwatch.1"
    page.write_text(
        head + ".if t \\{\nTypeset only,\nnever on a terminal.\n.\\}\n.ie n Shown on a terminal.\n.el Never shown.\n"
    )
    text = readers.read_document(page)[1]
    assert "Shown on a terminal." in text
    assert "Typeset only" not in text and "Never shown" not in text


def test_a_plain_text_option_is_quoted_with_its_term_however_far_into_its_description(cli, tmp_path):
    # a plain-text manual writes each option at the margin and what it does indented under it
    manual = (
        "TARPD OPTIONS\n=============\n\nGeneral\n-------\n\n"
        "--linger=<seconds>\n"
        "    Keep a finished client's slot for this long. Giving this option also turns on\n"
        "    the slow-close mode for every listener.\n\n"
        "--quiet\n"
        "    Write nothing to the terminal except errors.\n"
    )
    docs = write_files(tmp_path / "docs", {"tarpd-options.txt": manual})
    data = tmp_path / "data"
    assert cli("kb", "ingest", str(docs), data_dir=data).returncode == 0
    got = answer(cli, "Which option turns on the slow-close mode?", data)
    assert got["answer"].startswith("--linger=<seconds>"), got["answer"]
