"""Terminal output. Progress goes to stderr, reports to stdout. Everything that came from the
web passes through `safe_text` first: no terminal escape sequences from a page reach the screen."""

from __future__ import annotations

import re
import sys
import threading
from typing import Any, TextIO

from ..registry import BY_ACTION, role_of, title_of
from ..research.report import failure_text, web_unreachable
from .output import WRITE_LOCK as _WRITE_LOCK
from .output import safe_text, short  # noqa: F401 - the UI prints through the same sanitiser

FEEDBACK_HELP = """Type feedback in your own words to research again with it, e.g.
  look into the 1889 World's Fair      a new direction
  ignore [3]  /  the second source is outdated      drop a source from the next report
Commands:
  /sources          list the sources with their numbers
  /save FILE.md     write the report to a file
  /help             this list
  Enter, done, /quit   finish (the session stays saved; --resume ID reopens it)"""


_WEB_UNREACHABLE_SAID = threading.Event()  # once a process: a batch's questions share one network


def took(ms: int) -> str:
    """A step's time as a person reads it: 312 ms, 2.9 s."""
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


class PlainUI:
    """Line-oriented progress on stderr; safe in pipes, CI logs and dumb terminals."""

    def __init__(
        self,
        err: TextIO | None = None,
        out: TextIO | None = None,
        quiet: bool = False,
        prefix: str = "",
        show_report: bool = True,
    ):
        self.err = err or sys.stderr
        self.out = out or sys.stdout
        self.quiet = quiet
        self.prefix = prefix
        self.show_report = show_report
        self._lock = _WRITE_LOCK
        self.asking = None  # action -> what is being asked ("SearXNG"), set by the command (asked_by)

    def _line(self, text: str) -> None:
        if self.quiet:
            return
        with self._lock:
            print(f"{self.prefix}{text}", file=self.err, flush=True)

    def warn(self, text: str) -> None:
        with self._lock:
            print(f"{self.prefix}sleuth: {safe_text(text)}", file=self.err, flush=True)

    def started(self, shared: dict) -> None:
        self._line(f"researching: {short(shared['original_query'], 100)}  (session {shared['session_id']})")

    def _asked(self, action: str) -> str:
        """What the step asks, as the user knows it: `web search (SearXNG)`, `knowledge base`."""
        try:
            return (self.asking(action) if self.asking else "") or title_of(action)
        except Exception:  # noqa: BLE001 - naming the backend must never stop a step
            return title_of(action)

    def step(self, step: int, budget: int, action: str, query: str) -> None:
        self._line(f"[{step}/{budget}] {self._asked(action)}: {short(query)}")

    def offline_hint(self, entry: dict) -> None:
        """Said once a run: the web could not be reached, and what works without it."""
        if web_unreachable(entry) and not _WEB_UNREACHABLE_SAID.is_set():
            _WEB_UNREACHABLE_SAID.set()
            self.warn("the web could not be reached (no network?); to answer from your knowledge base use --tools kb")

    def step_done(self, entry: dict) -> None:
        self.offline_hint(entry)
        if entry.get("ok"):
            msg = f"      \u2713 {entry.get('results', 0)} result(s) via {entry.get('tool_used')}"
        else:
            msg = f"      \u2717 {short(failure_text(entry), 100)}"
        if entry.get("fallback_used"):
            msg += " (fallback)"
        if entry.get("remapped_from"):
            msg += f" (instead of {title_of(entry['remapped_from'])})"
        self._line(f"{msg} {'in' if entry.get('ok') else 'after'} {took(entry.get('elapsed_ms', 0))}")

    def analyzed(self, confidence: float, n_sources: int, n_facts: int, fallback: bool = False) -> None:
        bar = "#" * int(round(confidence * 10))
        note = " (LLM failed: offline fallback)" if fallback else ""
        self._line(
            f"      confidence [{bar:<10}] {confidence:.2f} \u00b7 {n_facts} fact(s) \u00b7 {n_sources} source(s){note}"
        )

    def stopping(self, reason: str, detail: str) -> None:
        self._line(f"stop: {reason} \u2014 {short(detail, 120)}")

    def report_chunk(self, text: str) -> None:  # streaming is shown by the rich UI only
        pass

    def report(self, markdown: str) -> None:
        if not self.show_report:
            return
        with self._lock:
            self.out.write(safe_text(markdown))
            self.out.flush()

    def finish(self) -> None:
        pass

    # ---------------------------------------------------------------- prompts (interactive only)
    def ask_question(self) -> str:
        try:
            return input("Question: ").strip()
        except EOFError:
            return ""

    def ask_feedback(self, prep: dict) -> str | None:
        """Feedback prompt. Empty line or `done` ends; /help, /sources, /save FILE.md, /quit are commands."""
        while True:
            try:
                line = input("\nFeedback (Enter to finish, /help, /sources, /save FILE.md, /quit): ").strip()
            except EOFError:
                return None
            if line in ("", "done", "/done", "/quit", "quit", "exit"):
                return None
            if line in ("/help", "/?", "help"):
                print(FEEDBACK_HELP, file=self.out)
                continue
            if line == "/sources":  # numbered as the report numbers them; then the ones it did not list
                by_n = {src.n: src for src in prep.get("sources", [])}
                order, listed = prep.get("shown") or (sorted(by_n), 0)
                for r, n in enumerate(order, 1):
                    if listed and r == listed + 1:
                        print("found but not in the report:", file=self.out)
                    src = by_n[n]
                    print(
                        f"[{r}] {short(src.title, 70)} \u2014 {safe_text(src.url)}",
                        file=self.out,
                    )
                continue
            if line.startswith("/save"):
                path = line[5:].strip()
                if not path:
                    print("usage: /save FILE.md", file=self.out)
                    continue
                from ..sessions import write_text_atomic  # whole file or nothing, as -o writes it

                try:
                    write_text_atomic(path, prep.get("report") or "")
                    print(f"saved {safe_text(path)}", file=self.out)
                except OSError as exc:
                    print(f"could not save {safe_text(path)}: {exc.strerror or exc}", file=self.out)
                continue
            if line.startswith("/"):
                print(f"unknown command {line.split()[0]}", file=self.out)
                continue
            return line


