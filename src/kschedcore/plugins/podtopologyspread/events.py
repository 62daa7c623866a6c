"""PodTopologySpread's queueing hints (plugins/podtopologyspread/plugin.go), for pods with
explicit spec.topologySpreadConstraints; conservative (always Queue) for a pod without them,
whose constraints would come from the profile's defaults and its Services/controllers."""
from ...framework.cluster_events import ActionType as A, EventResource as R, Queue, QueueSkip, with_hint


def spread_events():
    return [with_hint(R.Pod, A.Add | A.UpdatePodLabel | A.UpdatePodToleration | A.Delete, after_pod_change),
            with_hint(R.Node, A.Add | A.Delete | A.UpdateNodeLabel | A.UpdateNodeTaint, after_node_change)]


def _pick(old_obj, new_obj):
    """The object that is, or was, there (util.As)."""
    return new_obj if new_obj is not None else old_obj


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


def after_pod_change(pod, old, new):
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


def after_node_change(pod, old, new):
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
