"""InterPodAffinity's queueing hints (plugins/interpodaffinity/plugin.go)."""
from ...framework.cluster_events import ActionType as A, EventResource as R, Queue, QueueSkip, with_hint


def interpod_events():
    return [with_hint(R.Pod, A.Add | A.UpdatePodLabel | A.Delete, after_pod_change),
            with_hint(R.Node, A.Add | A.UpdateNodeLabel, after_node_change)]


def _matches_all(terms, pod) -> bool:
    """podMatchesAllAffinityTerms: the namespace selector sees no namespace labels here."""
    return bool(terms) and all(t.matches(pod.labels, pod.namespace, None) for t in terms)


def after_pod_change(pod, old, new):
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


def after_node_change(pod, old, new):
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