class RichUI(PlainUI):
    """A live status panel on stderr (rich), a Markdown report on stdout.

    Every line of the panel is a single row (no wrapping, ellipsis on overflow), so a narrow
    terminal shows less rather than garbling. Web text is passed as rich `Text`, never as markup."""

    def __init__(self, quiet: bool = False, show_report: bool = True, prefix: str = ""):
        super().__init__(quiet=quiet, show_report=show_report, prefix=prefix)
        from rich.console import Console

        self.econsole = Console(stderr=True, highlight=False)
        self.oconsole = Console(highlight=False)
        self.live: Any = None  # a rich Live, started at the first step
        self.st: dict[str, Any] = {
            "step": 0,
            "budget": 0,
            "action": "starting",
            "query": "",
            "tool": "",
            "confidence": 0.0,
            "sources": 0,
            "facts": 0,
            "stream": "",
        }

    # -- live panel
    def _panel(self):
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        st = self.st
        head = Text(no_wrap=True, overflow="ellipsis")
        head.append(f"step {st['step']}/{st['budget']} ", style="bold cyan")
        head.append(f"{st['action']} ", style="bold")
        head.append(short(st["query"], 200))
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(ratio=1)
        grid.add_column(no_wrap=True)
        grid.add_row(
            Text("confidence"),
            ProgressBar(total=1.0, completed=st["confidence"], width=None),
            Text(f"{st['confidence']:.2f}  {st['sources']} src  {st['facts']} facts", no_wrap=True),
        )
        parts: list[Any] = [head, grid]
        if st["tool"]:
            parts.append(Text(short(st["tool"], 300), style="dim", no_wrap=True, overflow="ellipsis"))
        if st["stream"]:
            tail = st["stream"].splitlines()[-4:]
            parts.append(Text("\n".join(short(x, 300) for x in tail), style="italic", overflow="ellipsis"))
        return Group(*parts)

    def _start(self):
        if self.live is None and not self.quiet:
            from rich.live import Live

            self.live = Live(
                get_renderable=self._panel,
                console=self.econsole,
                refresh_per_second=8,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self.live.start()

    def _log(self, text, style: str | None = None) -> None:
        if self.quiet:
            return
        from rich.text import Text

        t = text if isinstance(text, Text) else Text(text, style=style or "")
        t.no_wrap, t.overflow = True, "ellipsis"
        self.econsole.print(t, no_wrap=True, overflow="ellipsis", crop=True)

    def warn(self, text: str) -> None:
        from rich.text import Text

        self.econsole.print(Text(f"sleuth: {safe_text(text)}", style="yellow"))

    def started(self, shared: dict) -> None:
        self._log(
            f"researching: {short(shared['original_query'], 200)}  (session {shared['session_id']})", style="bold"
        )
        self._start()

    def step(self, step: int, budget: int, action: str, query: str) -> None:
        self._start()
        self.st.update(step=step, budget=budget, action=self._asked(action), query=query, tool="")
        if self.live:
            self.live.refresh()

    def step_done(self, entry: dict) -> None:
        from rich.text import Text

        self.offline_hint(entry)
        ok = entry.get("ok")
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append("\u2713 " if ok else "\u2717 ", style="green" if ok else "red")
        t.append(f"{entry.get('step')}. {title_of(entry.get('action'))} ", style="bold")
        t.append(short(entry.get("query_or_url", ""), 200))
        if ok:
            t.append(f"  {entry.get('results', 0)} via {entry.get('tool_used')}", style="dim")
        else:
            t.append(f"  {short(failure_text(entry), 200)}", style="red")
        notes = []
        if entry.get("fallback_used"):
            notes.append("fallback")
        if entry.get("remapped_from"):
            notes.append(f"instead of {title_of(entry['remapped_from'])}")
        self.st["tool"] = f"tool: {entry.get('tool_used') or 'none'}" + (f" ({', '.join(notes)})" if notes else "")
        if notes:
            t.append(f" ({', '.join(notes)})", style="yellow")
        self._log(t)

    def analyzed(self, confidence: float, n_sources: int, n_facts: int, fallback: bool = False) -> None:
        self.st.update(confidence=confidence, sources=n_sources, facts=n_facts)
        if fallback:
            self._log("LLM call failed: the offline engine answered this step", style="yellow")
        if self.live:
            self.live.refresh()

    def stopping(self, reason: str, detail: str) -> None:
        self.st.update(action="writing report", query=f"stop: {reason}", stream="")
        self._log(f"stop: {reason} \u2014 {short(detail, 200)}", style="bold")

    def report_chunk(self, text: str) -> None:
        self._start()
        self.st["stream"] += safe_text(text)
        if self.live:
            self.live.refresh()

    def finish(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        self.st["stream"] = ""

    def report(self, markdown: str) -> None:
        self.finish()
        if not self.show_report:
            return
        if self.oconsole.is_terminal:
            from rich.markdown import Markdown

            self.oconsole.print(Markdown(safe_text(markdown), hyperlinks=False))
        else:
            super().report(markdown)

    def ask_question(self) -> str:
        self.finish()
        return super().ask_question()

    def ask_feedback(self, prep: dict) -> str | None:
        self.finish()
        return super().ask_feedback(prep)


def asked_by(tools):
    """What a step asks, named for the user: `web search (SearXNG)` or `Google (Gemini grounding)`
    (the backend tried first), `knowledge base`, `read page`, `wiki`; never the action's name."""

    def name(action: str) -> str:
        title = title_of(action)
        if role_of(action) != "web_search":
            return title
        client = tools.search()
        chain = client.preferred(BY_ACTION[action].tool)
        label = client.backends[chain[0]].label if chain else ""
        if title == "Google":  # "Google Search (Gemini grounding)" -> "Google (Gemini grounding)"
            label = re.sub(r"^Google(?: Search)?\s*", "", label).strip("() ")
        return f"{title} ({label})" if label else title

    return name


def wants_plain(plain: bool = False) -> bool:
    import os

    return plain or "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb" or not sys.stderr.isatty()


def make_ui(plain: bool = False, quiet: bool = False, show_report: bool = True, prefix: str = ""):
    """Rich live display when stderr is a terminal; plain lines otherwise, or with --plain/NO_COLOR."""
    if wants_plain(plain):
        return PlainUI(quiet=quiet, show_report=show_report, prefix=prefix)
    return RichUI(quiet=quiet, show_report=show_report, prefix=prefix)
