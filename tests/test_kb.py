"""Knowledge base: ingestion of real files, idempotency, search, persistence, embeddings, quality."""

from __future__ import annotations

import json
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import FIXTURE_WEB
from localweb import read_pages
from webfixtures import make_pdf

from sleuth.utils.kb.chunking import chunk_spans, chunk_text, join_pieces
from sleuth.utils.kb.store import EmbeddingMismatch, KBError, KnowledgeBase

ROOT = Path(__file__).resolve().parents[1]


HTML = """<!DOCTYPE html><html><head><title>The Antikythera mechanism - Museum blog</title></head><body>
<header><a href="/">Home</a> | <a href="/shop">Shop</a> | Subscribe to our newsletter</header>
<nav><ul><li><a href="/a">Archive</a></li><li><a href="/b">Contact</a></li></ul></nav>
<main><article><h1>The Antikythera mechanism</h1>
<p>The Antikythera mechanism is an ancient Greek hand-powered orrery, described as the oldest known example
of an analogue computer. It was used to predict astronomical positions and eclipses decades in advance.</p>
<p>The device was found in 1901 in the wreck of a ship off the Greek island of Antikythera. Its bronze gears
were hidden inside a wooden box, and researchers have reconstructed at least thirty interlocking gears.</p>
</article></main><footer>Copyright Museum Blog. Cookie settings. Privacy policy.</footer></body></html>
"""


