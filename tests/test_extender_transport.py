"""The HTTP extender's transport: keep-alive reuse (one connection for calls in a row, a small
pool under threads, a connection the server closed replaced), the whole-request timeout in both
places net/http reports it, failures as Go's error strings, and HTTPS with a self-signed CA."""
from __future__ import annotations

import importlib.util
import socket
import ssl
import threading
from pathlib import Path

import pytest

from extender_servers import RawServer, StubServer, make_certs, node, pod
from kschedcore.errors import ValidationError
from kschedcore.extender import ExtenderConfig, ExtenderError, ExtenderTLSConfig
from kschedcore.extender.http import HTTPExtender
from kschedcore.extender.transport import MAX_IDLE

FILTER_OK = b'{"NodeNames":["a"],"FailedNodes":{"b":"no"},"Error":""}'


def ext(port, scheme="http", **kw):
    return HTTPExtender(ExtenderConfig(url_prefix=f"{scheme}://127.0.0.1:{port}/x", filter_verb="filter",
                                       bind_verb="bind", node_cache_capable=True, **kw))


NODES = [node("a"), node("b")]


def test_calls_in_a_row_share_one_connection():
    with StubServer({"/x/filter": (200, FILTER_OK, 0, 0)}) as srv:
        e = ext(srv.port)
        for _ in range(20):
            assert e.filter(pod("p"), NODES).node_names == ["a"]
        assert srv.connections == 1 and e.transport.opened == 1
        path, headers, body = srv.requests[0]
        assert path == "/x/filter" and headers["Content-Type"] == "application/json"
        assert body.startswith(b'{"Pod":{') and body.endswith(b',"Nodes":null,"NodeNames":["a","b"]}')


def test_threads_share_a_small_pool():
    with StubServer({"/x/filter": (200, FILTER_OK, 0.01, 0)}) as srv:
        e = ext(srv.port)
        answers, errors = [], []

        def work():
            try:
                for _ in range(10):
                    answers.append(e.filter(pod("p"), NODES).node_names)
            except Exception as exc:   # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and answers == [["a"]] * 60
        assert srv.connections <= 60 and e.transport.opened == srv.connections
        assert len(e.transport._idle) <= MAX_IDLE   # noqa: SLF001 - the pool's bound


def test_a_connection_the_server_closed_is_replaced():
    """The server answers with keep-alive, then closes the idle connection: the next call
    goes out on a new one instead of failing (Go's pool drops a closed idle connection)."""
    def answer_then_close(conn):
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n" + b'{"Error":""} ')
        return None

    with RawServer({"/x/bind": answer_then_close}) as srv:
        e = ext(srv.port)
        for _ in range(3):
            e.bind(pod("p"), "a")
        assert e.transport.opened == 3


def _late_body(conn):
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n{\"Er")
    threading.Event().wait(1.0)


def _reset(conn):
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")


def _short(conn):
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n{\"Er")


def _garbage(conn):
    conn.sendall(b"hello\r\n\r\n")


def _not_json(conn):
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK")


@pytest.mark.parametrize("path,expected", [
    ("late", "context deadline exceeded (Client.Timeout or context cancellation while reading body)"),
    ("close", 'Post "URL": EOF'),
    ("reset", 'Post "URL": read tcp 127.0.0.1:*->127.0.0.1:PORT: read: connection reset by peer'),
    ("short", "unexpected EOF"),
    ("garbage", 'Post "URL": net/http: HTTP/1.x transport connection broken: malformed HTTP response "hello"'),
    ("notjson", "invalid character 'O' looking for beginning of value"),
])
def test_failures_are_gos_error_strings(path, expected):
    """Each text as Go 1.24's http.Client and encoding/json gave it for the same server."""
    behaviours = {"/late/bind": _late_body, "/close/bind": lambda c: None, "/reset/bind": _reset,
                  "/short/bind": _short, "/garbage/bind": _garbage, "/notjson/bind": _not_json}
    with RawServer(behaviours) as srv:
        e = HTTPExtender(ExtenderConfig(url_prefix=f"http://127.0.0.1:{srv.port}/{path}", bind_verb="bind",
                                        http_timeout=0.3))
        with pytest.raises(ExtenderError) as err:
            e.bind(pod("p"), "a")
    want = expected.replace("URL", f"http://127.0.0.1:{srv.port}/{path}/bind").replace("PORT", str(srv.port))
    got = str(err.value)
    if "*" in want:
        head, tail = want.split("*")
        assert got.startswith(head) and got.endswith(tail), got
    else:
        assert got == want


def test_whole_request_timeout_bounds_a_late_body():
    with RawServer({"/x/bind": _late_body}) as srv:
        import time
        start = time.monotonic()
        with pytest.raises(ExtenderError):
            HTTPExtender(ExtenderConfig(url_prefix=f"http://127.0.0.1:{srv.port}/x", bind_verb="bind",
                                        http_timeout=0.3)).bind(pod("p"), "a")
        assert time.monotonic() - start < 0.9


