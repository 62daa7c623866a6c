"""A real kube-apiserver and etcd for the live-cluster tests and benchmarks.

`KSCHEDCORE_TEST_APISERVER` names a folder holding the `kube-apiserver` and `etcd` binaries
(built from source: docs/live.md says how). `ApiServer` starts both on free loopback ports with
certificates made by openssl, a client certificate in system:masters, and writes a kubeconfig.

Admission: the plugins a bare API server turns on by default, except ServiceAccount (no
controller makes the default ServiceAccount here) and TaintNodesByCondition (no node controller
takes the not-ready taint off). DefaultTolerationSeconds stays on: pods carry its two NoExecute
tolerations, offline and online alike.
"""
from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

ENV = "KSCHEDCORE_TEST_APISERVER"
DISABLED_ADMISSION = "ServiceAccount,TaintNodesByCondition"


def binaries() -> Path | None:
    """The folder with kube-apiserver and etcd, or None (the tests that need them skip)."""
    folder = os.environ.get(ENV)
    if not folder:
        return None
    path = Path(folder)
    if not (path / "kube-apiserver").exists() or not (path / "etcd").exists():
        return None
    return path


def skip_reason() -> str:
    return (f"needs a real kube-apiserver: set {ENV} to a folder holding kube-apiserver and etcd "
            "(docs/live.md: building them)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _openssl(*args, cwd) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


class ApiServer:
    """etcd and kube-apiserver in a temporary folder: `start()`, `kubeconfig`, `stop()`;
    `kill_etcd` etc. are not offered: the server lives for the test module."""

    def __init__(self, folder: Path, extra_args=()) -> None:
        self.bin = folder
        self.dir = Path(tempfile.mkdtemp(prefix="kschedcore-apiserver-"))
        self.extra_args = list(extra_args)
        self.procs: list = []
        self.port = _free_port()
        self.kubeconfig = str(self.dir / "kubeconfig")
        self.url = f"https://127.0.0.1:{self.port}"

    def _certs(self) -> None:
        d = self.dir
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
                 "-days", "2", "-subj", "/CN=kschedcore-test-ca", cwd=d)
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "admin.key", "-out", "admin.csr",
                 "-subj", "/O=system:masters/CN=kschedcore-admin", cwd=d)
        _openssl("x509", "-req", "-in", "admin.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", "admin.crt", "-days", "2", cwd=d)
        (d / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
                 "-subj", "/CN=127.0.0.1", cwd=d)
        _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", "server.crt", "-days", "2", "-extfile", "san.cnf", cwd=d)
        _openssl("genrsa", "-out", "sa.key", "2048", cwd=d)
        _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=d)

    def start(self, timeout: float = 90.0) -> "ApiServer":
        self._certs()
        d = self.dir
        etcd_port, peer_port = _free_port(), _free_port()
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        log = open(d / "etcd.log", "wb")
        self.procs.append(subprocess.Popen(
            [str(self.bin / "etcd"), "--data-dir", str(d / "etcd"), "--listen-client-urls", etcd_url,
             "--advertise-client-urls", etcd_url, "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
             "--initial-cluster", f"default=http://127.0.0.1:{peer_port}", "--quota-backend-bytes", str(4 << 30)],
            stdout=log, stderr=subprocess.STDOUT))
        log = open(d / "apiserver.log", "wb")
        self.procs.append(subprocess.Popen(
            [str(self.bin / "kube-apiserver"), "--etcd-servers", etcd_url, "--bind-address", "127.0.0.1",
             "--secure-port", str(self.port), "--tls-cert-file", str(d / "server.crt"),
             "--tls-private-key-file", str(d / "server.key"), "--client-ca-file", str(d / "ca.crt"),
             "--authorization-mode", "RBAC", "--service-account-issuer", "https://kubernetes.default.svc",
             "--service-account-key-file", str(d / "sa.pub"),
             "--service-account-signing-key-file", str(d / "sa.key"),
             "--service-cluster-ip-range", "10.0.0.0/24", "--disable-admission-plugins", DISABLED_ADMISSION,
             "--max-requests-inflight", "2000", "--max-mutating-requests-inflight", "1000",
             *self.extra_args],
            stdout=log, stderr=subprocess.STDOUT))
        self._write_kubeconfig()
        self._wait_ready(timeout)
        return self

    def _write_kubeconfig(self) -> None:
        d = self.dir
        Path(self.kubeconfig).write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {{server: "{self.url}", certificate-authority: "{d / 'ca.crt'}"}}
users:
- name: admin
  user: {{client-certificate: "{d / 'admin.crt'}", client-key: "{d / 'admin.key'}"}}
contexts:
- name: test
  context: {{cluster: test, user: admin}}
current-context: test
""")

    def _wait_ready(self, timeout: float) -> None:
        ctx = ssl.create_default_context(cafile=str(self.dir / "ca.crt"))
        ctx.load_cert_chain(str(self.dir / "admin.crt"), str(self.dir / "admin.key"))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.procs):
                raise RuntimeError("the API server or etcd exited: " + self.log_tail())
            try:
                with urllib.request.urlopen(self.url + "/readyz", context=ctx, timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.3)
        raise RuntimeError("the API server did not become ready: " + self.log_tail())

    def log_tail(self, n: int = 2000) -> str:
        try:
            return (self.dir / "apiserver.log").read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def has_kube_scheduler() -> bool:
    folder = binaries()
    return folder is not None and (folder / "kube-scheduler").exists()


def start_kube_scheduler(server: ApiServer, config: str):
    """The real kube-scheduler (the folder's `kube-scheduler`) on the server, with the
    KubeSchedulerConfiguration text `config` (its kubeconfig filled in), serving nothing."""
    path = server.dir / "scheduler.yaml"
    path.write_text(config.replace("KUBECONFIG", server.kubeconfig))
    log = open(server.dir / "scheduler.log", "wb")
    proc = subprocess.Popen([str(server.bin / "kube-scheduler"), "--config", str(path), "--secure-port", "0"],
                            stdout=log, stderr=subprocess.STDOUT)
    server.procs.append(proc)
    return proc
