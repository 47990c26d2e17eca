"""The crawler against local servers that misbehave on purpose."""

from __future__ import annotations

import io
import threading
from email.utils import formatdate

import pytest

from sleuth.utils.web.cache import Cache
from sleuth.utils.web.decode import decode_body
from sleuth.utils.web.fetcher import DEFAULT_UA, Fetcher, FetchResult
from sleuth.utils.web.guard import check_url, default_resolve
from tests.webfixtures import LocalServer, make_pdf, page, send

PUBLIC_IP = "93.184.216.34"  # what the fake resolver says "public.test" is


class Recorder:
    """Injected sleep: records the requested delays instead of waiting."""

    def __init__(self, clock=None):
        self.delays: list[float] = []
        self.clock = clock
        self.lock = threading.Lock()

    def __call__(self, seconds: float) -> None:
        with self.lock:
            self.delays.append(round(seconds, 3))
            if self.clock is not None:
                self.clock.t += seconds


class FakeClock:
    def __init__(self):
        self.t = 5000.0

    def __call__(self) -> float:
        return self.t


_MADE: list[Fetcher] = []


def make(**kw) -> Fetcher:
    opts = dict(allow_private_hosts=True, per_host_interval=0.0, sleep=Recorder())
    opts.update(kw)
    _MADE.append(Fetcher(**opts))
    return _MADE[-1]


@pytest.fixture(autouse=True)
def _close_fetchers():
    """Every fetcher a test made is closed after it (their kept-alive connections)."""
    yield
    while _MADE:
        _MADE.pop().close()


@pytest.fixture
def site():
    """A local site; tests add routes to site.routes."""
    with LocalServer({}) as s:
        yield s


def html_route(title: str, body: str, content_type: str = "text/html; charset=utf-8"):
    return lambda req: send(req, 200, page(title, body), content_type)


# -- the happy path --------------------------------------------------------------------------------


def test_html_page_is_fetched_and_extracted(site):
    site.routes["/article"] = html_route("Agents 101", "<p>Agents plan, act and observe.</p><a href='/next'>n</a>")
    res = make().fetch(site.url("/article#intro"))
    assert res.error is None and res.error_kind is None
    assert (res.status, res.title, res.content_type) == (200, "Agents 101", "text/html")
    assert "Agents plan, act and observe." in res.text
    assert site.url("/next") in res.links
    d = res.to_dict()
    for k in (
        "url",
        "final_url",
        "status",
        "title",
        "published",
        "text",
        "links",
        "error",
        "error_kind",
        "content_type",
        "elapsed_ms",
        "from_cache",
    ):
        assert k in d
    assert site.hits[-1] == ("GET", "/article")  # fragment never sent


def test_user_agent_is_descriptive(site):
    seen = {}

    def route(req):
        seen["ua"] = req.headers.get("User-Agent")
        send(req, 200, page("t", "x"))

    site.routes["/"] = route
    make().fetch(site.url("/"))
    assert seen["ua"] == DEFAULT_UA and "Sleuth" in DEFAULT_UA and "+http" in DEFAULT_UA


def test_plain_text_is_returned_as_is(site):
    site.routes["/notes.txt"] = lambda req: send(req, 200, "line one\nline two\n", "text/plain")
    res = make().fetch(site.url("/notes.txt"))
    assert res.error is None and res.text == "line one\nline two" and res.content_type == "text/plain"


def test_plain_text_and_pdf_titles_come_out_composed_like_html(site):
    """A plain-text page or a PDF written with combining accents (as macOS writes file names) reads
    as the same characters an HTML page gives, so a copied quote or a search for it matches."""
    notes = "Cafe\u0301 cre\u0300me\n".encode()
    site.routes["/notes.txt"] = lambda req: send(req, 200, notes, "text/plain; charset=utf-8")
    assert make().fetch(site.url("/notes.txt")).text == "Caf\u00e9 cr\u00e8me"
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=612, height=792)
    writer.add_metadata({"/Title": "Re\u0301sume\u0301 notes"})
    buf = io.BytesIO()
    writer.write(buf)
    site.routes["/cv.pdf"] = lambda req: send(req, 200, buf.getvalue(), "application/pdf")
    assert make().fetch(site.url("/cv.pdf")).title == "R\u00e9sum\u00e9 notes"


