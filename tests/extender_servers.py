"""Servers and objects for the HTTP extender's tests: the deterministic extender server of the
parity data, and a small scripted HTTP/1.1 server (keep-alive, optional TLS) that counts its
connections."""
from __future__ import annotations

import contextlib
import json
import socket
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from kschedcore.objects.node import parse_node
from kschedcore.objects.pod import parse_pod

PARITY = Path(__file__).parent / "data" / "extender"   # the extender_a ground truth and its server
SERVER = PARITY / "extender_server.py"


def node(name: str, labels: dict | None = None) -> object:
    return parse_node({"apiVersion": "v1", "kind": "Node",
                       "metadata": {"name": name, "uid": f"uid-{name}", "labels": labels or {}},
                       "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})


def pod(name: str, labels: dict | None = None, requests: dict | None = None, node_name: str = "",
        init_limits: dict | None = None, limits: dict | None = None, namespace: str = "default") -> object:
    resources = {"requests": requests or {"cpu": "100m"}}
    if limits:
        resources["limits"] = limits
    spec = {"containers": [{"name": "c", "image": "x", "resources": resources}]}
    if init_limits:
        spec["initContainers"] = [{"name": "i", "image": "x",
                                   "resources": {"requests": init_limits, "limits": init_limits}}]
    if node_name:
        spec["nodeName"] = node_name
    return parse_pod({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                                   "labels": labels or {}},
                      "spec": spec})


@contextlib.contextmanager
def parity_server(spec: dict, tmp: Path):
    """extender_server.py on a free port, as the parity README starts it: (port, log path)."""
    spec_path, log = tmp / "spec.json", tmp / "calls.jsonl"
    spec_path.write_text(json.dumps(spec))
    proc = subprocess.Popen([sys.executable, str(SERVER), "--spec", str(spec_path), "--port", "0",
                             "--log", str(log)], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("PORT "), line
        yield int(line.split()[1]), log
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def log_lines(log: Path) -> list[dict]:
    return [json.loads(x) for x in log.read_text().splitlines() if x.strip()]


def free_port() -> int:
    """A port nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class StubServer:
    """A keep-alive HTTP/1.1 server answering each path from `routes`: path -> (status, body
    bytes, seconds before the headers, seconds between headers and body). Records the requests
    (path, headers, body) and counts the connections it accepted."""

    def __init__(self, routes: dict, tls: ssl.SSLContext | None = None):
        self.routes = routes
        self.requests: list[tuple[str, dict, bytes]] = []
        self.connections = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                stub.connections += 1
                super().setup()

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                stub.requests.append((self.path, dict(self.headers), body))
                status, answer, before, between = stub.routes.get(self.path, (404, b"{}", 0, 0))
                if callable(answer):
                    answer = answer(body)
                time.sleep(before)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.flush()
                    time.sleep(between)
                    self.wfile.write(answer)
                except OSError:
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


class RawServer:
    """A TCP server that reads one request per connection and calls `behaviours[path](conn)`
    (answers of any shape: a late body, a reset, a malformed status line)."""

    def __init__(self, behaviours: dict):
        self.behaviours = behaviours
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        with contextlib.suppress(OSError):
            while True:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, rest = data.partition(b"\r\n\r\n")
                length = next((int(h.split(b":")[1]) for h in head.split(b"\r\n")
                               if h.lower().startswith(b"content-length:")), 0)
                while len(rest) < length:
                    rest += conn.recv(65536)
                if self.behaviours[head.split(b" ")[1].decode()](conn) == "keep":
                    continue
                conn.close()
                return

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.sock.close()


def make_certs(tmp: Path, ip_san: bool = True, dns: str = "ext.example") -> dict:
    """A self-signed CA and a server certificate it signed (and a client certificate), as PEM
    files under tmp; keys: ca, server_cert, server_key, client_cert, client_key."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def name(cn):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def cert(subject, key, issuer, issuer_key, ca=False, sans=None):
        b = (x509.CertificateBuilder().subject_name(name(subject)).issuer_name(name(issuer))
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if sans:
            b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return b.sign(issuer_key, hashes.SHA256())

    def write(fname, data):
        path = tmp / fname
        path.write_bytes(data)
        return str(path)

    def key_pem(k):
        return k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.NoEncryption())

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = cert("test-ca", ca_key, "test-ca", ca_key, ca=True)
    sans = [x509.DNSName(dns)] + ([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))] if ip_san else [])
    srv_key = ec.generate_private_key(ec.SECP256R1())
    srv = cert("extender", srv_key, "test-ca", ca_key, sans=sans)
    cli_key = ec.generate_private_key(ec.SECP256R1())
    cli = cert("scheduler", cli_key, "test-ca", ca_key)
    pem = serialization.Encoding.PEM
    return {"ca": write("ca.pem", ca.public_bytes(pem)),
            "server_cert": write("server.pem", srv.public_bytes(pem)), "server_key": write("server.key", key_pem(srv_key)),
            "client_cert": write("client.pem", cli.public_bytes(pem)), "client_key": write("client.key", key_pem(cli_key))}
