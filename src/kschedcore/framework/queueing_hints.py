"""The in-tree plugins' EventsToRegister and queueing hints (semantics §8.4), v1.34.1 with
SchedulerQueueingHints on (locked on in 1.34).

Hints read kschedcore.objects Pods and Nodes. Ported from the upstream hints:
NodeUnschedulable, NodeName, TaintToleration, NodeAffinity (with addedAffinity), NodePorts,
NodeResourcesFit (on the parsed integer requests and allocatable), InterPodAffinity,
SchedulingGates, DefaultPreemption, and PodTopologySpread for pods with explicit
spec.topologySpreadConstraints.

Conservative (always Queue for the events they register, where upstream may answer
QueueSkip): PodTopologySpread for a pod without explicit constraints (its constraints would
come from the profile's default constraints and Services/controllers); every hint of
VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone and DynamicResources.
Conservative hints only cost retries, never a lost pod.
"""
from ..objects.fields import parse_go_int64
from .cluster_events import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource, Queue,
                             QueueSkip, build_queueing_hint_map)

A = ActionType
R = EventResource
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
METADATA_NAME = "metadata.name"


def _ev(resource, action, hint=None):
    return ClusterEventWithHint(ClusterEvent(resource, action), hint)


def _pick(old_obj, new_obj):
    """The object that is, or was, there (util.As)."""
    return new_obj if new_obj is not None else old_obj


# --- NodeUnschedulable ---------------------------------------------------------------------

def node_unschedulable_after_node_change(pod, old, new):
    became = old is not None and old.unschedulable and not new.unschedulable
    return Queue if became or (old is None and not new.unschedulable) else QueueSkip


def node_unschedulable_after_pod_toleration(pod, old, new):
    if new.uid != pod.uid:
        return QueueSkip
    tolerated = any(t.tolerates(UNSCHEDULABLE_TAINT_KEY, "", "NoSchedule") for t in new.tolerations)
    return Queue if tolerated else QueueSkip


# --- TaintToleration -----------------------------------------------------------------------

def _untolerated(taints, tolerations) -> bool:
    """FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc found one."""
    return any(t.effect in ("NoSchedule", "NoExecute")
               and not any(tol.tolerates(t.key, t.value, t.effect) for tol in tolerations)
               for t in taints)


def taint_toleration_after_node_change(pod, old, new):
    was = True if old is None else _untolerated(old.taints, pod.tolerations)
    return Queue if was and not _untolerated(new.taints, pod.tolerations) else QueueSkip


def own_pod_updated(pod, old, new):
    """TaintToleration's toleration hint and SchedulingGates' gate hint: the pod itself."""
    return Queue if new.uid == pod.uid else QueueSkip


# --- NodeAffinity --------------------------------------------------------------------------

class _ParseError(Exception):
    """A node selector term kube-scheduler cannot parse: its hint answers Queue."""


def _label_requirement_matches(req, labels) -> bool:
    present = req.key in labels
    if req.operator == "In":
        return present and labels[req.key] in req.values
    if req.operator == "NotIn":
        return not present or labels[req.key] not in req.values
    if req.operator == "Exists":
        return present
    if req.operator == "DoesNotExist":
        return not present
    have = parse_go_int64(labels[req.key]) if present else None
    want = parse_go_int64(req.values[0]) if len(req.values) == 1 else None
    if have is None or want is None:
        return False
    return have > want if req.operator == "Gt" else have < want


def _term_matches(term, node) -> bool:
    if not term.parses:
        raise _ParseError
    if not all(_label_requirement_matches(r, node.labels) for r in term.expressions):
        return False
    if not term.fields or not node.name:
        return True
    got = {METADATA_NAME: node.name}
    return all((got.get(r.key, "") == r.values[0]) == (r.operator == "In") for r in term.fields)


def _terms_match(terms, node) -> bool:
    """LazyErrorNodeSelector.Match: empty terms are dropped; a parse error counts only if no
    other term matches."""
    failed = False
    for term in terms:
        if term.empty:
            continue
        try:
            if _term_matches(term, node):
                return True
        except _ParseError:
            failed = True
    if failed:
        raise _ParseError
    return False