def test_pdf_text_and_title_are_extracted(site):
    pdf = make_pdf(["Retrieval augmented generation", "reduces hallucination."], title="RAG Notes")
    site.routes["/paper.pdf"] = lambda req: send(req, 200, pdf, "application/pdf")
    res = make().fetch(site.url("/paper.pdf"))
    assert res.error is None and res.content_type == "application/pdf"
    assert res.title == "RAG Notes"
    assert "Retrieval augmented generation" in res.text and "hallucination" in res.text


def test_broken_pdf_is_a_decode_error(site):
    site.routes["/bad.pdf"] = lambda req: send(req, 200, b"%PDF-1.4\nthis is not really a pdf", "application/pdf")
    res = make().fetch(site.url("/bad.pdf"))
    assert res.error_kind == "decode" and res.status == 200


# -- charsets ------------------------------------------------------------------------------------------

RUSSIAN = "Съешь же ещё этих мягких французских булок, да выпей же чаю. Широкая электрификация южных губерний."
FRENCH = "Le cœur déçu mais l'âme plutôt naïve, Louÿs rêva de crapaüter en canoë au delà des îles."


def test_charset_from_http_header(site):
    body = page("Новости", f"<p>{RUSSIAN}</p>").encode("cp1251")
    site.routes["/ru"] = lambda req: send(req, 200, body, "text/html; charset=windows-1251")
    res = make().fetch(site.url("/ru"))
    assert res.title == "Новости" and RUSSIAN in res.text


def test_charset_from_meta_tag(site):
    html = (
        f"<html><head><meta http-equiv='Content-Type' content='text/html; charset=iso-8859-1'>"
        f"<title>Pangramme</title></head><body><p>{FRENCH}</p></body></html>"
    )
    site.routes["/fr"] = lambda req: send(req, 200, html.encode("cp1252"), "text/html")
    res = make().fetch(site.url("/fr"))
    assert FRENCH in res.text


def test_charset_detected_when_undeclared(site):
    body = page("Статья", "".join(f"<p>{RUSSIAN}</p>" for _ in range(5))).encode("cp1251")
    site.routes["/ru2"] = lambda req: send(req, 200, body, "text/html")
    res = make().fetch(site.url("/ru2"))
    assert RUSSIAN in res.text


def test_decode_body_prefers_bom_and_survives_bad_labels():
    assert decode_body(b"\xef\xbb\xbfhi", "latin-1")[0] == "hi"
    assert decode_body("é".encode(), "no-such-charset")[0] == "é"
    assert decode_body(b"caf\xe9", "utf-8")[0] == "café"  # header lies: fall back instead of mojibake


# -- content type and size ---------------------------------------------------------------------------


def test_binary_content_is_skipped(site):
    site.routes["/logo.png"] = lambda req: send(req, 200, b"\x89PNG\r\n\x1a\n" + b"\x00" * 2000, "image/png")
    res = make().fetch(site.url("/logo.png"))
    assert res.error_kind == "content_type" and "skipped" in res.error and "image/png" in res.error
    assert res.content_type == "image/png" and res.text == ""


class Firehose:
    """Streams up to 50 MB lazily, counting what it managed to send."""

    def __init__(self, declare_length: bool):
        self.declare_length = declare_length
        self.sent = 0
        self.done = threading.Event()

    def __call__(self, req):
        total = 50 * 1024 * 1024
        chunk = b"<p>" + b"x" * 65530 + b"</p>"
        try:
            req.send_response(200)
            req.send_header("Content-Type", "text/html")
            if self.declare_length:
                req.send_header("Content-Length", str(total))
            else:
                req.send_header("Connection", "close")
                req.close_connection = True
            req.end_headers()
            while self.sent < total:
                req.wfile.write(chunk)
                self.sent += len(chunk)
        except OSError:
            pass
        finally:
            self.done.set()


