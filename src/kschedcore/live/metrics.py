"""`/healthz`, `/readyz` and `/metrics` (Prometheus' text format) for `kschedcore run`, with
kube-scheduler's metric names for what exists here: schedule attempts and their duration by
result, the time from a pod's first enqueue to its binding (the scheduling SLI), pending pods by
queue, preemption attempts."""
from __future__ import annotations

import bisect
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from ..scheduler.loop import SimulationListener

__all__ = ["Metrics", "serve"]

#: kube-scheduler's buckets: attempt duration ExponentialBuckets(0.001, 2, 15), SLI (0.01, 2, 20)
ATTEMPT_BUCKETS = tuple(0.001 * 2 ** i for i in range(15))
SLI_BUCKETS = tuple(0.01 * 2 ** i for i in range(20))


class Histogram:
    def __init__(self, buckets) -> None:
        self.buckets = buckets
        self.counts: dict = {}          # labels -> [per-bucket counts..., sum, count]

    def observe(self, labels: tuple, value: float) -> None:
        row = self.counts.get(labels)
        if row is None:
            row = self.counts[labels] = [0] * len(self.buckets) + [0.0, 0]
        i = bisect.bisect_left(self.buckets, value)
        if i < len(self.buckets):
            row[i] += 1
        row[-2] += value
        row[-1] += 1

    def lines(self, name: str, label_names: tuple) -> list:
        out = []
        for labels, row in sorted(self.counts.items()):
            base = ",".join(f'{k}="{v}"' for k, v in zip(label_names, labels))
            cum = 0
            for le, n in zip(self.buckets, row):
                cum += n
                out.append(f'{name}_bucket{{{base},le="{le:g}"}} {cum}')
            out.append(f'{name}_bucket{{{base},le="+Inf"}} {row[-1]}')
            out.append(f"{name}_sum{{{base}}} {row[-2]}")
            out.append(f"{name}_count{{{base}}} {row[-1]}")
        return out


class Metrics(SimulationListener):
    """Counts what the loop tells (a listener) and what the runner times (`cycle`)."""

    def __init__(self, sim, profile_of) -> None:
        self.sim, self.profile_of = sim, profile_of
        self.attempts: dict = {}               # (profile, result) -> n
        self.attempt_seconds = Histogram(ATTEMPT_BUCKETS)
        self.sli_seconds = Histogram(SLI_BUCKETS)
        self.preemptions = 0
        self.first_seen: dict = {}              # pod key -> monotonic time of its first enqueue

    def seen(self, key: str) -> None:
        self.first_seen.setdefault(key, time.monotonic())

    def cycle(self, key: str, seconds: float) -> None:
        sim = self.sim
        if key in sim.binding or key in sim.bound:
            result = "scheduled"
        else:
            out = sim.outcomes.get(key)
            result = "unschedulable" if out is not None and out.message and out.message.startswith("0/") else "error"
        labels = (self.profile_of(key), result)
        self.attempts[labels] = self.attempts.get(labels, 0) + 1
        self.attempt_seconds.observe(labels, seconds)

    def bound(self, key: str, node: str) -> None:
        t0 = self.first_seen.pop(key, None)
        out = self.sim.outcomes.get(key)
        if t0 is not None:
            self.sli_seconds.observe((str(out.attempts if out else 1),), time.monotonic() - t0)

    def preempted(self, key: str, node: str, victims: list) -> None:
        self.preemptions += 1

    def text(self) -> str:
        q = self.sim.queue
        out = ["# TYPE scheduler_schedule_attempts_total counter"]
        out += [f'scheduler_schedule_attempts_total{{profile="{p}",result="{r}"}} {n}'
                for (p, r), n in sorted(self.attempts.items())]
        out.append("# TYPE scheduler_scheduling_attempt_duration_seconds histogram")
        out += self.attempt_seconds.lines("scheduler_scheduling_attempt_duration_seconds", ("profile", "result"))
        out.append("# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram")
        out += self.sli_seconds.lines("scheduler_pod_scheduling_sli_duration_seconds", ("attempts",))
        out.append("# TYPE scheduler_pending_pods gauge")
        for name, pods in (("active", q.pods_in_active_q()), ("backoff", q.pods_in_backoff_q()),
                           ("unschedulable", q.unschedulable_pods())):
            out.append(f'scheduler_pending_pods{{queue="{name}"}} {len(pods)}')
        out.append("# TYPE scheduler_preemption_attempts_total counter")
        out.append(f"scheduler_preemption_attempts_total {self.preemptions}")
        return "\n".join(out) + "\n"


def serve(address: str, runner) -> ThreadingHTTPServer:
    """Serves /healthz (200 unless leadership was lost), /readyz (200 once the informers synced
    and scheduling started) and /metrics on `address` ("host:port"; port 0: any free port)."""
    host, _, port = address.rpartition(":")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):           # noqa: N802 (http.server's name)
            path = self.path.split("?")[0]
            if path == "/healthz":
                ok, body = not runner.lost.is_set(), "ok" if not runner.lost.is_set() else "leader election lost"
            elif path == "/readyz":
                ok = runner.scheduling.is_set()
                body = "ok" if ok else "not ready"
            elif path == "/metrics":
                with runner.lock:
                    ok, body = True, runner.metrics.text()
            else:
                self.send_error(404)
                return
            data = body.encode()
            self.send_response(200 if ok else 503)
            self.send_header("Content-Type", "text/plain; version=0.0.4" if path == "/metrics" else "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer((host or "127.0.0.1", int(port)), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="kschedcore-serve", daemon=True).start()
    return server