def required_node_affinity_matches(pod, node) -> bool:
    """GetRequiredNodeAffinity(pod).Match(node); raises _ParseError like Match's error."""
    if pod.node_selector and any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    return pod.required_terms is None or _terms_match(pod.required_terms, node)


def node_affinity_hint(added_required=None):
    """NodeAffinity's node hint; added_required: NodeAffinityArgs.addedAffinity's required
    node selector terms (None: no added affinity)."""
    def hint(pod, old, new):
        if added_required is not None and not _matches_or_error(added_required, new):
            return QueueSkip
        try:
            if not required_node_affinity_matches(pod, new):
                return QueueSkip
            if old is None:
                return Queue
            return QueueSkip if required_node_affinity_matches(pod, old) else Queue
        except _ParseError:
            return Queue
    return hint


def _matches_or_error(terms, node) -> bool:
    try:
        return _terms_match(terms, node)
    except _ParseError:
        return False   # NodeSelector.Match ignores errors (reported at start-up)


# --- NodePorts -----------------------------------------------------------------------------

def _ports_conflict(want, used) -> bool:
    """HostPortInfo.CheckConflict of each wanted port against the used ones."""
    return any(w.protocol == u.protocol and w.port == u.port
               and (w.ip == "0.0.0.0" or u.ip == "0.0.0.0" or w.ip == u.ip)
               for w in want for u in used)


def node_ports_after_pod_deleted(pod, old, new):
    if not old.node_name and not old.nominated_node_name:
        return QueueSkip
    return Queue if _ports_conflict(pod.host_ports, old.host_ports) else QueueSkip


# --- NodeResourcesFit ----------------------------------------------------------------------

def _fits_empty_node(pod, node) -> bool:
    """isFit: the pod alone on the node (Fits on a NodeInfo with only the node)."""
    if node.allowed_pods < 1:
        return False
    return all(amount <= 0 or amount <= node.allocatable.get(name, 0)
               for name, amount in pod.requests.items())


def _requested_resource_increased(pod, old, new) -> bool:
    """haveAnyRequestedResourcesIncreased."""
    if new.allowed_pods > old.allowed_pods:
        return True
    return any(amount > 0 and new.allocatable.get(name, 0) > old.allocatable.get(name, 0)
               for name, amount in pod.requests.items())


def fit_after_node_change(pod, old, new):
    if not _fits_empty_node(pod, new):
        return QueueSkip
    if old is None:
        return Queue
    return Queue if _requested_resource_increased(pod, old, new) else QueueSkip


def fit_after_pod_event(pod, old, new):
    if new is None:
        return QueueSkip if not old.node_name and not old.nominated_node_name else Queue
    return Queue if _scaled_down_for(pod, old, new) else QueueSkip


def _scaled_down_for(target, old, new) -> bool:
    """isSchedulableAfterPodScaleDown."""
    if new.uid == target.uid:
        return True
    if not new.node_name:
        return False
    return any(amount != 0 and old.requests.get(name, 0) > new.requests.get(name, 0)
               for name, amount in target.requests.items())


# --- InterPodAffinity ----------------------------------------------------------------------

def _matches_all(terms, pod) -> bool:
    """podMatchesAllAffinityTerms: the namespace selector sees no namespace labels here."""
    return bool(terms) and all(t.matches(pod.labels, pod.namespace, None) for t in terms)


def interpod_after_pod_change(pod, old, new):
    if (new is not None and not new.node_name) or (old is not None and not old.node_name):
        return QueueSkip
    terms, anti = pod.pod_affinity.required_affinity, pod.pod_affinity.required_anti
    if new is not None and old is not None:
        if not _matches_all(terms, old) and _matches_all(terms, new):
            return Queue
        return Queue if _matches_all(anti, old) and not _matches_all(anti, new) else QueueSkip
    if new is not None:
        return Queue if _matches_all(terms, new) else QueueSkip
    return Queue if _matches_all(anti, old) else QueueSkip