def test_huge_body_is_cut_off_at_the_cap(site):
    hose = Firehose(declare_length=False)
    site.routes["/big"] = hose
    res = make(max_bytes=1_000_000).fetch(site.url("/big"))
    assert res.error_kind == "too_large" and res.status == 200
    assert hose.done.wait(10)
    assert hose.sent < 20 * 1024 * 1024  # far less than the 50 MB on offer


def test_declared_huge_body_is_refused_before_reading(site):
    hose = Firehose(declare_length=True)
    site.routes["/big"] = hose
    res = make(max_bytes=1_000_000).fetch(site.url("/big"))
    assert res.error_kind == "too_large" and "52428800" in res.error
    assert hose.done.wait(10)
    assert hose.sent < 20 * 1024 * 1024


# -- timeouts -------------------------------------------------------------------------------------------


def test_slow_drip_body_hits_the_deadline(site):
    stop = threading.Event()

    def drip(req):
        req.send_response(200)
        req.send_header("Content-Type", "text/html")
        req.send_header("Content-Length", "100000")
        req.end_headers()
        try:
            while not stop.wait(0.05):
                req.wfile.write(b"x")
                req.wfile.flush()
        except OSError:
            pass

    site.routes["/drip"] = drip
    try:
        res = make(read_timeout=0.5, deadline=0.6).fetch(site.url("/drip"))
    finally:
        stop.set()
    assert res.error_kind == "timeout" and "longer than 0.6s" in res.error


def test_stalled_server_is_a_read_timeout(site):
    stop = threading.Event()

    def stall(req):
        stop.wait(5)

    site.routes["/stall"] = stall
    try:
        res = make(read_timeout=0.3).fetch(site.url("/stall"))
    finally:
        stop.set()
    assert res.error_kind == "timeout"


def test_unreachable_host_is_a_network_error():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = make().fetch(f"http://127.0.0.1:{port}/")
    assert res.error_kind == "network" and res.status is None


# -- retries ----------------------------------------------------------------------------------------------


def test_429_then_success_honours_retry_after(site):
    calls = []

    def route(req):
        calls.append(1)
        if len(calls) == 1:
            send(req, 429, "slow down", "text/plain", headers={"Retry-After": "7"})
        else:
            send(req, 200, page("Finally", "<p>content</p>"))

    site.routes["/busy"] = route
    sleep = Recorder()
    res = make(sleep=sleep).fetch(site.url("/busy"))
    assert res.error is None and res.title == "Finally"
    assert sleep.delays == [7.0]
    assert len(calls) == 2


def test_retry_after_http_date_is_honoured_and_capped(site):
    calls = []

    def route(req):
        calls.append(1)
        if len(calls) == 1:
            send(
                req,
                503,
                "",
                "text/plain",
                headers={"Retry-After": formatdate(__import__("time").time() + 3600, usegmt=True)},
            )
        else:
            send(req, 200, page("ok", "x"))

    site.routes["/maint"] = route
    sleep = Recorder()
    res = make(sleep=sleep, max_backoff=12).fetch(site.url("/maint"))
    assert res.error is None and sleep.delays == [12.0]


def test_persistent_500s_are_retried_then_reported(site):
    site.routes["/down"] = lambda req: send(req, 500, "boom", "text/plain")
    sleep = Recorder()
    res = make(sleep=sleep, max_retries=2, backoff_base=1.0).fetch(site.url("/down"))
    assert res.error_kind == "http" and res.status == 500 and "500" in res.error
    assert sleep.delays == [1.0, 2.0]  # exponential backoff
    assert site.count("/down") == 3


def test_404_is_not_retried(site):
    sleep = Recorder()
    res = make(sleep=sleep).fetch(site.url("/missing"))
    assert res.error_kind == "http" and res.status == 404
    assert sleep.delays == [] and site.count("/missing") == 1


# -- redirects -------------------------------------------------------------------------------------------


def test_redirects_are_followed(site):
    site.routes["/old"] = lambda req: send(req, 301, "", headers={"Location": "/new"})
    site.routes["/new"] = html_route("New home", "<p>moved here</p>")
    res = make().fetch(site.url("/old"))
    assert res.error is None and res.final_url == site.url("/new") and res.url == site.url("/old")