# ---- HTTPS -----------------------------------------------------------------------------------

needs_crypto = pytest.mark.skipif(importlib.util.find_spec("cryptography") is None,
                                  reason="the cryptography package makes the test certificates")


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    if importlib.util.find_spec("cryptography") is None:
        pytest.skip("the cryptography package makes the test certificates")
    return make_certs(tmp_path_factory.mktemp("tls"))


def _server_tls(certs, client_ca=False):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs["server_cert"], certs["server_key"])
    if client_ca:
        ctx.load_verify_locations(certs["ca"])
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


@needs_crypto
@pytest.mark.parametrize("how", ["ca_file", "ca_data", "enable_https_without_ca", "insecure"])
def test_https_verified_or_insecure(certs, how):
    tls = {"ca_file": ExtenderTLSConfig(ca_file=certs["ca"]),
           "ca_data": ExtenderTLSConfig(ca_data=Path(certs["ca"]).read_bytes()),
           "enable_https_without_ca": None,
           "insecure": ExtenderTLSConfig(insecure=True)}[how]
    with StubServer({"/x/filter": (200, FILTER_OK, 0, 0)}, tls=_server_tls(certs)) as srv:
        e = ext(srv.port, "https", enable_https=how != "ca_file", tls_config=tls)
        assert e.filter(pod("p"), NODES).node_names == ["a"]
        assert e.filter(pod("p"), NODES).node_names == ["a"]
        assert srv.connections == 1


@needs_crypto
def test_https_unknown_authority(certs):
    with StubServer({"/x/filter": (200, FILTER_OK, 0, 0)}, tls=_server_tls(certs)) as srv:
        with pytest.raises(ExtenderError) as err:
            ext(srv.port, "https").filter(pod("p"), NODES)   # the system roots do not know the CA
    assert str(err.value) == (f'Post "https://127.0.0.1:{srv.port}/x/filter": tls: failed to verify certificate: '
                              f"x509: certificate signed by unknown authority")


@needs_crypto
def test_https_server_name_and_client_certificate(tmp_path):
    certs = make_certs(tmp_path, ip_san=False)
    tls = ExtenderTLSConfig(ca_file=certs["ca"], server_name="ext.example",
                            cert_data=Path(certs["client_cert"]).read_bytes(),
                            key_data=Path(certs["client_key"]).read_bytes())
    with StubServer({"/x/filter": (200, FILTER_OK, 0, 0)}, tls=_server_tls(certs, client_ca=True)) as srv:
        assert ext(srv.port, "https", tls_config=tls).filter(pod("p"), NODES).node_names == ["a"]
        no_name = ExtenderTLSConfig(ca_file=certs["ca"], cert_file=certs["client_cert"], key_file=certs["client_key"])
        with pytest.raises(ExtenderError, match="x509: cannot validate certificate for 127.0.0.1 because it doesn't contain any IP SANs$"):
            ext(srv.port, "https", tls_config=no_name).filter(pod("p"), NODES)


def test_insecure_with_a_ca_is_refused(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("")
    with pytest.raises(ValidationError, match="tlsConfig: specifying a root certificates file with the insecure"):
        ext(1, "https", tls_config=ExtenderTLSConfig(insecure=True, ca_file=str(ca)))


def test_filter_answers_read_as_extender_go_reads_them():
    """A nodeCacheCapable answer naming a node it was not sent is Go's error; an answer of
    node names to an extender that sent Node objects passes no node (Go reads Nodes then)."""
    routes = {"/x/filter": (200, b'{"NodeNames":["a","zzz"]}', 0, 0),
              "/y/filter": (200, b'{"NodeNames":["a"],"FailedNodes":{"b":"no"}}', 0, 0)}
    with StubServer(routes) as srv:
        with pytest.raises(ExtenderError) as err:
            ext(srv.port).filter(pod("p"), NODES)
        assert str(err.value) == (f'extender "http://127.0.0.1:{srv.port}/x" claims a filtered node "zzz" '
                                  f"which is not found in the input node list")
        y = HTTPExtender(ExtenderConfig(url_prefix=f"http://127.0.0.1:{srv.port}/y", filter_verb="filter"))
        r = y.filter(pod("p"), NODES)
        assert (r.node_names, r.failed, r.returned_nodes) == ([], {"b": "no"}, None)


def test_a_redirect_is_refused_by_name():
    def redirect(conn):
        conn.sendall(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /y/bind\r\nContent-Length: 0\r\n\r\n")

    with RawServer({"/x/bind": redirect}) as srv:
        with pytest.raises(ExtenderError) as err:
            ext(srv.port).bind(pod("p"), "a")
    assert str(err.value) == (f'Post "http://127.0.0.1:{srv.port}/x/bind": the extender redirected to "/y/bind" '
                              f"(HTTP 307), which kschedcore does not follow")
