"""What kube-scheduler writes back to the API server besides bindings: a failed pod's
PodScheduled condition and status.nominatedNodeName (`updatePod` in schedule_one.go: only when
either changed), preemption's victims (the DisruptionTarget condition, then the delete), and
events (`Scheduled`, `FailedScheduling`, `Preempted`) through events.k8s.io/v1.

The loop tells `StatusWriter` (a SimulationListener) what happened; the writes go out on a pool
of threads, paced by the client, so the scheduling thread never waits on the API server."""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

from ..scheduler.loop import SimulationListener
from .client import ApiError, Client, path_of
from .resources import resource

__all__ = ["StatusWriter", "pod_scheduled_message"]

log = logging.getLogger("kschedcore.live")
STRATEGIC = "application/strategic-merge-patch+json"
#: events waiting to be sent at most (client-go's event broadcaster's queue length)
EVENT_QUEUE = 1000


def now_rfc3339(micro: bool = False) -> str:
    t = datetime.now(timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if micro else t.strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_scheduled_message(obj: dict) -> tuple[str, str]:
    """A pod object's PodScheduled condition: (status, message); ("", "") when it has none."""
    for c in (obj.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == "PodScheduled":
            return str(c.get("status") or ""), str(c.get("message") or "")
    return "", ""


class StatusWriter(SimulationListener):
    """Writes what the loop decided into the API server. `objects` is the pods' informer store
    (key -> the latest object seen), which tells what the pod carries already; `scheduler_name`
    is the reporting controller of the events. `events` False: no events."""

    def __init__(self, client: Client, objects: dict, *, scheduler_name: str = "default-scheduler",
                 threads: int = 4, events: bool = True, event_client: Client | None = None) -> None:
        self.client, self.objects = client, objects
        self.event_client = event_client or client
        self.scheduler_name, self.events = scheduler_name, events
        self.bind_failed: set = set()       # keys whose last binding failed: reason SchedulerError
        self._nominated: dict = {}          # key -> node nominated since the last write
        self._written: dict = {}            # key -> the message this writer last wrote
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="kschedcore-status")
        self._event_pool = ThreadPoolExecutor(2, thread_name_prefix="kschedcore-events")
        self._events_queued = self.events_dropped = 0
        self._lock = threading.Lock()
        self.errors = 0

    # ---- the loop's listener ------------------------------------------------------------------
    def failed(self, key: str, message: str) -> bool:
        obj = self.objects.get(key)
        if obj is None or not message:
            return False
        reason = "SchedulerError" if key in self.bind_failed else "Unschedulable"
        self.bind_failed.discard(key)
        status, current = pod_scheduled_message(obj)
        nominated = self._nominated.pop(key, None)
        if (status, current) != ("False", message) and self._written.get(key) != message or nominated:
            self._written[key] = message
            self._submit(self._patch_condition, obj, reason, message, status, nominated)
        self._submit_event(obj, "Warning", "FailedScheduling", "Scheduling", message)
        return False        # the real write comes back through the pods' watch

    def bound(self, key: str, node: str) -> None:
        self._written.pop(key, None)
        obj = self.objects.get(key)
        if obj is not None:
            meta = obj["metadata"]
            self._submit_event(obj, "Normal", "Scheduled", "Binding",
                               f"Successfully assigned {meta.get('namespace')}/{meta['name']} to {node}")

    def preempted(self, key: str, node: str, victims: list) -> None:
        self._nominated[key] = node
        preemptor = self.objects.get(key)
        uid = ((preemptor or {}).get("metadata") or {}).get("uid", "")
        for v in victims:
            obj = self.objects.get(v)
            if obj is not None:
                self._submit(self._evict, obj, uid, node)

    def close(self) -> None:
        """Waits for the writes submitted so far (events still queued are dropped)."""
        self._pool.shutdown(wait=True)
        self._event_pool.shutdown(wait=True, cancel_futures=True)

    # ---- the writes -----------------------------------------------------------------------------
    def _submit(self, fn, *args) -> None:
        try:
            self._pool.submit(self._guarded, fn, *args)
        except RuntimeError:        # closed: the process is stopping
            pass

    def _submit_event(self, *args) -> None:
        """An event, unless EVENT_QUEUE are waiting already (client-go's broadcaster drops them too)."""
        if not self.events:
            return
        with self._lock:
            if self._events_queued >= EVENT_QUEUE:
                self.events_dropped += 1
                return
            self._events_queued += 1
        try:
            self._event_pool.submit(self._guarded, self._event, *args)
        except RuntimeError:
            pass

    def _guarded(self, fn, *args) -> None:
        try:
            fn(*args)
        except ApiError as e:
            if e.status != 404:     # the pod is gone: nothing to write
                with self._lock:
                    self.errors += 1
                log.warning("%s", e)
        except Exception:           # a bug here must not vanish into the pool's future
            with self._lock:
                self.errors += 1
            log.exception("writing %s", getattr(fn, "__name__", fn))

    def _patch_condition(self, obj, reason, message, status, nominated) -> None:
        meta = obj["metadata"]
        cond = {"type": "PodScheduled", "status": "False", "reason": reason, "message": message,
                "lastProbeTime": None}
        if status != "False":
            cond["lastTransitionTime"] = now_rfc3339()
        patch: dict = {"status": {"conditions": [cond]}}
        if nominated:
            patch["status"]["nominatedNodeName"] = nominated
        path = resource("Pod").path(meta["namespace"], meta["name"], "status")
        self.client.request("PATCH", path, body=patch, content_type=STRATEGIC)

    def _evict(self, obj, preemptor_uid, node) -> None:
        meta = obj["metadata"]
        pods = resource("Pod")
        cond = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                "message": f"{self.scheduler_name}: preempting to accommodate a higher priority pod",
                "lastTransitionTime": now_rfc3339()}
        self.client.request("PATCH", pods.path(meta["namespace"], meta["name"], "status"),
                            body={"status": {"conditions": [cond]}}, content_type=STRATEGIC)
        self.client.request("DELETE", pods.path(meta["namespace"], meta["name"]), body={"kind": "DeleteOptions", "apiVersion": "v1",
                                                  "preconditions": {"uid": meta.get("uid")}})
        self._submit_event(obj, "Normal", "Preempted", "Preempting", f"Preempted by pod {preemptor_uid} on node {node}")

    def _event(self, obj, type_, reason, action, note) -> None:
        with self._lock:
            self._events_queued -= 1
        meta = obj["metadata"]
        ns = meta.get("namespace") or "default"
        body = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": ns},
                "eventTime": now_rfc3339(micro=True), "reportingController": self.scheduler_name,
                "reportingInstance": self.scheduler_name, "action": action, "reason": reason,
                "type": type_, "note": note[:1024],
                "regarding": {"kind": "Pod", "apiVersion": "v1", "namespace": ns, "name": meta["name"],
                              "uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion")}}
        self.event_client.request("POST", f"/apis/events.k8s.io/v1/namespaces/{path_of(ns)}/events", body=body)
