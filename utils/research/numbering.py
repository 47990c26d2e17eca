"""Report-local source numbers, with one owner.

The session numbers its sources as it finds them (1, 2, 3, ...) and keeps those numbers for good:
facts, citation checks, `excluded_sources` and the engine's prompts use them. A report numbers its
sources afresh, 1..k with no gaps: the ones its answer cites, in the order of first citation, then
the other ones it lists; every other source of the session follows (k+1...) for the outputs that
list them all (`/sources`, `--json`). `order[i]` is the session number of the source shown as
[i + 1]. Each entry of shared["reports"] keeps its `order` and `listed` (k), so feedback ("ignore
[2]"), `/sources` and the JSON outputs read the numbers of the report the user read, after a resume
too. Pure functions over numbers and strings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

_MARK = re.compile(r"\[(\d{1,3})(\??)\]")  # [n], or [n?] when the citation failed its check


def report_order(listed: Sequence[int], total: int) -> list[int]:
    """Session numbers in report order: `listed` as the report lists them, then the rest of 1..total."""
    first = [n for n in dict.fromkeys(listed) if 1 <= n <= total]
    return first + sorted(set(range(1, total + 1)) - set(first))


def renumber(answer: str, order: Sequence[int]) -> str:
    """The answer with each [n] / [n?] (session numbers) written as the report numbers it;
    a marker that names no source becomes [?], so it never points at another one."""
    shown = {n: i for i, n in enumerate(order, 1)}

    def sub(m: re.Match) -> str:
        r = shown.get(int(m.group(1)))
        return f"[{r}{m.group(2)}]" if r else "[?]"

    return _MARK.sub(sub, answer or "")


def to_session(numbers: Iterable[int], order: Sequence[int]) -> list[int]:
    """The session numbers of sources shown as `numbers`; a number the report did not show is dropped."""
    return sorted({order[r - 1] for r in numbers if 1 <= r <= len(order)})


def shown(reports: Sequence[dict], total: int) -> tuple[list[int], int]:
    """(order, listed) as the last report numbered the sources, completed by those found since;
    1..total, none listed, before the first report (and for sessions saved before reports kept it)."""
    last = reports[-1] if reports else {}
    return report_order(last.get("order") or [], total), int(last.get("listed") or 0)


class StreamedNumbers:
    """An answer renumbered as it streams to the screen: the k-th source it cites first shows as [k],
    as the report will number it; a number that names no source shows as [?]. Called with each chunk;
    a marker cut between two chunks waits for the next one."""

    def __init__(self, sources: Iterable[int], show: Callable[[str], None]):
        self.sources, self.show = set(sources), show
        self.first: list[int] = []
        self.held = ""

    def _sub(self, m: re.Match) -> str:
        n = int(m.group(1))
        if n not in self.sources:
            return "[?]"
        if n not in self.first:
            self.first.append(n)
        return f"[{self.first.index(n) + 1}{m.group(2)}]"

    def __call__(self, chunk: str) -> None:
        text, cut = self.held + chunk, (self.held + chunk).rfind("[")
        open_marker = cut != -1 and re.fullmatch(r"\[\d{0,3}\??", text[cut:])
        text, self.held = (text[:cut], text[cut:]) if open_marker else (text, "")
        if text:
            self.show(_MARK.sub(self._sub, text))
