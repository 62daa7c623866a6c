"""Recorded API-server sessions, for testing the live client without an API server.

`RecordingProxy` sits on a loopback port in front of a real kube-apiserver (tests/apiserver.py):
every request of the client under test is forwarded, and the exchange written down -- requests
with their answers, watch streams line by line -- each with a sequence number. `ReplayServer`
answers the same client from such a recording on a loopback socket: each request gets the answer
recorded for the same method and path (in recorded order), and a watch line is sent only once
every mutation the client made before it in the recording has been made again, so the client
sees the events in the order it saw them live. What it was asked and had no answer for is kept
in `unrecorded`.
"""
from __future__ import annotations

import gzip
import json
import ssl
import threading
import urllib.parse
from collections import defaultdict, deque
from http.client import HTTPSConnection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

#: query parameters that differ between runs (a watch's random timeout)
VOLATILE = ("timeoutSeconds",)


def request_key(method: str, path: str) -> str:
    url = urllib.parse.urlsplit(path)
    query = sorted((k, v) for k, v in urllib.parse.parse_qsl(url.query) if k not in VOLATILE)
    return f"{method} {url.path}?{urllib.parse.urlencode(query)}"


def _is_mutation(method: str, path: str) -> bool:
    return method != "GET" and "/events" not in path


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def _serve(handler):
    """A threaded server of `handler` on a free loopback port: (server, its URL)."""
    httpd = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def _chunk(wfile, data: bytes) -> None:
    """One chunk of a chunked body, sent at once."""
    wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
    wfile.flush()


def kubeconfig(url: str, path) -> str:
    """A kubeconfig for a plain-HTTP loopback server."""
    with open(path, "w") as f:
        f.write(f"apiVersion: v1\nkind: Config\nclusters:\n- name: r\n  cluster: {{server: \"{url}\"}}\n"
                "users:\n- name: r\n  user: {}\ncontexts:\n- name: r\n  context: {cluster: r, user: r}\n"
                "current-context: r\n")
    return str(path)


