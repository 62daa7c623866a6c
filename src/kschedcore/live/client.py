"""A client of the Kubernetes API: the official client's configuration and authentication,
kschedcore's own reading of the bodies.

`connect()` reads a kubeconfig with the official `kubernetes` package (contexts, tokens, client
certificates, exec plugins, proxies) and takes its connection pool; requests, lists and watch
streams are read as raw JSON bytes into plain dicts, which kschedcore's readers parse once (the
official client's model deserialisation takes seconds for thousands of pods). Requests are paced
by a token bucket as client-go's (`qps`, `burst`; watches are not paced once open).
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from ..errors import KSchedCoreError

__all__ = ["ApiError", "Client", "connect", "DEFAULT_QPS", "DEFAULT_BURST"]

#: kube-scheduler's clientConnection defaults (KubeSchedulerConfiguration v1)
DEFAULT_QPS, DEFAULT_BURST = 50.0, 100


class ApiError(KSchedCoreError):
    """An API server's answer other than 2xx (`status`, its Status `reason` and `message`), or
    no answer at all (`status` 0: the connection failed)."""

    def __init__(self, method: str, path: str, status: int, reason: str = "", message: str = "") -> None:
        self.method, self.path, self.status, self.reason, self.message = method, path, status, reason, message
        what = f"HTTP {status}" if status else "no answer"
        super().__init__(f"{method} {path}: {what}{' ' + reason if reason else ''}"
                         f"{': ' + message if message else ''}")

    @classmethod
    def from_body(cls, method: str, path: str, status: int, body: bytes) -> "ApiError":
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and doc.get("kind") == "Status":
            return cls(method, path, status, str(doc.get("reason") or ""), str(doc.get("message") or ""))
        return cls(method, path, status, "", body[:200].decode("utf-8", "replace").strip())


class TokenBucket:
    """client-go's token-bucket rate limiter: `burst` tokens, refilled at `qps` per second;
    `take()` waits for one. qps <= 0: no limit."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps, self.burst = float(qps), max(1, int(burst))
        self._tokens, self._last = float(self.burst), time.monotonic()
        self._lock = threading.Lock()

    def take(self) -> None:
        if self.qps <= 0:
            return
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            self._tokens -= 1.0
            wait = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if wait > 0:
            time.sleep(wait)


@dataclass
class Response:
    status: int
    body: bytes

    def json(self):
        return json.loads(self.body)


class Client:
    """Requests to one API server. `pool` is a urllib3 PoolManager (the official client's, made
    from the kubeconfig), `host` the server's URL, `headers()` the authentication headers of each
    request (an exec plugin's token is refreshed as the official client refreshes it)."""

    def __init__(self, pool, host: str, headers=None, *, qps: float = DEFAULT_QPS, burst: int = DEFAULT_BURST,
                 timeout: float = 30.0) -> None:
        self.pool, self.host = pool, host.rstrip("/")
        self._headers: Callable[[], dict] = headers or dict
        self.limiter = TokenBucket(qps, burst)
        self.timeout = timeout

    def with_own_limiter(self) -> "Client":
        """The same server and connections, paced by a token bucket of its own (kube-scheduler's
        events and leader election use clients of their own, each with the configured QPS)."""
        return Client(self.pool, self.host, self._headers, qps=self.limiter.qps, burst=self.limiter.burst,
                      timeout=self.timeout)

    def url(self, path: str, query: dict | None = None) -> str:
        q = {k: v for k, v in (query or {}).items() if v is not None and v != ""}
        return self.host + path + ("?" + urlencode(q) if q else "")

    def request(self, method: str, path: str, query: dict | None = None, body=None,
                content_type: str = "application/json", timeout: float | None = None) -> Response:
        """One paced request; its answer, or ApiError for a non-2xx answer or no answer."""
        self.limiter.take()
        headers = {"Accept": "application/json", **self._headers()}
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = content_type
        try:
            r = self.pool.request(method, self.url(path, query), body=data, headers=headers,
                                  timeout=timeout or self.timeout, retries=False, preload_content=True)
        except Exception as e:      # urllib3's connection and timeout errors, TLS errors
            raise ApiError(method, path, 0, "", f"{type(e).__name__}: {e}") from None
        if not 200 <= r.status < 300:
            raise ApiError.from_body(method, path, r.status, r.data)
        return Response(r.status, r.data)

    def get(self, path: str, query: dict | None = None) -> dict:
        return self.request("GET", path, query).json()

    def stream(self, path: str, query: dict, read_seconds: float):
        """A watch: the open response, its body read as it comes (`read_lines`); a read that
        waits longer than `read_seconds` fails."""
        import urllib3          # the official client's; there whenever a Client was made
        timeout = urllib3.Timeout(connect=10.0, read=read_seconds)
        self.limiter.take()
        headers = {"Accept": "application/json", **self._headers()}
        try:
            r = self.pool.request("GET", self.url(path, query), headers=headers, retries=False,
                                  preload_content=False, timeout=timeout)
        except Exception as e:
            raise ApiError("GET", path, 0, "", f"{type(e).__name__}: {e}") from None
        if not 200 <= r.status < 300:
            body = r.read()
            r.release_conn()
            raise ApiError.from_body("GET", path, r.status, body)
        return r


def read_lines(response, chunk: int = 1 << 16):
    """The lines of a streamed body (a watch's one JSON event per line), as bytes. A broken
    connection or a read timeout is an ApiError with status 0."""
    rest = b""
    chunks = response.stream(chunk, decode_content=True)
    while True:
        try:
            data = next(chunks)
        except StopIteration:
            break
        except Exception as e:          # urllib3's protocol and timeout errors
            raise ApiError("WATCH", "", 0, "", f"{type(e).__name__}: {e}") from None
        rest += data
        if b"\n" not in data:
            continue
        *lines, rest = rest.split(b"\n")
        yield from (line for line in lines if line.strip())
    if rest.strip():
        yield rest


def path_of(name: str) -> str:
    return quote(name, safe="")


def connect(kubeconfig: str | None = None, context: str | None = None, *, qps: float = DEFAULT_QPS,
            burst: int = DEFAULT_BURST, pool_size: int = 64) -> Client:
    """A Client for a kubeconfig's context (default: its current context; no kubeconfig: the
    in-cluster service account). Needs the official client: `pip install 'kschedcore[live]'`."""
    try:
        from kubernetes import config as kconfig
        from kubernetes.client import Configuration
        from kubernetes.client.rest import RESTClientObject
    except ImportError:
        raise KSchedCoreError("--kubeconfig needs the official Kubernetes client: "
                              "pip install 'kschedcore[live]'") from None
    cfg = Configuration()
    try:
        if kubeconfig is None and context is None:
            try:
                kconfig.load_incluster_config(client_configuration=cfg)
            except kconfig.ConfigException:
                kconfig.load_kube_config(client_configuration=cfg)
        else:
            kconfig.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
    except (kconfig.ConfigException, OSError, ValueError, TypeError) as e:
        raise KSchedCoreError(f"kubeconfig {kubeconfig or '(default)'}: {e}") from None
    cfg.connection_pool_maxsize = pool_size      # a watch per kind, the binders, the status writers

    def headers() -> dict:
        auth = cfg.auth_settings().get("BearerToken")
        return {"Authorization": auth["value"]} if auth and auth.get("value") else {}

    return Client(RESTClientObject(cfg).pool_manager, cfg.host, headers, qps=qps, burst=burst)
