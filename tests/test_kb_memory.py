"""Memory stays bounded whatever the input: a text file far larger than the cap is ingested in
bounded memory, its first part read and the cap said; a wiki answer beyond 5 MB is refused unread."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from conftest import ROOT, assert_no_network, cli_env

PEAK_MB = 500
MEASURE = """
import resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(proc.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
sys.stdout.write(proc.stdout)
sys.stderr.write(proc.stderr)
"""


def peak(tmp_path, *args: str, **env: str) -> tuple[int, int, str, str]:
    """(exit status, peak RSS in MB, stdout, stderr) of `sleuth ARGS` run alone under a fresh parent."""
    cmd = [sys.executable, "-c", MEASURE, sys.executable, str(ROOT / "main.py"), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=cli_env(tmp_path, **env), cwd=tmp_path, timeout=600)
    head, _, out = proc.stdout.partition("\n")
    status, mb = map(int, head.split())
    assert_no_network(tmp_path)
    return status, mb, out, proc.stderr


def test_a_text_file_far_over_the_cap_is_ingested_in_bounded_memory(tmp_path):
    big = tmp_path / "logbook.txt"
    line = b"The kite rose on the evening wind above the harbour wall and held its line.\n"
    with open(big, "wb") as fh:
        for _ in range(40 * 1024 * 1024 // len(line)):  # 40 MB
            fh.write(line)
    status, mb, out, err = peak(tmp_path, "kb", "ingest", str(big))
    assert status == 0, err
    assert "1 added" in out
    assert mb < PEAK_MB, f"peak {mb} MB"
    (said,) = [x for x in err.splitlines() if "only its first" in x]
    assert str(big) in said and "8 MB" in said


class HugeWiki:
    """A MediaWiki api.php on 127.0.0.1 whose every answer is 60 MB of JSON."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                pad = json.dumps("x" * 1_000_000)
                self.wfile.write(b'{"query": {"search": [')
                try:
                    for i in range(60):
                        self.wfile.write(f'{{"title": "Kite {i}", "snippet": {pad}}},'.encode())
                    self.wfile.write(b'{"title": "Kite"}]}}')
                except OSError:  # the client stopped reading: what a cap does
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/w/api.php"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_wiki_answer_over_5_mb_is_refused_unread(tmp_path):
    wiki = HugeWiki()
    try:
        status, mb, _, err = peak(
            tmp_path, "--tools", "wiki", "--max-iterations", "1", "Who was Lawrence Hargrave?", SLEUTH_WIKI_URL=wiki.url
        )
    finally:
        wiki.close()
    assert "Traceback" not in err, err
    assert "the wiki's answer is larger than 5 MB" in err, err
    assert mb < 150, f"peak {mb} MB"  # reading the 60 MB answer took 222 MB
