"""Cluster events and queueing hints: what moves a pod out of the unschedulable pool (§8.4).

Mirrors ClusterEvent, ActionType, EventResource, QueueingHint and ClusterEventWithHint of
k8s.io/kube-scheduler/framework, the matching rules and PodSchedulingPropertiesChange of
pkg/scheduler/framework (types.go, events.go), and buildQueueingHintMap of
pkg/scheduler/scheduler.go.

A queueing hint is a callable `hint(pod, old_obj, new_obj) -> QueueingHint`: `pod` is the
pending pod the plugin rejected, `old_obj` is None for an Add, `new_obj` None for a Delete. An
exception counts as Queue, as a Go hint's error does.
"""
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Callable


class ActionType(IntFlag):
    """A bit per kind of change; Update and All are unions (fwk.ActionType)."""
    Add = 1 << 0
    Delete = 1 << 1
    UpdateNodeAllocatable = 1 << 2
    UpdateNodeLabel = 1 << 3
    UpdateNodeTaint = 1 << 4          # taints or spec.unschedulable
    UpdateNodeCondition = 1 << 5
    UpdateNodeAnnotation = 1 << 6
    UpdatePodLabel = 1 << 7
    UpdatePodScaleDown = 1 << 8       # some resource request went down
    UpdatePodToleration = 1 << 9      # tolerations can only be added
    UpdatePodSchedulingGatesEliminated = 1 << 10
    UpdatePodGeneratedResourceClaim = 1 << 11
    All = (1 << 12) - 1
    Update = All & ~(Add | Delete)


class EventResource:
    """Resource names as kube-scheduler spells them (fwk.EventResource)."""
    Pod = "Pod"
    Node = "Node"
    PersistentVolume = "PersistentVolume"
    PersistentVolumeClaim = "PersistentVolumeClaim"
    CSINode = "storage.k8s.io/CSINode"
    CSIDriver = "storage.k8s.io/CSIDriver"
    VolumeAttachment = "storage.k8s.io/VolumeAttachment"
    CSIStorageCapacity = "storage.k8s.io/CSIStorageCapacity"
    StorageClass = "storage.k8s.io/StorageClass"
    ResourceClaim = "resource.k8s.io/ResourceClaim"
    ResourceSlice = "resource.k8s.io/ResourceSlice"
    DeviceClass = "resource.k8s.io/DeviceClass"
    WildCard = "*"
    # Incoming pod events only: plugins register Pod, which matches both.
    AssignedPod = "AssignedPod"
    UnschedulablePod = "UnschedulablePod"


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    resource: str
    action: int
    custom_label: str = ""

    @property
    def label(self) -> str:
        if self.custom_label:
            return self.custom_label
        try:
            action = ActionType(self.action).name or str(int(self.action))
        except ValueError:
            action = str(int(self.action))
        return f"{self.resource}{action}"

    @property
    def is_wildcard(self) -> bool:
        return self.resource == EventResource.WildCard and self.action == ActionType.All


def match_cluster_events(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """MatchClusterEvents: the incoming event is the registered one or more specific.

    A wildcard incoming event matches only a wildcard registration; the queue treats it
    separately (it forces every pod out)."""
    if registered.is_wildcard:
        return True
    return (_match_resource(registered.resource, incoming.resource)
            and registered.action & incoming.action != 0 and incoming.action <= registered.action)


def _match_resource(registered: str, incoming: str) -> bool:
    return (registered == EventResource.WildCard or registered == incoming
            or (registered == EventResource.Pod
                and incoming in (EventResource.AssignedPod, EventResource.UnschedulablePod)))


def match_any_cluster_event(incoming: ClusterEvent, registered: list) -> bool:
    return any(match_cluster_events(r, incoming) for r in registered)


# Special event labels (pkg/scheduler/framework/events.go).
SCHEDULE_ATTEMPT_FAILURE = "ScheduleAttemptFailure"
BACKOFF_COMPLETE = "BackoffComplete"
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"
FORCE_ACTIVATE = "ForceActivate"
UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"

EventAssignedPodAdd = ClusterEvent(EventResource.AssignedPod, ActionType.Add)
EventAssignedPodUpdate = ClusterEvent(EventResource.AssignedPod, ActionType.Update)
EventAssignedPodDelete = ClusterEvent(EventResource.AssignedPod, ActionType.Delete)
EventUnscheduledPodAdd = ClusterEvent(EventResource.UnschedulablePod, ActionType.Add)
EventUnscheduledPodUpdate = ClusterEvent(EventResource.UnschedulablePod, ActionType.Update)
EventUnscheduledPodDelete = ClusterEvent(EventResource.UnschedulablePod, ActionType.Delete)
EventUnschedulableTimeout = ClusterEvent(EventResource.WildCard, ActionType.All, UNSCHEDULABLE_TIMEOUT)
EventForceActivate = ClusterEvent(EventResource.WildCard, ActionType.All, FORCE_ACTIVATE)
EventNodeAdd = ClusterEvent(EventResource.Node, ActionType.Add)
EventNodeDelete = ClusterEvent(EventResource.Node, ActionType.Delete)


class QueueingHint(IntEnum):
    QueueSkip = 0
    Queue = 1


QueueSkip = QueueingHint.QueueSkip
Queue = QueueingHint.Queue

HintFn = Callable[[object, object, object], QueueingHint]


def always_queue(pod, old_obj, new_obj) -> QueueingHint:
    """defaultQueueingHintFn: used when a plugin registers an event without a hint."""
    return Queue


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: HintFn | None = None


def with_hint(resource: str, action: int, hint: HintFn | None = None) -> ClusterEventWithHint:
    """A plugin's registration of one event (None: always Queue)."""
    return ClusterEventWithHint(ClusterEvent(resource, action), hint)


@dataclass(frozen=True, slots=True)
class QueueingHintFunction:
    plugin_name: str
    hint: HintFn


def unroll_wildcard_resource() -> list:
    """The events of a plugin without EnqueueExtensions: everything, always Queue."""
    resources = (EventResource.Pod, EventResource.Node, EventResource.PersistentVolume,
                 EventResource.PersistentVolumeClaim, EventResource.CSINode, EventResource.CSIDriver,
                 EventResource.CSIStorageCapacity, EventResource.StorageClass,
                 EventResource.ResourceClaim, EventResource.DeviceClass)
    return [ClusterEventWithHint(ClusterEvent(r, ActionType.All)) for r in resources]


class QueueingHintMap(dict):
    """ClusterEvent -> [QueueingHintFunction] (one profile's)."""


def build_queueing_hint_map(registrations: dict) -> QueueingHintMap:
    """buildQueueingHintMap. registrations: plugin name -> [ClusterEventWithHint], or None for
    a plugin without EnqueueExtensions (it then hears every event). An empty list registers
    nothing: pods it rejects move only when they are updated themselves or time out."""
    out = QueueingHintMap()
    for name, events in registrations.items():
        if events is None:
            events = unroll_wildcard_resource()
        node_add = node_taint = False
        for e in events:
            out.setdefault(e.event, []).append(QueueingHintFunction(name, e.hint or always_queue))
            if e.event.resource == EventResource.Node:
                node_add |= bool(e.event.action & ActionType.Add)
                node_taint |= bool(e.event.action & ActionType.UpdateNodeTaint)
        if node_add and not node_taint:
            # kubernetes#109437: Node/Add implies UpdateNodeTaint, always Queue.
            taint = ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint)
            out.setdefault(taint, []).append(QueueingHintFunction(name, always_queue))
    return out


