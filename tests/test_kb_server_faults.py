"""A Chroma server that is not there, or goes away mid-write: one line naming the server and the
setting, status 2; research says the knowledge base is unreachable, not empty."""

from __future__ import annotations

import socket
import threading

from tests.test_kb_server import chroma_url  # noqa: F401 - the fixture: a real `chroma run` on 127.0.0.1

EXIT_USAGE = 2


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_research_with_the_server_down_says_unreachable_not_empty(cli):
    url = f"http://127.0.0.1:{closed_port()}"
    proc = cli("--tools", "kb", "--chroma-url", url, "What is a kite?")
    assert proc.returncode == EXIT_USAGE and "Traceback" not in proc.stderr
    assert "empty" not in proc.stderr, proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if url in x]
    assert "cannot reach the Chroma server" in line and "--chroma-url" in line and "SLEUTH_CHROMA_URL" in line


def test_a_chroma_url_that_is_not_an_address_is_named(cli):
    proc = cli("--tools", "kb", "What is a kite?", env={"SLEUTH_CHROMA_URL": "not a url"})
    assert proc.returncode == EXIT_USAGE and "empty" not in proc.stderr, proc.stderr
    assert "SLEUTH_CHROMA_URL 'not a url' is not a Chroma server address" in proc.stderr
    stats = cli("kb", "stats", env={"SLEUTH_CHROMA_URL": "not a url"})
    assert stats.returncode == EXIT_USAGE and "Traceback" not in stats.stderr
    assert "SLEUTH_CHROMA_URL 'not a url'" in stats.stderr


class DyingProxy:
    """A TCP proxy to the Chroma server that dies, as a server killed mid-write would, when the first
    request that writes vectors arrives: that connection is cut unanswered, new ones are refused."""

    def __init__(self, target: str):
        host, port = target.removeprefix("http://").split(":")
        self.target = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.dead = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.dead.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, src, dst, from_client):
        try:
            while data := src.recv(65536):
                if from_client and (b"/upsert " in data or b"/add " in data):
                    self.die()
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def die(self):
        self.dead.set()
        self.listener.close()


def test_a_server_that_dies_mid_ingest_is_one_line(cli, chroma_url, tmp_path):  # noqa: F811 - the fixture
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(3):
        (notes / f"kite{i}.md").write_text(f"# Kite {i}\n\nKite number {i} flies on the wind.\n")
    proxy = DyingProxy(chroma_url)
    proc = cli("kb", "ingest", str(notes), "--chroma-url", proxy.url)
    assert proxy.dead.is_set()  # it died during the write
    assert proc.returncode == EXIT_USAGE and "Traceback" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert f"cannot reach the Chroma server at {proxy.url}" in line and "--chroma-url" in line, line
