"""The HTTP client of an HTTP extender, as Go's http.Client with kube-scheduler's transport:
`httpTimeout` bounds the whole request, idle keep-alive connections are reused (at most two
per extender, Go's DefaultMaxIdleConnsPerHost; closed after 90 s idle, IdleConnTimeout), and
every failure is raised as Go's error string (`Post "URL": ...`)."""
from __future__ import annotations

import gzip
import http.client
import json
import os
import socket
import ssl
import tempfile
import threading
import time
from urllib.parse import urlsplit

from ..errors import ValidationError
from .config import ExtenderConfig, ExtenderTLSConfig

MAX_IDLE = 2
IDLE_TIMEOUT = 90.0
_HEADERS_TIMEOUT = "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
_BODY_TIMEOUT = "context deadline exceeded (Client.Timeout or context cancellation while reading body)"


class TransportError(Exception):
    """A request failed; the text is Go's error string."""


class _DialError(OSError):
    """A connection could not be made; the text is Go's net.OpError text."""


def _host_port(addr) -> str:
    host, port = addr[0], addr[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _errno_text(err: OSError) -> str:
    """A syscall errno as Go's syscall.Errno writes it (lower case)."""
    text = os.strerror(err.errno) if err.errno else str(err)
    return text[:1].lower() + text[1:]


def _dial(host: str, port: int, timeout: float | None) -> socket.socket:
    """net.Dial("tcp", ...) with Go's error text."""
    try:
        infos = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
    except socket.gaierror:
        raise _DialError(f"dial tcp: lookup {host}{_resolver()}: no such host") from None
    last = None
    for family, stype, proto, _, addr in infos:
        sock = socket.socket(family, stype, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(addr)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except socket.timeout:
            sock.close()
            raise
        except OSError as e:
            sock.close()
            last = _DialError(f"dial tcp {_host_port(addr)}: connect: {_errno_text(e)}")
    raise last or _DialError(f"dial tcp: lookup {host}{_resolver()}: no such host")


def _resolver() -> str:
    """" on NAMESERVER:53", the first nameserver of /etc/resolv.conf, as Go's resolver names it."""
    try:
        with open("/etc/resolv.conf", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0] == "nameserver":
                    return f" on {_host_port((parts[1], 53))}"
    except OSError:
        pass
    return ""


def _where(sock: socket.socket) -> str:
    """"LOCAL->REMOTE" as Go's net.OpError writes a connection's addresses."""
    return f"{_host_port(sock.getsockname())}->{_host_port(sock.getpeername())}"


class _Conn(http.client.HTTPConnection):
    where = "?"

    def connect(self):
        self.sock = _dial(self.host, self.port, self.timeout)
        self.where = _where(self.sock)


class _TLSConn(http.client.HTTPConnection):
    default_port = 443
    where = "?"

    def __init__(self, host, port, timeout, context: ssl.SSLContext, server_name: str):
        super().__init__(host, port, timeout=timeout)
        self._context = context
        self._server_name = server_name or host

    def connect(self):
        sock = _dial(self.host, self.port, self.timeout)
        self.where = _where(sock)
        try:
            self.sock = self._context.wrap_socket(sock, server_hostname=self._server_name)
        except BaseException:
            sock.close()
            raise


def tls_context(config: ExtenderConfig) -> ssl.SSLContext:
    """restclient.TLSConfigFor of makeTransport: the CA (file or data) verifies the server;
    enableHTTPS without a CA, or tlsConfig.insecure, skips verification; a client certificate
    (file or data) is presented."""
    tls = config.tls_config or ExtenderTLSConfig()
    has_ca = bool(tls.ca_file or tls.ca_data)
    insecure = tls.insecure or (config.enable_https and not has_ca)
    if tls.insecure and has_ca:
        raise ValidationError(f"extender {config.url_prefix}", "tlsConfig",
                              "specifying a root certificates file with the insecure flag is not allowed")
    try:
        return _context(tls, insecure, has_ca)
    except (OSError, ssl.SSLError, ValueError) as e:
        raise ValidationError(f"extender {config.url_prefix}", "tlsConfig", _file_error(e)) from None


def _file_error(e: Exception) -> str:
    if isinstance(e, OSError) and e.filename:
        return f"open {e.filename}: {_errno_text(e)}"
    return str(e)


def _context(tls: ExtenderTLSConfig, insecure: bool, has_ca: bool) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif has_ca:
        ctx.load_verify_locations(cafile=tls.ca_file or None,
                                  cadata=tls.ca_data.decode() if tls.ca_data and not tls.ca_file else None)
    if tls.cert_file or tls.cert_data:
        _load_client_cert(ctx, tls)
    return ctx


def _load_client_cert(ctx: ssl.SSLContext, tls: ExtenderTLSConfig) -> None:
    if tls.cert_file:
        ctx.load_cert_chain(tls.cert_file, tls.key_file or None)
        return
    with tempfile.TemporaryDirectory() as tmp:   # the ssl module loads certificates from files
        cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
        with open(cert, "wb") as f:
            f.write(tls.cert_data)
        with open(key, "wb") as f:
            f.write(tls.key_data)
        ctx.load_cert_chain(cert, key)


class HTTPTransport:
    """POSTs JSON to one extender's URLs over pooled keep-alive connections. Thread-safe."""

    def __init__(self, config: ExtenderConfig):
        self.base = config.url_prefix.rstrip("/")
        parts = urlsplit(self.base)
        self.scheme = parts.scheme
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.base_path = parts.path
        self.timeout = config.http_timeout if config.http_timeout > 0 else 5.0
        self.context = tls_context(config) if parts.scheme == "https" else None
        self.server_name = (config.tls_config.server_name if config.tls_config else "") or ""
        self._idle: list[tuple[http.client.HTTPConnection, float]] = []
        self._lock = threading.Lock()
        #: connections opened so far (for tests and the bench)
        self.opened = 0

    def url(self, verb: str) -> str:
        """strings.TrimRight(urlPrefix, "/") + "/" + verb."""
        return self.base + "/" + verb

    def _new(self, timeout: float) -> http.client.HTTPConnection:
        self.opened += 1
        if self.context is not None:
            return _TLSConn(self.host, self.port, timeout, self.context, self.server_name)
        return _Conn(self.host, self.port, timeout=timeout)

    def _take(self, timeout: float) -> tuple[http.client.HTTPConnection, bool]:
        now = time.monotonic()
        with self._lock:
            while self._idle:
                conn, since = self._idle.pop()
                if now - since < IDLE_TIMEOUT:
                    return conn, True
                conn.close()
        return self._new(timeout), False

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < MAX_IDLE:
                self._idle.append((conn, time.monotonic()))
                return
        conn.close()

    def close(self) -> None:
        """Closes the idle connections."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            conn.close()

    def post(self, verb: str, body: bytes) -> tuple[int, bytes]:
        """(status, body) of POST url(verb). A non-200 answer's body is not read (Go returns
        the status error without it). Raises TransportError."""
        url = self.url(verb)
        deadline = time.monotonic() + self.timeout
        conn, _ = self._take(self.timeout)
        try:
            resp, sock = self._exchange(conn, url, verb, body, deadline)
        except _Stale:
            conn.close()   # the server closed an idle connection: Go's pool drops it first
            conn = self._new(self.timeout)
            try:
                resp, sock = self._exchange(conn, url, verb, body, deadline)
            except BaseException:
                conn.close()
                raise
        except BaseException:
            conn.close()
            raise
        return self._answer(conn, resp, sock, url, deadline)

    def _exchange(self, conn, url: str, verb: str, body: bytes, deadline: float):
        reused = conn.sock is not None
        try:
            left = _left(deadline)
            conn.timeout = left
            if conn.sock is not None:
                conn.sock.settimeout(left)
            conn.putrequest("POST", self.base_path + "/" + verb, skip_accept_encoding=True)
            conn.putheader("User-Agent", "Go-http-client/1.1")
            conn.putheader("Content-Length", str(len(body)))
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Accept-Encoding", "gzip")
            conn.endheaders(body)
            sock = conn.sock
            sock.settimeout(_left(deadline))
            return conn.getresponse(), sock
        except (socket.timeout, _Deadline):
            raise TransportError(f'Post "{url}": {_HEADERS_TIMEOUT}') from None
        except _DialError as e:
            raise TransportError(f'Post "{url}": {e}') from None
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
            if reused:
                raise _Stale() from None
            raise TransportError(f'Post "{url}": {_reset_text(conn, e)}') from None
        except ssl.SSLCertVerificationError as e:
            raise TransportError(f'Post "{url}": tls: failed to verify certificate: x509: '
                                 f'{_x509_text(e, self.server_name or self.host)}') from None
        except ssl.SSLError as e:
            raise TransportError(f'Post "{url}": remote error: tls: {e.reason or e}'.lower()) from None
        except OSError as e:
            raise TransportError(f'Post "{url}": {_errno_text(e)}') from None
        except http.client.HTTPException as e:
            line = str(getattr(e, "line", e)).rstrip("\r\n")
            raise TransportError(f'Post "{url}": net/http: HTTP/1.x transport connection broken: '
                                 f"malformed HTTP response {json.dumps(line)}") from None

    def _answer(self, conn, resp, sock, url: str, deadline: float) -> tuple[int, bytes]:
        if resp.status != 200:
            location = resp.getheader("Location")
            resp.close()
            conn.close()
            if resp.status in (301, 302, 303, 307, 308) and location:
                # Go's client would follow it; kschedcore refuses it by name instead
                raise TransportError(f'Post "{url}": the extender redirected to "{location}" '
                                     f"(HTTP {resp.status}), which kschedcore does not follow")
            return resp.status, b""
        try:
            sock.settimeout(_left(deadline))
            data = resp.read()
            if time.monotonic() > deadline:
                raise _Deadline()
        except (socket.timeout, _Deadline):
            resp.close()
            conn.close()
            raise TransportError(_BODY_TIMEOUT) from None
        except (OSError, http.client.HTTPException):
            resp.close()
            conn.close()
            raise TransportError("unexpected EOF") from None
        if resp.getheader("Content-Encoding", "").lower() == "gzip":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError):
                conn.close()
                raise TransportError("gzip: invalid header") from None
        if resp.will_close:
            conn.close()
        else:
            self._give_back(conn)
        return 200, data


class _Stale(Exception):
    """A reused connection was closed by the server before it answered."""


class _Deadline(Exception):
    """The whole-request timeout passed."""


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _Deadline()
    return left


def _reset_text(conn, err: Exception) -> str:
    if isinstance(err, http.client.RemoteDisconnected):
        return "EOF"
    op = "write" if isinstance(err, BrokenPipeError) else "read"
    reason = "broken pipe" if op == "write" else "connection reset by peer"
    return f"{op} tcp {conn.where}: {op}: {reason}"


def _x509_text(err: ssl.SSLCertVerificationError, name: str) -> str:
    """crypto/x509's words for the common verification failures."""
    code = getattr(err, "verify_code", 0)
    if code in (18, 19, 20, 21):
        return "certificate signed by unknown authority"
    if code == 10:
        return "certificate has expired or is not yet valid"
    if code == 64:
        return f"cannot validate certificate for {name} because it doesn't contain any IP SANs"
    if code == 62:
        return f"certificate is not valid for {name}"
    return str(getattr(err, "verify_message", err))
