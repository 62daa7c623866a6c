"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's `leaderelection` (the
algorithm kube-scheduler runs): acquire when the lease is free or its holder has not renewed it
for a lease duration (measured on this clock from when this elector last saw the record change,
so clocks need not agree), renew every retry period, and give up leadership when renewing fails
for the renew deadline -- before any other candidate may take the lease over."""
from __future__ import annotations

import logging
import random
import threading
import time
from datetime import datetime, timezone

from .client import ApiError, Client, path_of

__all__ = ["LeaderElector"]

log = logging.getLogger("kschedcore.live")


def _micro_time() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    """`acquire(stop)` blocks until this candidate leads (True) or `stop` is set (False);
    `keep(on_lost)` renews from a thread and calls `on_lost()` once renewing has failed for
    `renew_deadline`; `release()` frees the lease on a clean stop. kube-scheduler's defaults:
    15 s, 10 s, 2 s."""

    def __init__(self, client: Client, namespace: str, name: str, identity: str, *,
                 lease_duration: float = 15.0, renew_deadline: float = 10.0, retry_period: float = 2.0) -> None:
        if not lease_duration > renew_deadline > retry_period > 0:
            raise ValueError("leader election needs leaseDuration > renewDeadline > retryPeriod > 0")
        self.client, self.identity = client, identity
        self.path = f"/apis/coordination.k8s.io/v1/namespaces/{path_of(namespace)}/leases"
        self.namespace, self.name = namespace, name
        self.lease_duration, self.renew_deadline, self.retry_period = lease_duration, renew_deadline, retry_period
        self.leading = threading.Event()
        self._observed: tuple | None = None    # (holder, renewTime, transitions) as last seen
        self._observed_at = 0.0                 # when it last changed, on this clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ---- one try -------------------------------------------------------------------------------
    def try_acquire_or_renew(self) -> bool:
        now = time.monotonic()
        try:
            lease = self._call("GET", f"{self.path}/{path_of(self.name)}").json()
        except ApiError as e:
            if e.status != 404:
                raise
            spec0 = self._spec(0)
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace}, "spec": spec0}
            self._call("POST", self.path, body)
            self._saw((self.identity, spec0["renewTime"], 0), now)
            return True
        spec = lease.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        seen = (holder, spec.get("renewTime"), spec.get("leaseTransitions") or 0)
        if seen != self._observed:
            self._saw(seen, now)
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        if holder and holder != self.identity and now < self._observed_at + duration:
            return False                        # held, and renewed recently enough
        transitions = int(spec.get("leaseTransitions") or 0) + (holder != self.identity)
        new_spec = self._spec(transitions)
        if holder == self.identity and spec.get("acquireTime"):
            new_spec["acquireTime"] = spec["acquireTime"]
        lease["spec"] = new_spec                # a PUT with the resourceVersion read: 409 if it moved
        self._call("PUT", f"{self.path}/{path_of(self.name)}", lease)
        self._saw((self.identity, new_spec["renewTime"], transitions), now)
        return True

    def _call(self, method: str, path: str, body=None):
        """A request that gives up after a retry period: a try must end well before the renew
        deadline, whatever the API server does (client-go bounds it by the deadline)."""
        return self.client.request(method, path, body=body, timeout=self.retry_period)

    def _spec(self, transitions: int) -> dict:
        t = _micro_time()
        return {"holderIdentity": self.identity, "leaseDurationSeconds": int(self.lease_duration),
                "acquireTime": t, "renewTime": t, "leaseTransitions": transitions}

    def _saw(self, record: tuple, at: float) -> None:
        self._observed, self._observed_at = record, at

    def _try(self) -> bool:
        try:
            return self.try_acquire_or_renew()
        except ApiError as e:
            if e.status != 409:
                log.warning("leader election: %s", e)
            return False

    # ---- the loops --------------------------------------------------------------------------------
    def acquire(self, stop: threading.Event) -> bool:
        while not stop.is_set():
            if self._try():
                self.leading.set()
                log.info("leader election: %s leads %s/%s", self.identity, self.namespace, self.name)
                return True
            stop.wait(self.retry_period * (1 + random.random() * 1.2))   # client-go's JitterFactor
        return False

    def keep(self, on_lost) -> None:
        def run():
            last = time.monotonic()
            while not self._stop.wait(self.retry_period):
                if self._try():
                    last = time.monotonic()
                elif time.monotonic() - last >= self.renew_deadline:
                    self.leading.clear()
                    log.error("leader election lost: %s could not renew %s/%s", self.identity,
                              self.namespace, self.name)
                    on_lost()
                    return
        self._thread = threading.Thread(target=run, name="kschedcore-leader", daemon=True)
        self._thread.start()

    def release(self) -> None:
        """Stops renewing and, while leading, frees the lease for the next candidate at once."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(self.retry_period + 5)
        if not self.leading.is_set():
            return
        self.leading.clear()
        try:
            lease = self._call("GET", f"{self.path}/{path_of(self.name)}").json()
            if (lease.get("spec") or {}).get("holderIdentity") == self.identity:
                t = _micro_time()
                lease["spec"].update(holderIdentity="", leaseDurationSeconds=1, renewTime=t, acquireTime=t)
                self._call("PUT", f"{self.path}/{path_of(self.name)}", lease)
        except ApiError as e:
            log.warning("leader election: releasing: %s", e)
