"""The informers' event handlers (kube-scheduler's eventhandlers.go) on a `LiveScheduler`.

Assigned pods go to the cache, the pending pods of this scheduler's profiles to the queue; a
pod bound by someone else leaves the queue for the cache; an update of a pod this scheduler
assumed (the watch confirming its binding, or its own status write) changes nothing. The pods'
informer watches the pods that are not Succeeded or Failed (kube-scheduler's field selector), so
a pod that ends is heard as deleted. Nodes and the other kinds are applied as a replay applies
them (`kschedcore replay` of the recorded stream decides the same)."""
from __future__ import annotations

import logging

from ..errors import UnsupportedError
from ..objects.resource import RESOURCE_KINDS
from ..scheduler.dra_events import resource_object

__all__ = ["Handlers", "POD_FIELD_SELECTOR", "pod_key"]

log = logging.getLogger("kschedcore.live")

#: kinds whose objects a delete takes out of the cache (besides PDBs and resource.k8s.io's)
REMOVABLE = ("Service", "ReplicaSet", "StatefulSet", "ReplicationController")
#: kube-scheduler's pod informer: terminal pods are not watched
POD_FIELD_SELECTOR = "status.phase!=Succeeded,status.phase!=Failed"


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def pod_key(obj: dict) -> str:
    """A namespaced object's "namespace/name" as the scheduler keys pods (no namespace: default)."""
    meta = _meta(obj)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


class Handlers:
    """One handler per kind for the reflectors: `handler(kind)(type, obj)`, each change applied
    under the loop's lock."""

    def __init__(self, live, profiles, on_pending=None) -> None:
        self.live, self.sim = live, live.sim
        self.on_pending = on_pending        # on_pending(key): a pending pod of these profiles arrived
        self.profiles = set(profiles)
        self.relabelled: set = set()        # bound pods whose new labels were not applied (told once)

    def handler(self, kind: str):
        if kind == "Pod":
            fn = self.on_pod
        elif kind == "Node":
            fn = self.on_node
        elif kind == "VolumeAttachment":
            fn = self.on_volume_attachment
        else:
            def fn(typ, obj, kind=kind):
                self.on_object(kind, typ, obj)

        def locked(typ, obj):
            with self.live.lock:
                fn(typ, obj)
        return locked

    # ---- pods --------------------------------------------------------------------------------------
    def responsible(self, obj: dict) -> bool:
        return ((obj.get("spec") or {}).get("schedulerName") or "default-scheduler") in self.profiles

    def on_pod(self, typ: str, obj: dict) -> None:
        sim = self.sim
        key = pod_key(obj)
        terminating = sim.sched.handle.terminating
        if typ == "DELETED":
            terminating.discard(key)
            sim.delete_pod(key, missing_ok=True)
            return
        node = (obj.get("spec") or {}).get("nodeName")
        if node and terminating_by_preemption(obj):
            terminating.add(key)            # DefaultPreemption waits for it (PodEligibleToPreemptOthers)
        if key in sim.binding or key in sim.bound:
            if node and key in sim.bound and node != sim.bound[key]:
                sim.delete_pod(key)             # bound elsewhere than the cache holds: taken anew
                sim.add_pod(obj)
            elif (key in sim.bound and key not in self.relabelled
                  and ((obj.get("metadata") or {}).get("labels") or {}) != sim.pods[key].labels):
                self.relabelled.add(key)
                log.warning("pod %s: relabelling a bound pod is not applied yet (its old labels still count)", key)
            # else: the watch confirming this scheduler's binding, or its own status write
            return
        known = key in sim.pods
        if node:                                # assigned by someone else (another scheduler)
            if known:
                sim.delete_pod(key)             # leaves the queue
            sim.add_pod(obj)
            return
        if not self.responsible(obj):
            return
        obj = _without_nomination(obj)
        if known:
            sim.update_pod(obj)                 # a pending pod changed (gates, its status write)
        else:
            sim.add_pod(obj)
            if self.on_pending is not None:
                self.on_pending(key)

    # ---- nodes and the rest -------------------------------------------------------------------------
    def on_node(self, typ: str, obj: dict) -> None:
        sim = self.sim
        name = _meta(obj).get("name")
        known = name in sim.sched.cache.table.row_of
        if typ == "DELETED":
            sim.remove_node(name, missing_ok=True)
        elif known:
            sim.update_node(obj)
        else:
            sim.add_node(obj)

    def on_object(self, kind: str, typ: str, obj: dict) -> None:
        sched = self.sim.sched
        if kind in RESOURCE_KINDS:
            resource_object(self.sim, typ, kind, obj, f"{kind} {pod_key(obj)}")
        elif kind == "Namespace":
            if typ != "DELETED":
                sched.add_namespace(obj)
        elif typ == "DELETED":
            meta = _meta(obj)
            if kind == "PodDisruptionBudget":
                sched.cache.pdbs.pop(pod_key(obj), None)
            elif kind not in REMOVABLE:
                raise UnsupportedError(f"{kind} {pod_key(obj)}", "", f"deleting a {kind} is not applied yet")
            else:
                sched.remove_object(kind, meta.get("namespace") or "", meta.get("name") or "")
        else:
            sched.add_object(obj, f"{kind} {pod_key(obj)}")

    def on_volume_attachment(self, typ: str, obj: dict) -> None:
        if typ != "DELETED":
            raise UnsupportedError(f"VolumeAttachment {_meta(obj).get('name')}", "",
                                   "VolumeAttachments (NodeVolumeLimits) are not implemented yet")


def terminating_by_preemption(obj: dict) -> bool:
    """Being deleted (metadata.deletionTimestamp) with the DisruptionTarget condition a
    preemption writes (podTerminatingByPreemption)."""
    if not (obj.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return any(c.get("type") == "DisruptionTarget" and c.get("status") == "True"
               and c.get("reason") == "PreemptionByScheduler"
               for c in (obj.get("status") or {}).get("conditions") or () if isinstance(c, dict))


def _without_nomination(obj: dict) -> dict:
    """A pending pod without status.nominatedNodeName: this scheduler's own nominations live
    in its nominator (the write comes back through the watch); one it did not make is not
    taken over (a restarted scheduler nominates anew where preemption is still needed)."""
    status = obj.get("status")
    if not isinstance(status, dict) or "nominatedNodeName" not in status:
        return obj
    return {**obj, "status": {k: v for k, v in status.items() if k != "nominatedNodeName"}}
