"""What reaches the terminal: web text is escaped, progress stays on stderr, plain mode degrades."""

from __future__ import annotations

import io

from rich.console import Console

from sleuth.utils.cli.ui import PlainUI, RichUI, make_ui, safe_text

EVIL = "Title \x1b]0;pwned\x07 [bold red]FAKE[/bold red] \x1b[31mred\x1b[0m \u202eevil"


def test_safe_text_strips_escape_sequences_and_bidi_overrides():
    out = safe_text(EVIL)
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "[bold red]FAKE[/bold red]" in out


def test_plain_ui_escapes_web_text():
    err, out = io.StringIO(), io.StringIO()
    ui = PlainUI(err=err, out=out)
    ui.step(1, 8, "crawl_url", EVIL)
    ui.step_done({"step": 1, "ok": False, "error": EVIL, "elapsed_ms": 3})
    ui.report(f"# q\n\n## Answer\n\n{EVIL} [1]\n")
    assert "\x1b" not in err.getvalue() + out.getvalue()
    assert "FAKE" in out.getvalue()


def test_rich_ui_never_interprets_markup_or_escapes_from_pages():
    ui = RichUI()
    buf_err, buf_out = io.StringIO(), io.StringIO()
    ui.econsole = Console(file=buf_err, force_terminal=True, width=50, color_system="standard", record=True)
    ui.oconsole = Console(file=buf_out, force_terminal=True, width=50, color_system="standard")
    ui._start = lambda: None  # no live panel here (its redraws are exercised through the pty tests)
    ui.started({"original_query": EVIL, "session_id": "s"})
    ui.step(1, 8, "search_duckduckgo", EVIL)
    ui.step_done(
        {
            "step": 1,
            "action": "search_duckduckgo",
            "query_or_url": EVIL,
            "ok": True,
            "results": 2,
            "tool_used": "duckduckgo",
        }
    )
    ui.analyzed(0.5, 2, 3)
    ui.report(f"# q\n\n## Answer\n\n{EVIL} [1]\n\n## Key sources\n\n- [1] {EVIL} \u2014 https://x.test/\n")
    ui.finish()
    text = buf_err.getvalue() + buf_out.getvalue()
    assert "\x1b]0;" not in text and "\x07" not in text and "\u202e" not in text
    assert "[bold red]FAKE" in text  # shown literally, not turned into style
    # narrow terminal: log lines are cropped, never wrapped into the live panel
    logged = [ln for ln in ui.econsole.export_text().splitlines() if ln.startswith(("researching", "\u2713"))]
    assert len(logged) == 2 and all(len(line) <= 50 for line in logged)


def test_plain_mode_when_not_a_terminal_or_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert isinstance(make_ui(plain=True), PlainUI)
    monkeypatch.setenv("NO_COLOR", "1")
    assert isinstance(make_ui(), PlainUI)  # pytest's stderr is not a TTY either


def test_live_panel_escapes_web_text_and_fits_a_narrow_terminal():
    ui = RichUI()
    ui.st.update(step=2, budget=8, action="crawl_url", query=EVIL, tool=EVIL, stream=EVIL, confidence=0.4)
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=40, color_system="standard", record=True)
    console.print(ui._panel())
    text = buf.getvalue()
    assert "\x1b]0;" not in text and "\x07" not in text and "[bold red]FAKE" in text
    assert all(len(line) <= 40 for line in console.export_text().splitlines())


def test_save_writes_the_report_and_says_why_it_cannot(tmp_path, monkeypatch):
    out = io.StringIO()
    ui = PlainUI(err=io.StringIO(), out=out)
    answers = iter([f"/save {tmp_path / 'r.md'}", f"/save {tmp_path}", f"/save {tmp_path / 'gone' / 'r.md'}", ""])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert ui.ask_feedback({"report": "# Report on \ud800 pages\n"}) is None
    said = out.getvalue().splitlines()
    assert said[0] == f"saved {tmp_path / 'r.md'}"
    assert (tmp_path / "r.md").read_text(encoding="utf-8") == "# Report on \ufffd pages\n"  # UTF-8 cannot hold \ud800
    assert said[1].startswith(f"could not save {tmp_path}: ")
    assert said[2] == f"could not save {tmp_path / 'gone' / 'r.md'}: No such file or directory"
