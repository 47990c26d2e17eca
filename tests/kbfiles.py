"""What the document tests (test_doc_kinds.py, test_kb_documents.py) share: a clean environment,
`kb ingest` and `kb search` run in-process, and a folder of made-up files written in one call."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from sleuth.utils.cli.kb import main


def clean_env(monkeypatch, tmp_path: Path) -> None:
    """No KB settings from the environment, and the test's folder as the working directory."""
    for var in ("SLEUTH_EMBEDDING", "SLEUTH_CHROMA_URL", "SLEUTH_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


def ingest(capsys, data_dir: Path, *paths: Path) -> tuple[int, str, str]:
    """`kb ingest PATHS`: (exit status, stdout, stderr)."""
    rc = main(["ingest", *map(str, paths), "--data-dir", str(data_dir)])
    out, err = capsys.readouterr()
    return rc, out, err


def search(capsys, data_dir: Path, query: str, k: int = 3) -> list[dict]:
    """`kb search QUERY -k K --json`: its hits."""
    rc = main(["search", query, "-k", str(k), "--json", "--data-dir", str(data_dir)])
    out, _ = capsys.readouterr()
    assert rc == 0
    return json.loads(out)["hits"]


def write_files(folder: Path, files: dict[str, str | bytes]) -> Path:
    """`folder` holding `files` (path inside it -> text or bytes; a name ending in .gz is written
    gzip-compressed), folders made as needed."""
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8") if isinstance(content, str) else content
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return folder
