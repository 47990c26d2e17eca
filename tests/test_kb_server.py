"""The knowledge base against a real Chroma server (`chroma run` on 127.0.0.1)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import sleuth.utils.kb.sync as kbsync
from sleuth.utils.kb.store import EmbeddingMismatch, KnowledgeBase
from tests.test_kb import write_corpus

CHROMA = Path(sys.executable).with_name("chroma")


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory):
    exe = CHROMA if CHROMA.exists() else shutil.which("chroma")
    if not exe:
        pytest.skip(f"the `chroma` executable is not installed (looked next to {sys.executable} and on PATH)")
    port = _free_port()
    store = tmp_path_factory.mktemp("chroma-server")
    log = open(store.parent / "chroma-server.log", "wb")  # noqa: SIM115 - closed in teardown
    cmd = [str(exe), "run", "--path", str(store), "--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:  # readiness poll: short waits until the heartbeat answers, bounded
            if proc.poll() is not None:
                pytest.fail(f"chroma server exited early: {(store.parent / 'chroma-server.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("chroma server did not answer its heartbeat within 60 s")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture
def collection(request) -> str:
    return "t-" + request.node.name.replace("_", "-")[:50]


def test_ingest_and_search_through_a_server(chroma_url, collection, tmp_path):
    corpus = write_corpus(tmp_path / "docs")
    kb = KnowledgeBase(tmp_path / "a" / "kb", chroma_url=chroma_url, collection=collection)
    report = kb.ingest_paths([corpus])
    assert report.files_added == 4 and len(report.errors) == 2
    assert Path(kb.search("Which volcano closed European airspace?", k=1)[0].source).name == "volcano.txt"
    assert Path(kb.search("volcano ash Iceland airspace", k=1, mode="vector")[0].source).name == "volcano.txt"
    stats = kb.stats()
    assert stats["store"] == chroma_url and stats["chunks"] == stats["vectors"] == 4
    assert kb.ingest_paths([corpus]).chunks_added == 0
    assert KnowledgeBase.quick_count(tmp_path / "a" / "kb", chroma_url=chroma_url, collection=collection) == 4
    assert not (tmp_path / "a" / "kb" / "chroma").exists()  # nothing stored locally but the lexical cache
    kb.close()


def test_a_second_machine_sees_the_same_kb(chroma_url, collection, tmp_path, monkeypatch):
    monkeypatch.setattr(kbsync, "SERVER_SYNC_SECONDS", 0.0)  # check the server's stamp on every call
    a = KnowledgeBase(tmp_path / "a" / "kb", chroma_url=chroma_url, collection=collection)
    a.add_document(
        source="https://x.example/tea",
        title="Tea",
        text="Oolong tea is partially oxidised, between green and black tea.",
        session_id="s9",
    )
    b = KnowledgeBase(tmp_path / "b" / "kb", chroma_url=chroma_url, collection=collection)  # empty local cache
    hit = b.search("partially oxidised tea", k=1)[0]
    assert (hit.source, hit.title, hit.metadata["session_id"]) == ("https://x.example/tea", "Tea", "s9")
    assert b.has_source("https://x.example/tea")
    b.add_document(source="https://y.example/coffee", title="Coffee", text="Arabica coffee grows at altitude.")
    assert a.search("arabica altitude", k=1)[0].source == "https://y.example/coffee"
    assert a.count() == b.count() == 2
    a.close()
    b.close()


def test_server_kb_refuses_another_embedding_and_resets(chroma_url, collection, tmp_path):
    a = KnowledgeBase(tmp_path / "a" / "kb", chroma_url=chroma_url, collection=collection)
    a.add_document(source="https://x.example/1", title="One", text="A page about lighthouses and fog horns.")
    other = KnowledgeBase(tmp_path / "c" / "kb", chroma_url=chroma_url, collection=collection, embedding="minilm")
    with pytest.raises(EmbeddingMismatch) as err:
        other.search("lighthouses")
    assert chroma_url in str(err.value)
    other.close()
    a.reset()
    assert a.count() == 0 and a.search("lighthouses") == []
    a.close()


def test_cli_with_chroma_url(chroma_url, tmp_path, monkeypatch, capsys):
    from sleuth.utils.cli.kb import main

    monkeypatch.chdir(tmp_path)
    corpus = write_corpus(tmp_path / "docs")
    common = ["--data-dir", str(tmp_path / "data"), "--chroma-url", chroma_url]
    assert main(["ingest", str(corpus), *common]) == 1
    capsys.readouterr()
    assert main(["search", "sourdough starter flour", "--json", "-k", "1", *common]) == 0
    line = json.loads(capsys.readouterr().out)
    assert Path(line["hits"][0]["source"]).name == "sourdough.md"
    assert main(["reset", "--yes", *common]) == 0


def test_a_reset_on_another_machine_empties_this_one(chroma_url, collection, tmp_path, monkeypatch):
    monkeypatch.setattr(kbsync, "SERVER_SYNC_SECONDS", 0.0)
    a = KnowledgeBase(tmp_path / "a" / "kb", chroma_url=chroma_url, collection=collection)
    b = KnowledgeBase(tmp_path / "b" / "kb", chroma_url=chroma_url, collection=collection)
    a.add_document(source="https://x.example/owl", title="Owls", text="Barn owls hunt by sound in darkness.")
    assert b.search("barn owls", k=1)[0].title == "Owls"
    a.reset()
    assert b.search("barn owls") == [] and b.count() == 0
    b.add_document(source="https://x.example/bat", title="Bats", text="Bats hunt insects by echolocation.")
    assert a.search("echolocation", k=1)[0].title == "Bats"
    a.close()
    b.close()


def test_remove_and_forget_through_the_cli_on_a_server_reach_every_machine(chroma_url, tmp_path, monkeypatch, capsys):
    """kb remove / forget / ingest --sync with --chroma-url: the server's vectors and documents go, and
    another machine's lexical cache (BM25) and listing follow."""
    from sleuth.utils.cli.kb import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(kbsync, "SERVER_SYNC_SECONDS", 0.0)
    corpus = write_corpus(tmp_path / "docs")
    a = ["--data-dir", str(tmp_path / "a"), "--chroma-url", chroma_url]
    b = ["--data-dir", str(tmp_path / "b"), "--chroma-url", chroma_url]

    def sources(machine) -> dict[str, str]:
        capsys.readouterr()
        assert main(["list", "--json", *machine]) == 0
        return {d["source"]: d["kind"] for d in map(json.loads, capsys.readouterr().out.splitlines())}

    def hits(machine, query: str, mode: str) -> list[str]:
        capsys.readouterr()
        assert main(["search", query, "--json", "--mode", mode, *machine]) == 0
        return [h["source"] for h in json.loads(capsys.readouterr().out)["hits"]]

    assert main(["reset", "--yes", *a]) == 0
    assert main(["ingest", str(corpus), *a]) == 1
    kb = KnowledgeBase(tmp_path / "a" / "kb", chroma_url=chroma_url)
    kb.add_document(source="https://x.example/owls", title="Owls", text="Barn owls hunt by sound in darkness.")
    kb.close()
    assert len(sources(b)) == 5
    assert main(["remove", str(corpus / "notes"), *a]) == 0
    assert main(["forget", "--remembered", *a]) == 0
    (corpus / "notes").rename(tmp_path / "notes")  # removed from the KB, then moved away
    (corpus / "sourdough.md").unlink()
    assert main(["ingest", "--sync", str(corpus), *b]) == 1  # the corpus's two unreadable files
    left = sorted(Path(s).name for s in sources(b))
    assert left == ["antikythera.html", "photosynthesis.pdf"] == sorted(Path(s).name for s in sources(a))
    for machine in (a, b):
        for mode in ("bm25", "vector"):
            found = hits(machine, "volcano Iceland ash owls darkness sourdough starter", mode)
            assert not [s for s in found if "volcano" in s or "owls" in s or "sourdough" in s], (mode, found)
    server = kbsync.make_client(chroma_url, tmp_path).get_collection("sleuth")
    names = {md["source"] for md in server.get(include=["metadatas"])["metadatas"]}
    assert sorted(Path(s).name for s in names) == left
    capsys.readouterr()
    assert main(["stats", *a]) == 0
    assert "on the Chroma server" in capsys.readouterr().out.splitlines()[-1]
    assert main(["reset", "--yes", *a]) == 0
