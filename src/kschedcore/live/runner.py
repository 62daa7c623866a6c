"""`Runner`: kschedcore scheduling a live cluster -- kube-scheduler's informer loop feeding the
scheduling loop (`LiveScheduler`) and its asynchronous binding through the API server.

The informers (`Reflector`s) list and watch every kind kschedcore reads; their events go through
the handlers of kube-scheduler's eventhandlers.go (`handlers.py`); the loop schedules the pending
pods of the configuration's profiles once every informer has synced, binds them through the
`pods/binding` subresource from a pool of binders (the pod is assumed meanwhile; a failed
binding forgets and requeues it, the watch confirms a good one) and writes the rest back
(`status.py`)."""
from __future__ import annotations

import logging
import threading
import time

from ..errors import KSchedCoreError, UnsupportedError
from ..scheduler.live import LiveScheduler
from ..scheduler.loop import SimulationListener
from .client import ApiError, Client
from .handlers import POD_FIELD_SELECTOR, Handlers
from .leader import LeaderElector
from .metrics import Metrics
from .reflector import Reflector
from .resources import RESOURCES, resource
from .status import StatusWriter

__all__ = ["Runner"]

log = logging.getLogger("kschedcore.live")


class Runner:
    """Schedules a cluster's pending pods of `scheduler`'s profiles (a kschedcore Scheduler made
    empty, with the configuration): `start()`, `wait_synced()`, `stop()`. `binders` threads call
    the binding subresource; `events` False writes no events."""

    def __init__(self, client: Client, scheduler, *, binders: int = 16, events: bool = True,
                 kinds=None, event_client: Client | None = None, leader: LeaderElector | None = None) -> None:
        self.client, self.leader = client, leader
        #: set when leadership was lost: scheduling stopped, the process should end (kube-scheduler exits)
        self.lost = threading.Event()
        self.profiles = set(scheduler.profiles)
        self.reflectors: dict[str, Reflector] = {}
        kinds = [r for r in RESOURCES if kinds is None or r.kind in kinds]
        pods_store: dict = {}
        self.status = StatusWriter(client, pods_store, scheduler_name=next(iter(self.profiles)),
                                   events=events, event_client=event_client or client.with_own_limiter())
        listeners = Listeners(self.status)
        self.live = LiveScheduler(scheduler, binder=self.bind, binder_threads=binders, listener=listeners)
        # the status writer deletes preemption's victims through the API server at once; the
        # cache keeps each one, terminating, until its informer's delete
        self.live.sim.victim_deleter = _deleted_by_the_api
        self.metrics = Metrics(self.live.sim, self._profile_of)
        listeners.all.append(self.metrics)
        self.live.on_cycle = self.metrics.cycle
        self.handlers = Handlers(self.live, self.profiles, on_pending=self.metrics.seen)
        #: set once scheduling has started (the informers synced, leadership acquired): /readyz
        self.scheduling = threading.Event()
        for res in kinds:
            query = {"fieldSelector": POD_FIELD_SELECTOR} if res.kind == "Pod" else None
            r = Reflector(client, res, self.handlers.handler(res.kind), query=query)
            if res.kind == "Pod":
                r.store = pods_store
            self.reflectors[res.kind] = r
        self.bindings = self.bind_errors = 0       # bindings made, and refused, by this runner

    # ---- running ----------------------------------------------------------------------------------
    def start(self, sync_timeout: float = 120.0, stop: threading.Event | None = None) -> "Runner":
        """Starts the informers, waits until each has listed (WaitForCacheSync), with a leader
        elector waits to lead (or for `stop`), then schedules."""
        for r in self.reflectors.values():
            r.start()
        self.wait_synced(sync_timeout)
        attachments = self.reflectors.get("VolumeAttachment")
        if attachments is not None and attachments.store:
            self.stop()
            raise UnsupportedError(f"VolumeAttachment {next(iter(attachments.store))}", "",
                                   "VolumeAttachments (NodeVolumeLimits) are not implemented yet")
        if self.leader is not None:
            if not self.leader.acquire(stop or threading.Event()):
                return self                 # stopped while waiting to lead
            self.leader.keep(self._lost)
        self.live.start()
        self.scheduling.set()
        return self

    def _profile_of(self, key: str) -> str:
        pod = self.live.sim.pods.get(key)
        name = pod.scheduler_name if pod is not None else ""
        return name if name in self.profiles else next(iter(self.profiles))

    def _lost(self) -> None:
        """Leadership lost: no further cycle or binding starts (another instance may lead soon)."""
        self.lost.set()
        self.live.stop()

    def wait_synced(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for kind, r in self.reflectors.items():
            if not r.synced.wait(max(0.0, deadline - time.monotonic())):
                self.stop()
                raise KSchedCoreError(f"the {kind} informer did not sync within {timeout:g}s "
                                      f"(is the API server reachable, and may this user list {r.res.plural}?)")

    def stop(self, timeout: float = 30.0) -> None:
        """A clean stop: no new cycle; bindings in flight finish (none lost, none twice); the
        status writes submitted are sent; the watches close."""
        self.live.stop(timeout)
        self.status.close()
        if self.leader is not None:
            self.leader.release()
        for r in self.reflectors.values():
            r.stop()

    def wait(self, predicate, timeout: float, interval: float = 0.05) -> bool:
        """Polls predicate() under the loop's lock until it holds (True) or timeout passes."""
        deadline = time.monotonic() + timeout
        while True:
            with self.live.lock:
                if predicate():
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(interval)

    # ---- binding ------------------------------------------------------------------------------------
    def bind(self, pod, node: str):
        """The DefaultBinder's Bind: POST pods/binding. None, or the error message."""
        body = {"apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        path = resource("Pod").path(pod.namespace, pod.name, "binding")
        try:
            self.client.request("POST", path, body=body)
            with self.live.lock:
                self.bindings += 1
            return None
        except ApiError as e:
            with self.live.lock:
                self.bind_errors += 1
            self.status.bind_failed.add(pod.key)
            # as the DefaultBinder's error reads in the pod's condition (its StatusError's message)
            return f'running Bind plugin "DefaultBinder": {e.message if e.status else e}'

    @property
    def lock(self) -> threading.RLock:
        return self.live.lock


class Listeners(SimulationListener):
    """Tells several listeners what the loop tells one (the status writer's answer to `failed`
    counts)."""

    def __init__(self, first) -> None:
        self.all = [first]

    def attempted(self, key):
        for x in self.all:
            x.attempted(key)

    def failed(self, key, message):
        return [x.failed(key, message) for x in self.all][0]

    def bound(self, key, node):
        for x in self.all:
            x.bound(key, node)

    def preempted(self, key, node, victims):
        for x in self.all:
            x.preempted(key, node, victims)

    def skipped(self, key):
        for x in self.all:
            x.skipped(key)


def _deleted_by_the_api(key: str) -> None:
    """The loop's victim delete: made already by StatusWriter.preempted."""
