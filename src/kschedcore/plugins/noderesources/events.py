"""NodeResourcesFit's queueing hints (fit.go isSchedulableAfterNodeChange,
isSchedulableAfterPodEvent), on the parsed integer requests and allocatable."""
from ...framework.cluster_events import ActionType as A, EventResource as R, Queue, QueueSkip, with_hint


def fit_events():
    return [with_hint(R.Pod, A.Delete | A.UpdatePodScaleDown, after_pod_event),
            with_hint(R.Node, A.Add | A.UpdateNodeAllocatable, after_node_change)]


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


def after_node_change(pod, old, new):
    if not _fits_empty_node(pod, new):
        return QueueSkip
    if old is None:
        return Queue
    return Queue if _requested_resource_increased(pod, old, new) else QueueSkip


def after_pod_event(pod, old, new):
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