def interpod_after_node_change(pod, old, new):
    for term in pod.pod_affinity.required_affinity:
        key = term.topology_key
        if old is None:
            if key in new.labels:
                return Queue
        elif key in new.labels and old.labels.get(key) != new.labels[key]:
            return Queue   # the key appeared, or its value changed
    for term in pod.pod_affinity.required_anti:
        key = term.topology_key
        if old is None:
            return Queue
        if key in old.labels and old.labels[key] != new.labels.get(key):
            return Queue   # the key disappeared, or its value changed
    return QueueSkip


# --- PodTopologySpread ---------------------------------------------------------------------

class _Constraint:
    """A DoNotSchedule constraint with matchLabelKeys merged into its selector."""
    __slots__ = ("topology_key", "selector", "extra", "taints_honor")

    def __init__(self, c, pod_labels):
        self.topology_key = c["topologyKey"]
        self.selector = c["selector"]
        self.taints_honor = c["nodeTaintsPolicy"] == "Honor"
        extra = {k: pod_labels[k] for k in c["matchLabelKeys"] if k in pod_labels}
        # mergeLabelSetWithSelector leaves a nil (Nothing) selector as it is
        self.extra = extra if self.selector is not None else {}

    def matches(self, labels) -> bool:
        if self.selector is None:
            return False
        return (all(labels.get(k) == v for k, v in self.extra.items())
                and self.selector.matches(labels))


def _hard_constraints(pod):
    """getConstraints, or None where the profile's defaults would decide (conservative)."""
    if not pod.topology_spread:
        return None
    return [_Constraint(c, pod.labels) for c in pod.topology_spread
            if c["whenUnsatisfiable"] == "DoNotSchedule"]


def spread_after_pod_change(pod, old, new):
    for p in (new, old):
        if p is not None and p.uid != pod.uid and not (p.node_name and p.namespace == pod.namespace):
            return QueueSkip
    constraints = _hard_constraints(pod)
    if constraints is None:
        return Queue
    if new is not None and old is not None:
        return _spread_pod_updated(pod, old, new, constraints)
    p = _pick(old, new)
    return Queue if any(c.matches(p.labels) for c in constraints) else QueueSkip


def _spread_pod_updated(pod, old, new, constraints):
    if (pod.uid == new.uid and new.tolerations != old.tolerations
            and any(c.taints_honor for c in constraints)):
        return Queue
    if new.labels == old.labels:
        return QueueSkip
    changed = any(c.matches(old.labels) != c.matches(new.labels) for c in constraints)
    return Queue if changed else QueueSkip


def spread_after_node_change(pod, old, new):
    constraints = _hard_constraints(pod)
    if constraints is None:
        return Queue

    def matching(node):
        return node is not None and all(c.topology_key in node.labels for c in constraints)

    was, now = matching(old), matching(new)
    if old is not None and new is not None:
        if was != now:
            return Queue
        keys_changed = any(old.labels.get(c.topology_key, "") != new.labels.get(c.topology_key, "")
                           for c in constraints)
        return Queue if now and (keys_changed or old.taints != new.taints) else QueueSkip
    return Queue if (now if new is not None else was) else QueueSkip


def never_queue(pod, old, new):
    """DefaultPreemption: the plugins whose failures preemption resolves decide instead."""
    return QueueSkip


# --- registry ------------------------------------------------------------------------------

