"""A knowledge base on a disk filled to the last byte (a real tmpfs): reading works — `kb search`,
`kb stats`, research from it, `sessions list` — and writing fails with one line, status 2."""

from __future__ import annotations

import json

from tests.test_disk_full import fill, full_disk, one_line  # noqa: F401 - full_disk: the fixture

EXIT_USAGE = 2


def test_a_full_disk_reads_the_knowledge_base_and_refuses_writes_in_one_line(cli, full_disk, tmp_path):  # noqa: F811
    data = full_disk / "data"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "okapi.md").write_text("# Okapis\n\nThe okapi is a giraffid that lives in the Ituri rainforest.\n")
    assert cli("kb", "ingest", str(notes), data_dir=data).returncode == 0
    fill(full_disk)

    search = cli("kb", "search", "okapi", "--json", data_dir=data)
    assert search.returncode == 0 and "Traceback" not in search.stderr, search.stderr
    assert json.loads(search.stdout)["hits"][0]["source"].endswith("okapi.md")

    stats = cli("kb", "stats", "--json", data_dir=data)
    assert stats.returncode == 0 and "Traceback" not in stats.stderr, stats.stderr
    assert json.loads(stats.stdout)["chunks"] == 1

    research = cli("--json", "--tools", "kb", "Where do okapis live?", data_dir=data)
    assert "empty" not in research.stderr and "Traceback" not in research.stderr, research.stderr
    answer = json.loads(research.stdout)
    assert "Ituri" in answer["answer"] and answer["sources"][0]["url"].endswith("okapi.md")
    assert research.returncode == EXIT_USAGE  # the answer is printed; the session could not be saved: said
    one_line(research.stderr, data)

    (notes / "kite.md").write_text("# Kites\n\nA kite flies on the wind.\n")
    ingest = cli("kb", "ingest", str(notes / "kite.md"), data_dir=data)
    assert ingest.returncode == EXIT_USAGE
    assert "knowledge base" in one_line(ingest.stderr, data / "kb")
