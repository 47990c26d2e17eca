"""A long-lived user of the Python API (a script, the MCP server) keeps no file open per call: after
ingesting, searching, researching, resuming and cancelling, the process holds the descriptors it
held before — the knowledge base's stores, the session index and lock files, the cache are closed."""

from __future__ import annotations

import os
import threading

import pytest

import sleuth
from sleuth.errors import Interrupted

QUESTION = "When was the Lighthouse of Alexandria built?"
NOTES = {
    "pharos.md": "# Pharos\n\nThe Lighthouse of Alexandria was built between 280 and 247 BC on the island of "
    "Pharos. It was one of the Seven Wonders of the Ancient World.\n",
    "rhodes.md": "# Colossus\n\nThe Colossus of Rhodes was a statue of the sun god Helios, erected in 280 BC.\n",
}


def open_descriptors() -> dict[int, str]:
    """This process's open descriptors and what each names."""
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # the listing's own descriptor, closed by now
            pass
    return found


def use_the_api(tmp_path, n: int) -> None:
    notes = tmp_path / f"notes{n}"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text, encoding="utf-8")
    data = tmp_path / f"data{n}"
    with sleuth.KnowledgeBase(data_dir=data) as kb:
        assert kb.ingest([notes]).files_added == 2
        assert kb.search("lighthouse")
        assert kb.stats()
    first = sleuth.research(QUESTION, tools=["kb"], data_dir=data)
    sleuth.resume(first.session_id, "the Colossus of Rhodes too", tools=["kb"], data_dir=data)
    sleuth.resume(first.session_id, data_dir=data)  # the saved report, read back

    cancel = threading.Event()

    def progress(value, total, message):
        if message.startswith("step 1/"):
            cancel.set()

    with pytest.raises(Interrupted) as caught:
        sleuth.research(QUESTION, tools=["kb"], data_dir=data, progress=progress, cancel=cancel)
    sleuth.resume(caught.value.session_id, tools=["kb"], data_dir=data)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")
def test_api_calls_leave_no_descriptor_open(tmp_path):
    use_the_api(tmp_path, 0)  # what loads once per process (libraries, worker threads) is loaded
    before = open_descriptors()
    for n in (1, 2):
        use_the_api(tmp_path, n)
    after = open_descriptors()
    left = sorted({target for fd, target in after.items() if before.get(fd) != target})
    assert not left, f"{len(after) - len(before)} more descriptors open after the calls: {left}"