# --- which update events a pod or node change is (PodSchedulingPropertiesChange) -------------

def pod_scheduling_properties_change(new_pod, old_pod) -> list:
    """The UpdatePodXYZ events of a pod update, or the general Update when none applies.

    Works on kschedcore.objects.pod.Pod. Scale-down compares the parsed integer requests
    (millicores, bytes rounded up), not Quantity.MilliValue of every resource name."""
    resource = EventResource.AssignedPod if new_pod.node_name else EventResource.UnschedulablePod
    actions = [a for a, changed in (
        (ActionType.UpdatePodLabel, new_pod.labels != old_pod.labels),
        (ActionType.UpdatePodScaleDown, _scaled_down(new_pod.requests, old_pod.requests)),
        (ActionType.UpdatePodSchedulingGatesEliminated,
         not scheduling_gates(new_pod) and bool(scheduling_gates(old_pod))),
        (ActionType.UpdatePodToleration, len(new_pod.tolerations) != len(old_pod.tolerations)),
        (ActionType.UpdatePodGeneratedResourceClaim, _claim_statuses(new_pod) != _claim_statuses(old_pod)),
    ) if changed]
    return [ClusterEvent(resource, a) for a in actions] or [ClusterEvent(resource, ActionType.Update)]


def _scaled_down(new: dict, old: dict) -> bool:
    return any(name not in new or new[name] < amount for name, amount in old.items())


def scheduling_gates(pod) -> list:
    """Names of spec.schedulingGates, read from the raw manifest."""
    raw = getattr(pod, "raw", None) or {}
    gates = (raw.get("spec") or {}).get("schedulingGates") or []
    return [g.get("name", "") if isinstance(g, dict) else str(g) for g in gates]


def _claim_statuses(pod):
    status = (getattr(pod, "raw", None) or {}).get("status") or {}
    return status.get("resourceClaimStatuses"), status.get("extendedResourceClaimStatus")


def node_scheduling_properties_change(new_node, old_node) -> list:
    """NodeSchedulingPropertiesChange on kschedcore.objects.node.Node (may repeat
    UpdateNodeTaint, as upstream does when both spec.unschedulable and taints change)."""
    def raw_meta(node, field):
        return ((node.raw or {}).get("metadata") or {}).get(field) or {}

    def conditions(node):
        conds = ((node.raw or {}).get("status") or {}).get("conditions") or []
        return {c.get("type"): c.get("status") for c in conds if isinstance(c, dict)}

    actions = [a for a, changed in (
        (ActionType.UpdateNodeTaint, old_node.unschedulable and not new_node.unschedulable),
        (ActionType.UpdateNodeAllocatable, (new_node.allocatable, new_node.allowed_pods)
         != (old_node.allocatable, old_node.allowed_pods)),
        (ActionType.UpdateNodeLabel, new_node.labels != old_node.labels),
        (ActionType.UpdateNodeTaint, new_node.taints != old_node.taints),
        (ActionType.UpdateNodeCondition, conditions(new_node) != conditions(old_node)),
        (ActionType.UpdateNodeAnnotation, raw_meta(new_node, "annotations") != raw_meta(old_node, "annotations")),
    ) if changed]
    return [ClusterEvent(EventResource.Node, a) for a in actions]
