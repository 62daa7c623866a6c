"""The loop's side of Dynamic Resource Allocation: resource.k8s.io objects that change
become cluster events, as kube-scheduler's informers deliver them to the scheduling queue."""
from ..framework.cluster_events import ActionType, ClusterEvent, EventResource


def resource_object(sim, typ: str, kind: str, raw: dict, where: str = "") -> None:
    """A resource.k8s.io object added, changed or deleted (a watch event's type), heard as a
    cluster event: DeviceClass and ResourceSlice adds and updates, claim changes."""
    dra = sim.sched.cache.dra
    if typ == "DELETED":
        meta = (raw.get("metadata") or {}) if isinstance(raw, dict) else {}
        dra.remove(kind, meta.get("namespace") or "", meta.get("name") or "")
    else:
        dra.add(raw, where)
        if kind in ("DeviceClass", "ResourceSlice"):
            action = ActionType.Add if typ == "ADDED" else ActionType.Update
            resource = EventResource.DeviceClass if kind == "DeviceClass" else EventResource.ResourceSlice
            sim.queue.move_all_to_active_or_backoff_queue(ClusterEvent(resource, action), None, raw)
    claim_events(sim)


CLAIM_ADD = ClusterEvent(EventResource.ResourceClaim, ActionType.Add)
CLAIM_UPDATE = ClusterEvent(EventResource.ResourceClaim, ActionType.Update)


def claim_events(sim) -> None:
    """The ResourceClaim adds and updates since the last call, as cluster events."""
    log = sim.sched.cache.dra.log
    while log:
        old, new = log.pop(0)
        sim.queue.move_all_to_active_or_backoff_queue(CLAIM_ADD if old is None else CLAIM_UPDATE, old, new)
