"""Cloud metadata endpoints and the link-local range stay closed even with --allow-private-hosts
(which opens loopback and private addresses for intranets and tests), checked on every hop."""

from __future__ import annotations

import json

import pytest

from tests.webfixtures import LocalServer, page, send

METADATA_URLS = [
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://[::ffff:169.254.169.254]/latest/meta-data/",  # the same address, IPv4-mapped
    "http://169.254.10.20/",  # anywhere in the link-local range
    "http://[fe80::1]/",
]


def fetched(proc) -> list[dict]:
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("url", METADATA_URLS)
def test_metadata_and_link_local_addresses_are_refused_with_allow_private_hosts(cli, url):
    proc = cli("fetch", url, "--json", "--allow-private-hosts", "--no-cache", timeout=60)
    assert proc.returncode == 1, proc.stderr
    (row,) = fetched(proc)
    assert row["error_kind"] == "ssrf" and not row["text"]
    assert "metadata" in row["error"] or "link-local" in row["error"]
    assert "Traceback" not in proc.stderr


def test_a_redirect_to_the_metadata_address_is_refused_at_that_hop(cli):
    routes = {
        "/robots.txt": lambda req: send(req, 404, "", "text/plain"),
        "/start": lambda req: send(
            req, 302, "", "text/plain", {"Location": "http://169.254.169.254/latest/meta-data/"}
        ),
        "/intranet": lambda req: send(req, 200, page("Intranet", "<p>Opening hours of the canteen.</p>")),
    }
    with LocalServer(routes) as site:
        proc = cli(
            "fetch", site.url("/start"), site.url("/intranet"), "--json", "--allow-private-hosts", "--no-cache",
            "--crawl-interval", "0", timeout=60,
        )  # fmt: skip
    redirected, intranet = fetched(proc)
    assert redirected["error_kind"] == "ssrf" and "metadata" in redirected["error"]
    assert not intranet["error"] and "canteen" in intranet["text"]  # loopback is still open, as asked
    assert proc.returncode == 1