class RecordingProxy:
    """A plain-HTTP loopback proxy to `server` (an ApiServer) that records every exchange."""

    def __init__(self, server) -> None:
        self.records: list = []
        self._lock = threading.Lock()
        self._seq = 0
        ctx = ssl.create_default_context(cafile=str(server.dir / "ca.crt"))
        ctx.load_cert_chain(str(server.dir / "admin.crt"), str(server.dir / "admin.key"))
        host, port = "127.0.0.1", server.port
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                seq = proxy.next_seq()      # numbered as sent: a watch event it causes comes after it
                conn = HTTPSConnection(host, port, context=ctx, timeout=700)
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "accept")}
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                watch = "watch=1" in self.path or "watch=true" in self.path
                if watch and resp.status == 200:
                    self._stream(resp, seq)
                else:
                    data = resp.read()
                    proxy.add({"kind": "request", "method": self.command, "path": self.path,
                               "body": json.loads(body) if body else None, "status": resp.status,
                               "response": data.decode()}, seq)
                    self.send_response(resp.status)
                    self.send_header("Content-Type", resp.getheader("Content-Type") or "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                conn.close()

            def _stream(self, resp, seq):
                watch_id = proxy.add({"kind": "watch", "method": self.command, "path": self.path, "status": 200}, seq)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    while True:
                        line = resp.readline()
                        if not line:
                            break
                        proxy.add({"kind": "line", "watch": watch_id, "data": line.decode().rstrip("\n")})
                        _chunk(self.wfile, line)
                    proxy.add({"kind": "end", "watch": watch_id})
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:             # the client went away
                    proxy.add({"kind": "end", "watch": watch_id})

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

            def log_message(self, *args):
                pass

        self.httpd, self.url = _serve(Handler)

    def next_seq(self) -> int:
        with self._lock:
            self._seq += 1
            return self._seq

    def add(self, record: dict, seq: int | None = None) -> int:
        """Keeps a record under `seq` (taken when its request was sent), else the next number."""
        with self._lock:
            if seq is None:
                self._seq += 1
                seq = self._seq
            record["seq"] = seq
            self.records.append(record)
            return seq

    def save(self, path) -> None:
        opener = gzip.open if str(path).endswith(".gz") else open
        with self._lock:
            with opener(path, "wt") as f:
                for r in sorted(self.records, key=lambda r: r["seq"]):
                    f.write(json.dumps(r, separators=(",", ":")) + "\n")

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class ReplayServer:
    """Answers from a recording (a file written by RecordingProxy.save)."""

    def __init__(self, path) -> None:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt") as f:
            records = [json.loads(line) for line in f]
        self.answers: dict = defaultdict(deque)       # request key -> recorded answers, in order
        self.lines: dict = defaultdict(list)          # watch seq -> [(seq, data)], and "end"
        self.ended: set = set()
        self.mutations: list = []                     # recorded mutations' seqs, in order
        self.received: list = []                      # the requests made: (method, path, body)
        self.unrecorded: list = []
        self._done_mutations: set = set()
        self._cond = threading.Condition()
        self._closing = False
        for r in records:
            if r["kind"] in ("request", "watch"):
                self.answers[request_key(r["method"], r["path"])].append(r)
                if r["kind"] == "request" and _is_mutation(r["method"], r["path"]):
                    self.mutations.append(r["seq"])
            elif r["kind"] == "line":
                self.lines[r["watch"]].append((r["seq"], r["data"]))
            elif r["kind"] == "end":
                self.ended.add(r["watch"])
        replay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                key = request_key(self.command, self.path)
                with replay._cond:
                    replay.received.append((self.command, self.path, body))
                    queue = replay.answers.get(key)
                    rec = queue.popleft() if queue else None
                    if rec is None:
                        replay.unrecorded.append(key)
                if rec is None:
                    data = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 500,
                                       "reason": "InternalError", "message": f"unrecorded request {key}"}).encode()
                    self._send(500, data)
                elif rec["kind"] == "watch":
                    self._stream(rec["seq"])
                else:
                    if _is_mutation(rec["method"], rec["path"]):
                        with replay._cond:
                            replay._done_mutations.add(rec["seq"])
                            replay._cond.notify_all()
                    self._send(rec["status"], rec["response"].encode())

            def _send(self, status, data):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, watch_seq):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for seq, data in replay.lines.get(watch_seq, ()):
                        if not replay.wait_before(seq):
                            return
                        line = data.encode() + b"\n"
                        _chunk(self.wfile, line)
                    if watch_seq in replay.ended:
                        self.wfile.write(b"0\r\n\r\n")
                    else:
                        replay.wait_closing()
                except OSError:
                    pass

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

            def log_message(self, *args):
                pass

        self.httpd, self.url = _serve(Handler)

    def wait_before(self, seq: int, timeout: float = 30.0) -> bool:
        """Waits until the mutations recorded before `seq` were made again (False: closing)."""
        need = [m for m in self.mutations if m < seq]
        with self._cond:
            self._cond.wait_for(lambda: self._closing or all(m in self._done_mutations for m in need), timeout)
            return not self._closing

    def wait_closing(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._closing)

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()


class HookedClient:
    """A Client whose `after_get()` runs after each GET returns (an interleaving made on purpose)."""

    def __init__(self, client) -> None:
        self.client, self.after_get = client, None

    def request(self, method, *args, **kw):
        out = self.client.request(method, *args, **kw)
        if method == "GET" and self.after_get is not None:
            self.after_get()
        return out


def candidate(client, identity):
    """A leader-election candidate with short times (3 s lease, 2 s deadline, 1 s retry)."""
    from kschedcore.live.leader import LeaderElector
    return LeaderElector(client, "kube-system", "kschedcore", identity, lease_duration=3, renew_deadline=2,
                         retry_period=1)


def try_once(elector):
    """One try: True / False, or the API's refusal as its HTTP status."""
    from kschedcore.live import ApiError
    try:
        return elector.try_acquire_or_renew()
    except ApiError as e:
        return e.status
