"""Command-line parsing that every command shares: options before or after the command word, one
line for a bad option (with a did-you-mean), and the name the user ran Sleuth by, for hints.

Standard library only: `--help` stays fast."""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sys
from pathlib import Path

from .output import EXIT_USAGE, err


def invoked_as(argv0: str | None = None, executable: str | None = None) -> str:
    """How the user ran Sleuth, so that a hint (`… --resume ID`) can be typed again as it is:
    `sleuth` when that is on PATH, else the script's path as typed; `python main.py`; `python -m sleuth`."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    executable = executable or sys.executable
    name = os.path.basename(argv0)
    if name in ("__main__.py", "-m"):
        return f"{_python(executable)} -m sleuth"
    if name.endswith(".py"):
        return f"{_python(executable)} {argv0}"
    found = shutil.which(name) if name else None
    if found and argv0 and Path(found).resolve() == Path(argv0).resolve():
        return name
    return argv0 or "sleuth"


def _python(executable: str) -> str:
    """The interpreter as the user would type it: `python` when that is the one on PATH."""
    for name in ("python", "python3"):
        found = shutil.which(name)
        if found and Path(found).parent == Path(executable).parent:  # the same folder: the same environment
            return name
    try:
        relative = os.path.relpath(executable)
    except ValueError:  # another drive (Windows)
        return executable
    return relative if not relative.startswith("..") else executable


def global_parser() -> argparse.ArgumentParser:
    """A parser that knows every global option (to find the command word, and to tell an option
    that exists elsewhere from a typo)."""
    from ..config import add_global_args

    p = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    add_global_args(p)
    p.add_argument("-o", "--output")
    return p


def accept_global_options(parser: argparse.ArgumentParser) -> None:
    """Let a command take every global setting it does not use itself (engine, model, tools, data
    folder, cache, network policy, budgets...), so that an alias such as
    `alias sleuth='sleuth --engine offline --tools kb'` works with every command. They are parsed
    (and checked) as everywhere, and left out of this command's --help; options of one command
    only (`-o`, `--yes`, `-k`) are still refused by the others."""
    import copy

    mine = _options(parser)
    for action in global_parser()._actions:  # noqa: SLF001 - argparse has no public view
        if not action.option_strings or action.dest == "output" or any(s in mine for s in action.option_strings):
            continue
        accepted = copy.copy(action)
        accepted.help = argparse.SUPPRESS
        parser._add_action(accepted)  # noqa: SLF001


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {s: a for a in parser._actions for s in a.option_strings}  # noqa: SLF001 - argparse has no public view


def split_command(argv: list[str], commands) -> tuple[str | None, list[str]]:
    """The command word and its arguments, with the options given before the word moved after it
    (`--data-dir D kb ingest docs` is `kb ingest docs --data-dir D`). No command word: (None, argv)."""
    known = _options(global_parser())
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--" or not word.startswith("-") or word == "-":
            break
        action = known.get(word)
        i += 2 if action is not None and action.nargs != 0 and "=" not in word else 1
    if i >= len(argv) or argv[i] not in commands:
        return None, argv
    before, rest = argv[:i], argv[i + 1 :]
    if "--" in rest:  # options must stay before a `--` that ends them
        cut = rest.index("--")
        return argv[i], [*rest[:cut], *before, *rest[cut:]]
    return argv[i], [*rest, *before]


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2) that say what to do, and no abbreviated options
    (`--conf` is a typo to point out, not a guess)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        ns, extras = super().parse_known_args(args, namespace)
        if extras and not hasattr(ns, "_bad_parser"):  # the innermost sub-command parser names itself
            ns._bad_parser = self
        return ns, extras

    def parse_args(self, args=None, namespace=None):
        ns, extras = self.parse_known_args(args, namespace)
        parser = getattr(ns, "_bad_parser", self)
        if hasattr(ns, "_bad_parser"):
            del ns._bad_parser
        if extras:
            parser.error(parser.unknown(extras))
        return ns

    def parse_intermixed_args(self, args=None, namespace=None):
        ns, extras = self.parse_known_intermixed_args(args, namespace)
        if hasattr(ns, "_bad_parser"):
            del ns._bad_parser
        if extras:
            self.error(self.unknown(extras))
        return ns

    def unknown(self, extras: list[str]) -> str:
        option = next((x for x in extras if x.startswith("-") and x != "-"), None)
        if option is None:
            return f"unexpected argument {extras[0]!r}"
        name = option.split("=", 1)[0]
        mine = [s for s in _options(self) if s.startswith("--")]
        if name in _options(global_parser()):
            return f"`{self.prog}` does not use {name}"
        close = [s for s in mine if s.startswith(name)][:3] or difflib.get_close_matches(name, mine, n=1, cutoff=0.6)
        return f"unknown option {name}" + (f"; did you mean {' or '.join(close)}?" if close else "")

    def error(self, message: str):
        err(f"{did_you_mean(message)} (see: {self.prog} --help)")
        raise SystemExit(EXIT_USAGE)


def did_you_mean(message: str) -> str:
    """argparse's "invalid choice: 'serach' (choose from 'ingest', 'search', ...)" as one line that
    names the closest command word."""
    import re

    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not m:
        return message
    given, choices = m.group(1), re.findall(r"'([^']*)'", m.group(2))
    close = difflib.get_close_matches(given, choices, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]}?" if close else ""
    return f"unknown command {given!r}{hint} (commands: {', '.join(choices)})"


def mistyped_command(words: list[str], commands) -> str | None:
    """The command a question's first word is a slip of (`sesions list`, `bacth`), or None: a mistyped
    command word is refused rather than researched. A slip is one letter missing or extra, or two
    neighbours swapped, in a command of 4 letters or more (one letter changed is left alone: `match`
    is a word, not a slip of `batch`). Only for a question given as several words: a quoted
    question, or `ask`, is taken as it is."""
    if len(words) < 2 or not words[0].isalpha() or not words[0].islower():
        return None
    return next((c for c in commands if len(c) >= 4 and _slip(words[0], c)), None)


def _slip(word: str, command: str) -> bool:
    if word == command or abs(len(word) - len(command)) > 1:
        return False
    if len(word) == len(command):
        diff = [i for i, (a, b) in enumerate(zip(word, command, strict=True)) if a != b]
        i = diff[0] if len(diff) == 2 and diff[1] == diff[0] + 1 else -1
        return i >= 0 and (word[i], word[i + 1]) == (command[i + 1], command[i])
    short, long = sorted((word, command), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