def write_corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes").mkdir()
    (folder / "notes" / "volcano.txt").write_text(
        "Eyjafjallajokull is a volcano in Iceland. Its eruption in April 2010 threw an ash cloud into the "
        "atmosphere that closed European airspace for six days and stranded millions of air travellers.\n",
        encoding="utf-8",
    )
    (folder / "sourdough.md").write_text(
        "# Sourdough baking\n\nA sourdough starter is a culture of wild yeast and lactic acid bacteria. "
        "Feed the starter with equal weights of flour and water every day, and bake when it doubles in size.\n",
        encoding="utf-8",
    )
    (folder / "antikythera.html").write_text(HTML, encoding="utf-8")
    (folder / "photosynthesis.pdf").write_bytes(
        make_pdf(
            [
                "Photosynthesis takes place in the chloroplasts of plant cells.",
                "Chlorophyll absorbs sunlight and turns carbon dioxide and water into glucose and oxygen.",
            ],
            title="Photosynthesis notes",
        )
    )
    (folder / "blob.txt").write_bytes(b"\x00\x01\x02binary\x00garbage" * 50)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf at all")
    (folder / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (folder / ".hidden.txt").write_text("secret dotfile", encoding="utf-8")
    return folder


@pytest.fixture
def corpus(tmp_path) -> Path:
    return write_corpus(tmp_path / "docs")


@pytest.fixture
def kb(data_dir):
    k = KnowledgeBase(data_dir / "kb", embedding="hash")  # vectors and words: later opened without asking
    yield k
    k.close()


def top_source(kb: KnowledgeBase, query: str, **kw) -> str:
    hits = kb.search(query, k=3, **kw)
    return Path(hits[0].source).name if hits else ""


def test_ingest_folder_of_all_types_reports_bad_files_and_keeps_the_rest(kb, corpus):
    report = kb.ingest_paths([corpus, corpus / "missing.txt"])
    assert report.files_added == 4
    errors = {Path(p).name: why for p, why in report.errors}
    assert set(errors) == {"blob.txt", "broken.pdf", "missing.txt"}
    assert "binary" in errors["blob.txt"]
    assert "PDF" in errors["broken.pdf"]
    assert "no such file" in errors["missing.txt"]
    assert [Path(p).name for p in report.skipped] == ["picture.png"]  # dotfiles ignored, png skipped
    assert report.chunks_added == kb.count() == 4

    assert top_source(kb, "Which volcano closed European airspace in 2010?") == "volcano.txt"
    assert top_source(kb, "how often should I feed a sourdough starter") == "sourdough.md"
    assert top_source(kb, "ancient Greek analogue computer with bronze gears") == "antikythera.html"
    assert top_source(kb, "where does photosynthesis happen in plant cells") == "photosynthesis.pdf"


def test_html_is_reduced_to_its_main_text_and_pdf_keeps_its_title(kb, corpus):
    kb.ingest_paths([corpus])
    hit = kb.search("Antikythera shipwreck gears", k=1)[0]
    assert hit.title.startswith("The Antikythera mechanism")
    assert "orrery" in hit.text and "newsletter" not in hit.text and "Cookie" not in hit.text
    assert kb.search("chlorophyll glucose", k=1)[0].title == "Photosynthesis notes"
    assert kb.search("sourdough", k=1)[0].title == "Sourdough baking"  # markdown heading


def test_a_decomposed_file_name_and_text_are_stored_composed(kb, tmp_path):
    """macOS writes file names with combining accents; what the KB stores and shows is composed, as
    a page read from the web is, so both read as the same characters."""
    note = tmp_path / "Cafe\u0301 notes.txt"
    note.write_text("The cafe\u0301 opened in 1921 beside the harbour.\n", encoding="utf-8")
    kb.ingest_paths([tmp_path])
    hit = kb.search("cafe harbour 1921", k=1)[0]
    assert hit.title == "Caf\u00e9 notes" and "caf\u00e9 opened" in hit.text


def test_hits_carry_scores_and_metadata(kb, corpus):
    kb.ingest_paths([corpus])
    hits = kb.search("volcano eruption ash cloud Iceland", k=4)
    assert hits[0].rank == 1 and [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len({h.id for h in hits}) == len(hits)
    md = hits[0].metadata
    for key in ("source", "title", "chunk", "content_hash", "doc_hash", "source_type", "ingested_at", "id"):
        assert md.get(key) not in (None, ""), key
    assert md["source_type"] == "file" and Path(md["source"]).is_absolute()
    assert md["ingested_at"].endswith("Z")
    d = hits[0].to_dict()
    assert {"rank", "score", "source", "title", "chunk", "text"} <= set(d)
    json.dumps(d)


def test_reingesting_unchanged_files_adds_nothing(kb, corpus):
    kb.ingest_paths([corpus])
    n = kb.count()
    again = kb.ingest_paths([corpus])
    assert (again.files_added, again.files_replaced, again.chunks_added) == (0, 0, 0)
    assert again.files_unchanged == 4
    assert kb.count() == n
    assert kb.stats()["vectors"] == n


def test_a_file_whose_name_is_not_utf8_is_ingested_with_the_rest(kb, tmp_path):
    folder = tmp_path / "latin1"
    folder.mkdir()
    (folder / "plain.txt").write_text("Glaciers carve valleys as they move slowly downhill over centuries.")
    with open(bytes(folder) + b"/caf\xe9.txt", "wb") as fh:  # a Latin-1 name, as old archives have
        fh.write(b"Volcanoes erupt when magma rises through the crust and spills out as lava.")
    report = kb.ingest_paths([folder])
    assert (report.files_added, report.errors) == (2, [])
    hit = kb.search("volcanoes magma lava", k=1)[0]
    assert hit.source == str(folder.resolve() / "caf\ufffd.txt")  # the byte that is not UTF-8, marked
    assert kb.ingest_paths([folder]).files_unchanged == 2


def test_a_changed_file_replaces_its_old_chunks(kb, corpus):
    kb.ingest_paths([corpus])
    n = kb.count()
    (corpus / "notes" / "volcano.txt").write_text(
        "Mount Vesuvius destroyed Pompeii and Herculaneum in the year 79 when it buried them in ash.\n",
        encoding="utf-8",
    )
    report = kb.ingest_paths([corpus])
    assert (report.files_replaced, report.files_unchanged) == (1, 3)
    assert kb.count() == n
    assert top_source(kb, "Which volcano buried Pompeii?") == "volcano.txt"
    assert all("Eyjafjallajokull" not in h.text for h in kb.search("Eyjafjallajokull Iceland airspace", k=10))
    assert all("Eyjafjallajokull" not in h.text for h in kb.search("Eyjafjallajokull airspace", k=10, mode="vector"))
    assert kb.stats()["vectors"] == n


def test_long_documents_become_overlapping_chunks(kb):
    sentences = [
        f"Fact number {i} says the {w} glows at night."
        for i, w in enumerate(["moon", "lamp", "firefly", "star", "screen", "candle"] * 40)
    ]
    n = kb.add_document(source="https://example.org/long", title="Long page", text=" ".join(sentences))
    assert n >= 5
    hits = kb.search("fact number 117 firefly", k=n)
    chunks = sorted((h.chunk, h.text) for h in hits)
    assert [c for c, _ in chunks] == list(range(n))
    for (_, a), (_, b) in zip(chunks, chunks[1:], strict=False):
        assert re.findall(r"Fact number \d+ [^.]+\.", a)[-1] in b  # the last sentence of a chunk opens the next one


def test_chunk_text_keeps_sentences_whole_and_sized():
    text = " ".join(f"Sentence {i} has exactly seven words here." for i in range(200))
    chunks = chunk_text(text, target_words=100, overlap_words=20)
    assert all(c.endswith(".") and c.startswith("Sentence") for c in chunks)
    assert all(70 <= len(c.split()) <= 130 for c in chunks)
    assert chunk_text("") == [] and chunk_text("One short line.") == ["One short line."]


def test_chunk_spans_are_the_chunks_and_analysing_pieces_equals_analysing_chunks():
    from sleuth.utils.text import analyze

    text = "\n\n".join(
        " ".join(f"Line {p}-{i} names café_{i % 7} and Dr. Who's TARDIS." for i in range(30)) for p in range(6)
    )
    pieces, spans = chunk_spans(text, target_words=60, overlap_words=15)
    assert [join_pieces(pieces[a:b]) for a, b in spans] == chunk_text(text, target_words=60, overlap_words=15)
    assert len(spans) > 5 and all(a < b for a, b in spans)
    assert any(a < prev_end for (_, prev_end), (a, _) in zip(spans, spans[1:], strict=False))  # they overlap
    for a, b in spans:  # the KB analyses each piece once and joins the terms: the same as the whole chunk
        assert [t for p in pieces[a:b] for t in analyze(p)] == analyze(join_pieces(pieces[a:b]))
    assert chunk_spans("") == ([], []) and chunk_spans("Two words.") == (["Two words."], [(0, 1)])


def test_a_list_items_sentences_stay_one_paragraph_in_a_long_documents_chunks(kb):
    # an option's entry says what it is, then its default: split into paragraphs, the default would
    # be read apart from what it is the default of
    entry = "- `limit_{0}` {{number}} How many jobs queue {0} holds. If exceeded, new jobs wait. Default: `{1}`."
    text = "Queue options.\n\n" + "\n\n".join(entry.format(i, i * 64) for i in range(40))
    assert kb.add_document(source="https://example.org/queues", title="Queues", text=text) > 1
    hits = kb.search("limit_17 jobs queue default", k=3)
    assert any(
        "- `limit_17` {number} How many jobs queue 17 holds. If exceeded, new jobs wait. Default: `1088`."
        in h.text.split("\n\n")
        for h in hits
    )


def test_hash_vectors_do_not_depend_on_the_batch():
    import numpy as np

    from sleuth.utils.kb.embeddings import hash_vectors

    texts = [
        f"Record {i}: the {['red', 'green', 'blue'][i % 3]} kite number {i * 7} flew over hill {i % 11}."
        for i in range(1100)
    ] + ["", "the of and"]  # past the 512 rows hashed at a time; empty vectors too
    batch = hash_vectors(texts)
    one_by_one = np.vstack([hash_vectors([t]) for t in texts[:3] + texts[510:515] + texts[-3:]])
    assert np.array_equal(batch[[0, 1, 2, 510, 511, 512, 513, 514, 1099, 1100, 1101]], one_by_one)
    assert not batch[-1].any() and not batch[-2].any()


WORDS = (
    "amber basalt cedar delta ember fjord garnet harbor indigo jasper kelp lagoon marble nectar onyx "
    "pumice quartz reef slate tundra umber violet willow xenon yarrow zephyr"
).split()


def _page(i: int) -> str:
    """A distinct page: words picked by i, repeated unevenly, so BM25 scores rarely tie."""
    words = [WORDS[(i * 7 + j * j) % len(WORDS)] for j in range(12 + i % 9)]
    return f"Page {i} is about " + " and ".join(words) + f". It mentions snake_case_{i % 4} too."


def _sqlite_ranking(kb: KnowledgeBase, query: str, k: int) -> list[tuple[int, float]]:
    """(rowid, raw BM25) best first by SQLite FTS5's own bm25() (title weighted 2): the reference."""
    from sleuth.utils.text import analyze

    match = " OR ".join(f'"{t}"' for t in dict.fromkeys(analyze(query)))
    con = sqlite3.connect(kb.lexical_file)
    try:
        return con.execute(
            "SELECT rowid, -bm25(chunks_fts, 2.0, 1.0) FROM chunks_fts WHERE chunks_fts MATCH ? "
            "ORDER BY bm25(chunks_fts, 2.0, 1.0), rowid LIMIT ?",
            (match, k),
        ).fetchall()
    finally:
        con.close()


def _ids(kb: KnowledgeBase, rowids: list[int]) -> list[str]:
    con = sqlite3.connect(kb.lexical_file)
    try:
        return [con.execute("SELECT id FROM chunks WHERE rid = ?", (r,)).fetchone()[0] for r in rowids]
    finally:
        con.close()


def test_bm25_ranks_and_scores_like_sqlite_fts5_while_the_kb_changes(kb, data_dir):
    from sleuth.utils.text import analyze

    queries = [
        "amber cedar fjord",
        "quartz reef slate willow",
        "zephyr",
        "Page 7 garnet harbor lagoon",
        "snake_case_2 umber",
        "nothing-like-this",
    ]

    def check(who: KnowledgeBase) -> None:
        for q in queries:
            ref = _sqlite_ranking(who, q, 8)
            searches = [who.search(q, k=8) for _ in range(2)]  # the first goes to SQLite, later ones to memory
            for hits in searches:
                assert [h.id for h in hits] == _ids(who, [r for r, _ in ref]), q
            assert [h.score for h in searches[1]] == pytest.approx([h.score for h in searches[0]], rel=1e-9), q
            # The in-memory index's raw scores (before normalising and capping at 1) are FTS5's.
            with who._lock:
                got = who._bm25.memory.top(who._conn(), list(dict.fromkeys(analyze(q))), 8)
            assert got is not None, q
            assert [r for r, _ in got[0]] == [r for r, _ in ref], q
            assert [s for _, s in got[0]] == pytest.approx([s for _, s in ref], rel=1e-9), q

    for i in range(40):
        kb.add_document(source=f"https://rocks.example/{i}", title=f"Rocks {i % 5}", text=_page(i))
    check(kb)
    assert kb._bm25.memory.lengths is not None  # the in-memory index was used
    kb.add_document(source="https://rocks.example/new", title="Zephyr", text="A zephyr over amber cedar and quartz.")
    kb.add_document(source="https://rocks.example/3", title="Rocks 3", text="Replaced: only slate and willow now.")
    check(kb)  # this instance's own writes (a new page, a replaced one) are patched into its index
    other = KnowledgeBase(data_dir / "kb")
    other.add_document(source="https://other.example/1", title="Reef", text="Reef reef reef, quartz and zephyr.")
    check(kb)  # another instance (or process) wrote: the stamp changed, the index is read again
    kb.add_document(source="https://greek.example/1", title="Λόγος", text="Ο λόγος του Ηράκλειτου: amber fjord.")
    check(kb)
    assert kb.search("λόγος", k=1)[0].source == kb.search("λόγος", k=1)[0].source == "https://greek.example/1"
    other.close()
    kb.reset()
    assert kb.search("amber", k=3) == []
    kb.add_document(source="https://rocks.example/again", title="Again", text="Amber again.")
    assert [h.source for h in kb.search("amber", k=3)] == ["https://rocks.example/again"]


def test_add_document_stores_a_page_once(kb):
    text = "The okapi is a giraffid native to the Democratic Republic of the Congo. It has striped legs."
    assert kb.add_document(source="https://zoo.example/okapi", title="Okapi", text=text, session_id="s1") == 1
    assert kb.add_document(source="https://zoo.example/okapi", title="Okapi", text=text) == 0
    assert kb.add_document(source="https://mirror.example/okapi", title="Okapi", text=text) == 0
    assert kb.has_source("https://zoo.example/okapi") and not kb.has_source("https://mirror.example/okapi")
    assert kb.count() == 1
    hit = kb.search("okapi striped legs", k=1)[0]
    assert (hit.source_type, hit.metadata["session_id"]) == ("web", "s1")
    assert (
        kb.add_document(
            source="https://zoo.example/okapi",
            title="Okapi",
            text="The okapi's closest living relative is the giraffe.",
            source_type="file",
        )
        == 1
    )
    assert kb.count() == 1
    assert "closest living relative" in kb.search("okapi", k=1)[0].text
    assert kb.stats()["by_source_type"] == {"file": {"sources": 1, "chunks": 1}}
    with pytest.raises(KBError):
        kb.add_document(source="x", title="", text="y", source_type="rumour")


def test_vector_and_fused_modes_also_find_the_file(kb, corpus):
    kb.ingest_paths([corpus])
    for mode in ("vector", "fused"):
        assert top_source(kb, "volcano eruption Iceland ash cloud airspace", mode=mode) == "volcano.txt"
    assert kb.search("", k=3) == [] and kb.search("the of and", k=3) == []


def test_reopening_in_a_new_process_and_bm25_search_without_chromadb(kb, corpus, data_dir):
    kb.ingest_paths([corpus])
    kb.close()
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from utils.kb.store import KnowledgeBase\n"
        f"path = Path({str(data_dir / 'kb')!r})\n"
        "quick = KnowledgeBase.quick_count(path)\n"
        "kb = KnowledgeBase(path)\n"
        "hits = kb.search('Which volcano closed European airspace?', k=1)\n"
        "lean = 'chromadb' not in sys.modules\n"
        "vec = kb.search('volcano ash cloud Iceland airspace', k=1, mode='vector')\n"
        "print(json.dumps([quick, Path(hits[0].source).name, lean, Path(vec[0].source).name, kb.stats()]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    quick, name, lean, vname, stats = json.loads(out.stdout.strip().splitlines()[-1])
    assert (quick, name, lean, vname) == (4, "volcano.txt", True, "volcano.txt")
    assert stats["chunks"] == stats["vectors"] == 4 and stats["embedding"] == "hash"


def test_lost_vector_store_is_rebuilt_from_the_chunks(kb, corpus, data_dir):
    kb.ingest_paths([corpus])
    kb.close()
    shutil.rmtree(data_dir / "kb" / "chroma")
    code = (
        "import json\nfrom pathlib import Path\nfrom utils.kb.store import KnowledgeBase\n"
        f"kb = KnowledgeBase(Path({str(data_dir / 'kb')!r}))\n"
        "hits = kb.search('volcano ash cloud Iceland airspace', k=1, mode='vector')\n"
        "print(json.dumps([Path(hits[0].source).name, kb.stats()['vectors']]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["volcano.txt", 4]


def test_opening_with_another_embedding_is_a_clear_error(kb, corpus, data_dir):
    kb.ingest_paths([corpus])
    other = KnowledgeBase(data_dir / "kb", embedding="minilm")
    with pytest.raises(EmbeddingMismatch) as err:
        other.search("volcano")
    msg = str(err.value)
    assert "built with embedding 'hash'" in msg and "'minilm'" in msg and "reset" in msg
    with pytest.raises(EmbeddingMismatch):
        other.stats()
    other.close()


def test_minilm_without_its_model_fails_fast_with_a_clear_error(tmp_path, data_dir, monkeypatch):
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    from sleuth.utils.kb.embeddings import EmbeddingUnavailable

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there: like being offline, but without leaving the machine
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "DOWNLOAD_PATH", tmp_path / "models" / "all-MiniLM-L6-v2")
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "MODEL_DOWNLOAD_URL", f"http://127.0.0.1:{port}/onnx.tar.gz")
    kb = KnowledgeBase(data_dir / "kb", embedding="minilm")
    with pytest.raises(EmbeddingUnavailable) as err:
        kb.add_document(source="s", title="t", text="Some text to embed.")
    assert "MiniLM" in str(err.value) and "--embedding hash" in str(err.value)
    assert kb.count() == 0
    kb.close()


class _FakeGemini(BaseHTTPRequestHandler):
    """Answers batchEmbedContents with bag-of-words vectors; records what it was asked."""

    seen: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _FakeGemini.seen.append({"path": self.path, **body})
        embs = []
        for r in body["requests"]:
            v = [0.0] * r["outputDimensionality"]
            for w in r["content"]["parts"][0]["text"].lower().replace(".", " ").split():
                v[zlib.crc32(w.encode()) % len(v)] += 1.0
            embs.append({"values": v})
        out = json.dumps({"embeddings": embs}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


def test_gemini_embedding_through_a_local_endpoint(data_dir):
    from sleuth.utils.config import load_settings

    srv = ThreadingHTTPServer(("127.0.0.1", 0), _FakeGemini)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    env = {
        "GEMINI_API_KEY": "test-key",
        "GEMINI_BASE_URL": f"http://127.0.0.1:{srv.server_address[1]}",  # reaches the embedding through Settings
        "SLEUTH_DATA_DIR": str(data_dir),
        "SLEUTH_EMBEDDING": "gemini",
    }
    try:
        kb = KnowledgeBase.for_settings(load_settings(env=env))
        kb.add_document(source="https://a.example", title="Otters", text="Sea otters hold hands while sleeping.")
        kb.add_document(source="https://b.example", title="Bees", text="Honey bees dance to show where flowers are.")
        assert kb.search("why do bees dance", k=1, mode="vector")[0].source == "https://b.example"
        tasks = [r["taskType"] for call in _FakeGemini.seen for r in call["requests"]]
        assert tasks == ["RETRIEVAL_DOCUMENT", "RETRIEVAL_DOCUMENT", "RETRIEVAL_QUERY"]
        assert all(":batchEmbedContents" in call["path"] for call in _FakeGemini.seen)
        other = KnowledgeBase(data_dir / "kb", embedding="hash")
        with pytest.raises(EmbeddingMismatch):
            other.search("otters")
        other.close()
        own = KnowledgeBase(data_dir / "kb")  # no embedding asked for: the one it was built with
        assert own.search("otters", k=1)[0].source == "https://a.example" and own.embedding == "gemini"
        own.close()
        kb.close()
    finally:
        srv.shutdown()
        srv.server_close()


def test_hash_embedding_is_the_same_in_every_process():
    from sleuth.utils.kb.embeddings import hash_vectors

    code = "from utils.kb.embeddings import hash_vectors; print(hash_vectors(['Zebras graze the savanna'])[0].tolist())"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    mine = hash_vectors(["Zebras graze the savanna"])[0]
    theirs = json.loads(out.stdout)
    assert len(theirs) == len(mine) == 1024
    assert max(abs(a - b) for a, b in zip(mine.tolist(), theirs, strict=True)) < 1e-6
    assert abs(float((mine * mine).sum()) - 1.0) < 1e-5


def test_reset_clears_both_indexes(kb, corpus, data_dir):
    kb.ingest_paths([corpus])
    kb.reset()
    assert kb.count() == 0 and kb.search("volcano") == []
    assert KnowledgeBase.quick_count(data_dir / "kb") == 0
    assert kb.stats()["vectors"] == 0
    assert kb.ingest_paths([corpus]).files_added == 4  # usable again, nothing considered unchanged


def test_reset_lets_the_kb_switch_embedding(kb, corpus, data_dir):
    kb.ingest_paths([corpus])
    other = KnowledgeBase(data_dir / "kb", embedding="gemini", gemini_api_key="test-key")
    other.reset()
    assert other.stats()["embedding"] == "gemini" and other.count() == 0
    other.close()


def test_one_instance_shared_by_threads(kb):
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(5):
                kb.add_document(
                    source=f"https://t{n}.example/{i}",
                    title=f"Page {n}-{i}",
                    text=f"Thread {n} wrote page {i} about topic{n}x{i} and shared knowledge.",
                )
                kb.search(f"topic{n}x{i}", k=2)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert kb.count() == 20 and kb.stats()["vectors"] == 20
    assert kb.search("topic2x3", k=1)[0].source == "https://t2.example/3"


def test_quick_count_without_a_kb_is_zero(tmp_path):
    assert KnowledgeBase.quick_count(tmp_path / "nothing") == 0


def test_default_search_is_at_least_as_good_as_bm25_on_hotpotqa(shared_eval, data_dir):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from kb import evaluate, load_questions  # bench/kb.py
    finally:
        sys.path.remove(str(ROOT / "bench"))
    qa = shared_eval / "hotpotqa-dev100"
    kb = KnowledgeBase(data_dir / "kb")
    report = kb.ingest_paths([qa / "wiki"])
    assert report.files_added == 991 and not report.errors
    questions = load_questions(qa)
    default = evaluate(kb, questions, kb.search_mode)
    bm25 = evaluate(kb, questions, "bm25")
    assert default["both@10"] >= bm25["both@10"]
    assert default["recall@10"] >= 0.85 and default["both@10"] >= 0.75
    kb.close()


def test_chunks_keep_headings_and_paragraphs_apart():
    short = "# Sourdough\n\nA starter is wild yeast.\nFeed it daily.\n\nBake when it doubles."
    assert chunk_text(short) == ["# Sourdough\n\nA starter is wild yeast. Feed it daily.\n\nBake when it doubles."]
    long = "# Title\n\n" + " ".join(f"Sentence {i} is here." for i in range(120)) + "\n\n## Next part\n\nMore."
    chunks = chunk_text(long)
    assert chunks[0].startswith("# Title\n\nSentence 0 is here.")
    assert "\n\n## Next part\n\nMore." in chunks[-1]


def long_document(copies: int) -> str:
    """The fixture wiki's pages `copies` times over, plus one sentence of ~500 words (longer than any
    chunk): a long document with sentences of every length."""
    pages = [p["text"] for p in read_pages(FIXTURE_WEB)]
    rambling = ", and ".join(p.rstrip(".") for p in pages[:10]).replace(". ", ", ") + "."
    return "\n\n".join(pages * copies + [rambling])


def test_chunks_fit_the_selected_embeddings_window(monkeypatch):
    """MiniLM reads 256 word pieces: its chunks stay under ~190 words (~1.33 pieces a word), while
    the window-less hash embedding keeps the larger default chunks. The KB passes the size on."""
    from sleuth.utils.kb.chunking import DEFAULT_SIZE, chunk_size_for, max_chunk_words

    text = long_document(10)
    minilm = chunk_size_for("minilm")
    assert max_chunk_words(minilm) * 1.33 <= 256 and chunk_size_for("hash") == DEFAULT_SIZE
    pieces, spans = chunk_spans(text, *minilm)
    sizes = [len(join_pieces(pieces[a:b]).split()) for a, b in spans]
    assert max(sizes) <= max_chunk_words(minilm) and len(sizes) > 100
    default = [len(c.split()) for c in chunk_text(text)]
    assert sum(default) / len(default) > 1.3 * sum(sizes) / len(sizes)


def test_the_kb_chunks_with_the_size_of_its_embedding(tmp_path, monkeypatch):
    from sleuth.utils.kb.chunking import chunk_size_for, max_chunk_words

    asked = []
    monkeypatch.setattr(
        "sleuth.utils.kb.lifecycle.chunk_size_for", lambda name: asked.append(name) or chunk_size_for("minilm")
    )  # the hash embedding runs here; MiniLM's model cannot be downloaded in tests
    kb = KnowledgeBase(tmp_path / "kb", embedding="hash")
    kb.add_document(source="long.txt", title="Long", text=long_document(3))
    words = [len(h.text.split()) for h in kb.chunks_of(["long.txt"], per_source=1000)]
    kb.close()
    assert asked == ["hash"] and len(words) > 10
    assert max(words) <= max_chunk_words(chunk_size_for("minilm"))