def in_tree_registrations(added_required=None) -> dict:
    """EventsToRegister of the in-tree plugins with EnqueueExtensions: plugin name ->
    [ClusterEventWithHint]. The volume and DRA plugins' events carry no hint (always Queue)."""
    table = {
        "SchedulingGates": [_ev(R.Pod, A.UpdatePodSchedulingGatesEliminated, own_pod_updated)],
        "NodeUnschedulable": [_ev(R.Node, A.Add | A.UpdateNodeTaint, node_unschedulable_after_node_change),
                              _ev(R.Pod, A.UpdatePodToleration, node_unschedulable_after_pod_toleration)],
        "NodeName": [_ev(R.Node, A.Add)],
        "TaintToleration": [_ev(R.Node, A.Add | A.UpdateNodeTaint, taint_toleration_after_node_change),
                            _ev(R.Pod, A.UpdatePodToleration, own_pod_updated)],
        "NodeAffinity": [_ev(R.Node, A.Add | A.UpdateNodeLabel, node_affinity_hint(added_required))],
        "NodePorts": [_ev(R.Pod, A.Delete, node_ports_after_pod_deleted), _ev(R.Node, A.Add)],
        "NodeResourcesFit": [_ev(R.Pod, A.Delete | A.UpdatePodScaleDown, fit_after_pod_event),
                             _ev(R.Node, A.Add | A.UpdateNodeAllocatable, fit_after_node_change)],
        "InterPodAffinity": [_ev(R.Pod, A.Add | A.UpdatePodLabel | A.Delete, interpod_after_pod_change),
                             _ev(R.Node, A.Add | A.UpdateNodeLabel, interpod_after_node_change)],
        "PodTopologySpread": [
            _ev(R.Pod, A.Add | A.UpdatePodLabel | A.UpdatePodToleration | A.Delete, spread_after_pod_change),
            _ev(R.Node, A.Add | A.Delete | A.UpdateNodeLabel | A.UpdateNodeTaint, spread_after_node_change)],
        "DefaultPreemption": [_ev(R.Pod, A.Delete, never_queue)],
        "VolumeRestrictions": [_ev(R.Pod, A.Delete), _ev(R.Node, A.Add),
                               _ev(R.PersistentVolumeClaim, A.Add)],
        "NodeVolumeLimits": [_ev(R.CSINode, A.Add), _ev(R.CSINode, A.Update), _ev(R.Pod, A.Delete),
                             _ev(R.PersistentVolumeClaim, A.Add), _ev(R.VolumeAttachment, A.Delete)],
        "VolumeBinding": [_ev(R.StorageClass, A.Add | A.Update), _ev(R.PersistentVolumeClaim, A.Add | A.Update),
                          _ev(R.PersistentVolume, A.Add | A.Update), _ev(R.Node, A.Add | A.UpdateNodeLabel),
                          _ev(R.CSINode, A.Add | A.Update), _ev(R.CSIDriver, A.Update),
                          _ev(R.CSIStorageCapacity, A.Add | A.Update)],
        "VolumeZone": [_ev(R.StorageClass, A.Add), _ev(R.Node, A.Add | A.UpdateNodeLabel),
                       _ev(R.PersistentVolumeClaim, A.Add | A.Update), _ev(R.PersistentVolume, A.Add | A.Update)],
        "DynamicResources": [_ev(R.Node, A.Add | A.UpdateNodeLabel | A.UpdateNodeAllocatable),
                             _ev(R.ResourceClaim, A.Add | A.Update),
                             _ev(R.Pod, A.UpdatePodGeneratedResourceClaim),
                             _ev(R.DeviceClass, A.Add | A.Update), _ev(R.ResourceSlice, A.Add | A.Update)],
    }
    return table


def in_tree_events(name: str, added_required=None):
    """One in-tree plugin's registrations; None for a plugin kschedcore does not know (no
    EnqueueExtensions: it hears every event)."""
    return in_tree_registrations(added_required).get(name)


#: The default profile's plugins that have EnqueueExtensions (PreEnqueue, PreFilter, Filter,
#: Reserve, Permit implementers), in profile order.
DEFAULT_ENQUEUE_PLUGINS = (
    "SchedulingGates", "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
    "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
    "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption")


def default_queueing_hint_map(plugins=DEFAULT_ENQUEUE_PLUGINS, custom=None, added_required=None):
    """The QueueingHintMap of a profile. plugins: its PreEnqueue, PreFilter, Filter, Reserve
    and Permit plugins (others register no events); custom: plugin name ->
    [ClusterEventWithHint], or None for a plugin that hears every event."""
    in_tree = in_tree_registrations(added_required)
    registrations = {name: in_tree.get(name) for name in plugins}
    registrations.update(custom or {})
    return build_queueing_hint_map(registrations)
