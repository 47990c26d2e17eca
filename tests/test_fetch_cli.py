"""`main.py fetch`: human output, --json lines, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sleuth.utils.cli import fetch as fetch_cli
from tests.webfixtures import LocalServer, page, send

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for var in ("SLEUTH_ALLOW_PRIVATE_HOSTS", "SLEUTH_IGNORE_ROBOTS", "SLEUTH_CACHE_TTL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env


@pytest.fixture
def site():
    routes = {
        "/robots.txt": lambda req: send(req, 200, "User-agent: *\nDisallow: /members\n", "text/plain"),
        "/guide": lambda req: send(req, 200, page("Research guide", "<p>Cite your sources.</p>")),
        "/members": lambda req: send(req, 200, page("Members", "<p>Hidden area.</p>")),
        "/gone": lambda req: send(req, 404, "gone", "text/plain"),
    }
    with LocalServer(routes) as s:
        yield s


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_json_lines_have_the_documented_shape(site, data_dir, capsys):
    code = fetch_cli.main(
        [
            site.url("/guide"),
            site.url("/gone"),
            "--json",
            "--allow-private-hosts",
            "--crawl-interval",
            "0",
            "--data-dir",
            str(data_dir),
        ]
    )
    out, err = capsys.readouterr()
    rows = lines(out)
    assert code == 1
    assert [r["url"] for r in rows] == [site.url("/guide"), site.url("/gone")]
    for r in rows:
        assert {"url", "final_url", "status", "title", "published", "text", "links", "error"} <= set(r)
    ok, gone = rows
    assert ok["error"] is None and ok["title"] == "Research guide" and "Cite your sources." in ok["text"]
    assert ok["status"] == 200 and ok["final_url"] == site.url("/guide")
    assert gone["status"] == 404 and "404" in gone["error"] and gone["error_kind"] == "http"
    assert "404" in err


def test_refused_url_gives_an_error_line_and_exit_1(site, data_dir, capsys):
    code = fetch_cli.main([site.url("/guide"), "--json", "--data-dir", str(data_dir)])
    out, err = capsys.readouterr()
    (row,) = lines(out)
    assert code == 1
    assert row["error_kind"] == "ssrf" and "refused" in row["error"] and row["text"] == ""
    assert "refused" in err
    assert site.hits == []


def test_all_ok_exits_0_and_prints_title_url_and_text(site, data_dir, capsys):
    code = fetch_cli.main([site.url("/guide"), "--allow-private-hosts", "--data-dir", str(data_dir)])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    first, *rest = out.splitlines()
    assert "Research guide" in first and site.url("/guide") in first
    assert "Cite your sources." in "\n".join(rest)


def test_a_page_with_no_text_says_so_on_stderr(site, data_dir, capsys):
    site.routes["/blob"] = lambda req: send(req, 200, bytes(range(256)) * 40, "text/html")
    code = fetch_cli.main([site.url("/blob"), "--allow-private-hosts", "--data-dir", str(data_dir)])
    out, err = capsys.readouterr()
    assert code == 0 and out.splitlines() == [f"== {site.url('/blob')}", ""]
    assert err == f"sleuth fetch: {site.url('/blob')}: no text found on the page\n"


def test_robots_are_obeyed_unless_ignored(site, data_dir, capsys):
    code = fetch_cli.main([site.url("/members"), "--json", "--allow-private-hosts", "--data-dir", str(data_dir)])
    assert code == 1 and lines(capsys.readouterr().out)[0]["error_kind"] == "robots"
    assert site.count("/members") == 0
    code = fetch_cli.main(
        [site.url("/members"), "--json", "--allow-private-hosts", "--ignore-robots", "--data-dir", str(data_dir)]
    )
    assert code == 0 and lines(capsys.readouterr().out)[0]["title"] == "Members"


def test_second_run_is_served_from_the_cache_unless_no_cache(site, data_dir, capsys):
    args = [site.url("/guide"), "--json", "--allow-private-hosts", "--data-dir", str(data_dir)]
    assert fetch_cli.main(args) == 0
    assert fetch_cli.main(args) == 0
    rows = lines(capsys.readouterr().out)
    assert [r["from_cache"] for r in rows] == [False, True]
    assert site.count("/guide") == 1
    assert (data_dir / "cache").is_dir()
    assert fetch_cli.main(args + ["--no-cache"]) == 0
    assert site.count("/guide") == 2


def test_usage_errors_exit_2(capsys):
    assert fetch_cli.main([]) == 2
    assert fetch_cli.main(["http://x.example/", "--cache-ttl", "soon"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and "URL" in lines[0] and "--cache-ttl" in lines[1]  # one line each, naming the problem
    assert all("fetch --help" in line for line in lines)


def test_runs_as_a_module(site, data_dir):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "utils.cli.fetch",
            site.url("/guide"),
            "ftp://nope/",
            "--json",
            "--allow-private-hosts",
            "--data-dir",
            str(data_dir),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    rows = lines(proc.stdout)
    assert rows[0]["title"] == "Research guide" and rows[1]["error_kind"] == "invalid_url"


def test_a_page_served_from_the_cache_says_so_with_its_age(site, data_dir, capsys):
    args = [site.url("/guide"), "--allow-private-hosts", "--data-dir", str(data_dir)]
    assert fetch_cli.main(args) == 0
    assert "from the cache" not in capsys.readouterr().err  # fetched: nothing to say
    assert fetch_cli.main(args) == 0
    out, err = capsys.readouterr()
    assert "Cite your sources." in out
    import re

    said = re.escape(site.url("/guide")) + r": from the cache, fetched \d+ (s|min) ago \(--no-cache to fetch again\)"
    assert re.search(said, err), err
    assert fetch_cli.main(args + ["--no-cache"]) == 0
    assert "from the cache" not in capsys.readouterr().err