def test_redirect_loop_is_stopped(site):
    site.routes["/a"] = lambda req: send(req, 302, "", headers={"Location": "/b"})
    site.routes["/b"] = lambda req: send(req, 302, "", headers={"Location": "/a"})
    res = make().fetch(site.url("/a"))
    assert res.error_kind == "redirects" and "loop" in res.error
    assert site.count("/a") == 1 and site.count("/b") == 1


def test_a_redirect_to_an_address_that_cannot_be_parsed_is_named_as_such(site):
    site.routes["/a"] = lambda req: send(req, 302, "", headers={"Location": "http://[::1"})
    res = make().fetch(site.url("/a"))
    assert res.error_kind == "invalid_url" and res.error.startswith(f"bad redirect Location from {site.url('/a')}")


def test_too_many_redirects(site):
    def hop(req):
        n = int(req.path.rsplit("/", 1)[1])
        send(req, 302, "", headers={"Location": f"/hop/{n + 1}"})

    site.routes["*"] = hop
    res = make(max_redirects=3).fetch(site.url("/hop/0"))
    assert res.error_kind == "redirects"
    assert len([h for h in site.hits if h[1].startswith("/hop/")]) == 4


# -- SSRF guard -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url, fragment",
    [
        ("http://127.0.0.1/", "is a loopback address"),
        ("http://localhost:8080/admin", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://10.1.2.3/", "private"),
        ("http://192.168.0.10/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://[fe80::1]/", "link-local"),
        ("http://224.0.0.1/", "multicast"),
        ("http://0.0.0.0/", "is an unspecified address"),
        ("http://100.64.0.1/", "non-public"),
        ("ftp://example.com/file", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("http:///nohost", "no host"),
    ],
)
def test_check_url_refuses_unsafe_targets(url, fragment):
    why = check_url(url)
    assert why is not None and fragment in why


def test_check_url_allows_public_and_honours_the_switch():
    resolve = {"public.test": [PUBLIC_IP], "mixed.test": [PUBLIC_IP, "10.0.0.5"]}
    r = lambda host, port: resolve[host]  # noqa: E731
    assert check_url("https://public.test/x", resolve=r) is None
    assert "10.0.0.5" in check_url("https://mixed.test/", resolve=r)  # ANY bad address refuses
    assert check_url("http://127.0.0.1/", allow_private_hosts=True) is None
    assert check_url("http://[2606:4700::1111]/") is None


def test_private_address_is_refused_without_a_request(site):
    site.routes["/"] = html_route("secret", "admin panel")
    res = make(allow_private_hosts=False).fetch(site.url("/"))
    assert res.error_kind == "ssrf" and "loopback" in res.error and res.status is None
    assert site.hits == []


def _public_test(site):
    """Resolver + dialer: 'public.test' looks public to the guard, but the socket lands on the local site."""

    def resolve(host, port):
        return [PUBLIC_IP] if host == "public.test" else default_resolve(host, port)

    def dial(ip, port):
        return ("127.0.0.1", site.port) if ip == PUBLIC_IP else (ip, port)

    return resolve, dial


def test_public_host_is_fetched_through_the_guard(site):
    site.routes["/ok"] = html_route("Public page", "<p>hello</p>")
    resolve, dial = _public_test(site)
    res = make(allow_private_hosts=False, resolve=resolve, dial=dial).fetch("http://public.test/ok")
    assert res.error is None and res.title == "Public page"


def test_redirect_to_loopback_is_refused_at_the_hop(site):
    site.routes["/start"] = lambda req: send(req, 302, "", headers={"Location": site.url("/secret")})
    site.routes["/secret"] = html_route("secret", "internal admin")
    resolve, dial = _public_test(site)
    res = make(allow_private_hosts=False, resolve=resolve, dial=dial).fetch("http://public.test/start")
    assert res.error_kind == "ssrf"
    assert "redirect" in res.error and "127.0.0.1" in res.error
    assert res.final_url == site.url("/secret")
    assert site.count("/start") == 1 and site.count("/secret") == 0


def test_dns_rebinding_is_caught_at_connect_time(site):
    """The name resolves to a public address for the check, then to 127.0.0.1: the pinned
    connection re-checks what it is about to dial and refuses."""
    site.routes["/"] = html_route("secret", "internal")
    answers = iter([[PUBLIC_IP]])

    def rebinding(host, port):
        return next(answers, ["127.0.0.1"])

    res = make(
        allow_private_hosts=False, ignore_robots=True, resolve=rebinding, dial=lambda ip, port: ("127.0.0.1", site.port)
    ).fetch("http://rebind.test/")
    assert res.error_kind == "ssrf" and "loopback" in res.error
    assert site.hits == []


@pytest.mark.parametrize("url", ["", "not a url", "ftp://x.example/", "http://exa\nmple.com/", "http://[::1/"])
def test_invalid_urls_are_reported_not_raised(url):
    res = make().fetch(url)
    assert res.error_kind == "invalid_url" and res.error


# -- robots.txt ------------------------------------------------------------------------------------------


def test_robots_disallow_is_respected_and_can_be_ignored(site):
    site.routes["/robots.txt"] = lambda req: send(req, 200, "User-agent: *\nDisallow: /private/\n", "text/plain")
    site.routes["/private/page"] = html_route("Private", "<p>members only</p>")
    site.routes["/public"] = html_route("Public", "<p>welcome</p>")
    f = make()
    res = f.fetch(site.url("/private/page"))
    assert res.error_kind == "robots" and "robots.txt" in res.error
    assert site.count("/private/page") == 0
    assert f.fetch(site.url("/public")).error is None
    assert site.count("/robots.txt") == 1  # cached per host
    res = make(ignore_robots=True).fetch(site.url("/private/page"))
    assert res.error is None and res.title == "Private"


def test_robots_rules_for_our_agent(site):
    site.routes["/robots.txt"] = lambda req: send(
        req, 200, "User-agent: Sleuth\nDisallow: /\n\nUser-agent: *\nAllow: /\n", "text/plain"
    )
    site.routes["/x"] = html_route("x", "x")
    assert make().fetch(site.url("/x")).error_kind == "robots"


def test_missing_or_broken_robots_means_allowed(site):
    site.routes["/x"] = html_route("x", "x")
    assert make().fetch(site.url("/x")).error is None  # robots.txt is a 404 here
    site.routes["/robots.txt"] = lambda req: send(req, 503, "down", "text/plain")
    f = make(max_retries=0)
    assert f.fetch(site.url("/x")).error is None
    assert any("503" in note for note in f.robots_notes.values())


def test_crawl_delay_spaces_requests(site):
    site.routes["/robots.txt"] = lambda req: send(req, 200, "User-agent: *\nCrawl-delay: 5\n", "text/plain")
    site.routes["/a"] = html_route("a", "a")
    site.routes["/b"] = html_route("b", "b")
    clock = FakeClock()
    sleep = Recorder(clock)
    f = make(per_host_interval=1.0, sleep=sleep, clock=clock)
    f.fetch(site.url("/a"))
    f.fetch(site.url("/b"))
    assert sleep.delays == [5.0]


# -- politeness and concurrency ------------------------------------------------------------------------


def test_requests_to_one_host_are_spaced(site):
    site.routes["/a"] = html_route("a", "a")
    site.routes["/b"] = html_route("b", "b")
    clock = FakeClock()
    sleep = Recorder(clock)
    f = make(per_host_interval=1.0, sleep=sleep, clock=clock, ignore_robots=True)
    f.fetch(site.url("/a"))
    f.fetch(site.url("/b"))
    assert sleep.delays == [1.0]
    with LocalServer({"/c": html_route("c", "c")}) as other:  # another host: no wait
        f.fetch(other.url("/c"))
    assert sleep.delays == [1.0]


def test_host_spacing_is_shared_across_threads(site):
    for p in ("/a", "/b", "/c"):
        site.routes[p] = html_route(p, p)
    sleep = Recorder()  # time stands still and nobody really waits: each thread reserves the next free slot
    f = make(per_host_interval=1.0, sleep=sleep, clock=FakeClock(), ignore_robots=True, concurrency=3)
    results = f.fetch_many([site.url("/a"), site.url("/b"), site.url("/c")])
    assert all(r.error is None for r in results)
    assert sorted(sleep.delays) == [1.0, 2.0]


def test_fetch_many_keeps_order_and_bounds_concurrency(site):
    total = 6
    state = {"inflight": 0, "max": 0, "started": 0}
    cond = threading.Condition()

    def route(req):
        with cond:
            state["inflight"] += 1
            state["started"] += 1
            state["max"] = max(state["max"], state["inflight"])
            cond.notify_all()
            cond.wait_for(lambda: state["inflight"] >= 2 or state["started"] >= total, timeout=2)
            state["inflight"] -= 1
        send(req, 200, page(req.path, f"<p>page {req.path}</p>"))

    site.routes["*"] = route
    urls = [site.url(f"/p{i}") for i in range(total)]
    results = make(concurrency=2, ignore_robots=True).fetch_many(urls)
    assert [r.title for r in results] == [f"/p{i}" for i in range(total)]
    assert [r.url for r in results] == urls
    assert state["max"] == 2


def test_fetch_many_reports_each_failure_in_place(site):
    site.routes["/ok"] = html_route("ok", "ok")
    results = make(ignore_robots=True).fetch_many([site.url("/ok"), "gopher://x/", site.url("/nope")])
    assert [r.error_kind for r in results] == [None, "invalid_url", "http"]


# -- cache ------------------------------------------------------------------------------------------------


def test_cache_hit_makes_no_request(site, data_dir):
    site.routes["/a"] = html_route("Cached", "<p>once</p>")
    cache = Cache(data_dir / "cache")
    first = make(cache=cache, ignore_robots=True).fetch(site.url("/a"))
    assert not first.from_cache and site.count("/a") == 1
    second = make(cache=cache, ignore_robots=True).fetch(site.url("/a?utm_source=feed#top"))
    assert second.from_cache and second.title == "Cached" and second.text == first.text
    assert site.count("/a") == 1


def test_expired_or_failed_fetches_go_back_to_the_network(site, data_dir):
    calls = []

    def route(req):
        calls.append(1)
        send(req, 500 if len(calls) == 1 else 200, page("t", "x"))

    site.routes["/a"] = route
    now = [0.0]
    cache = Cache(data_dir / "cache", ttl=100, clock=lambda: now[0])
    f = make(cache=cache, ignore_robots=True, max_retries=0)
    assert f.fetch(site.url("/a")).error_kind == "http"  # failures are not cached
    assert f.fetch(site.url("/a")).error is None
    assert f.fetch(site.url("/a")).from_cache
    now[0] += 101
    res = f.fetch(site.url("/a"))
    assert not res.from_cache and len(calls) == 3


def test_fetch_result_round_trips():
    r = FetchResult(url="u", final_url="f", status=200, title="t", text="x", links=["l"])
    assert FetchResult.from_dict(r.to_dict()) == r


# -- TLS through the pinned connection -----------------------------------------------------------------


def _tls_files(tmp_path, names: list[str]):
    """A throw-away CA and a server certificate for ``names``; returns (ca_pem, cert_pem, key_pem)."""
    import datetime

    from cryptography import x509  # a dev requirement: never skipped
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Sleuth test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    paths = (tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem")
    paths[0].write_bytes(ca.public_bytes(pem))
    paths[1].write_bytes(cert.public_bytes(pem))
    paths[2].write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return paths


@pytest.mark.parametrize("cert_names, ok", [(["public.test"], True), (["someone-else.test"], False)])
def test_https_through_the_pinned_connection_still_verifies_the_name(tmp_path, cert_names, ok):
    import ssl

    ca, cert, key = _tls_files(tmp_path, cert_names)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    with LocalServer({"/secure": html_route("Secure page", "<p>over TLS</p>")}, ssl_context=ctx) as site:
        resolve, dial = _public_test(site)
        res = make(allow_private_hosts=False, ignore_robots=True, resolve=resolve, dial=dial, verify=str(ca)).fetch(
            "https://public.test/secure"
        )
    if ok:
        assert res.error is None and res.title == "Secure page" and res.final_url == "https://public.test/secure"
    else:
        assert res.error_kind == "network" and res.status is None
        assert site.count("/secure") == 0
