"""The nominator (pkg/scheduler/backend/queue/nominator.go): pods nominated to nodes by
preemption (status.nominatedNodeName), held by the scheduling queue."""
from .queued_pod_info import pod_uid


class Nominator:
    """Pods nominated to nodes by preemption (nominator.go): node -> pods, in nomination order.

    The one store of nominations: the listener (the cache's NominatedUsage, which counts them
    in Filter) hears every one added and removed."""

    def __init__(self, pod_lister=None, listener=None):
        self._pod_lister = pod_lister       # key -> current pod or None; None: no check
        self._listener = listener
        self._by_node = {}                  # node name -> {uid: key}
        self._node_of = {}                  # uid -> node name
        #: how many pods are nominated (an attribute: the loop checks it every cycle)
        self.count = 0

    def __len__(self):
        return self.count

    def add(self, pod, node_name: str | None = None) -> None:
        """AddNominatedPod. node_name None: the pod's own status.nominatedNodeName (ModeNoop);
        a string overrides it, "" clearing the nomination (ModeOverride)."""
        uid = pod_uid(pod)
        if uid in self._node_of:
            self.delete(pod)
        if node_name is None:
            node_name = getattr(pod, "nominated_node_name", "") or ""
        if not node_name or not self._alive_and_pending(pod):
            return
        self._node_of[uid] = node_name
        self.count += 1
        self._by_node.setdefault(node_name, {})[uid] = pod.key
        if self._listener is not None:
            self._listener.nominated(pod, node_name)

    def _alive_and_pending(self, pod) -> bool:
        if self._pod_lister is None:
            return True
        current = self._pod_lister(pod.key)
        return current is not None and not getattr(current, "node_name", "")

    def update(self, old_pod, new_pod) -> None:
        """UpdateNominatedPod: an update that neither sets nor clears nominatedNodeName keeps
        the node the scheduler nominated."""
        node_name = None
        if old_pod is not None and not nominated_node_name(old_pod) and not nominated_node_name(new_pod):
            node_name = self._node_of.get(pod_uid(old_pod))
        if old_pod is not None:
            self.delete(old_pod)
        self.add(new_pod, node_name)

    def delete(self, pod) -> None:
        uid = pod_uid(pod)
        node_name = self._node_of.pop(uid, None)
        if node_name is None:
            return
        self.count -= 1
        pods = self._by_node[node_name]
        pods.pop(uid, None)
        if not pods:
            del self._by_node[node_name]
        if self._listener is not None:
            self._listener.unnominated(pod)

    def node_of(self, pod) -> str | None:
        return self._node_of.get(pod_uid(pod))

    def nominations(self) -> dict:
        """pod key -> nominated node name, for every nominated pod."""
        return {key: node for node, pods in self._by_node.items() for key in pods.values()}

    def refs_for_node(self, node_name: str) -> list:
        """(key, uid) of the pods nominated to the node."""
        return [(key, uid) for uid, key in self._by_node.get(node_name, {}).items()]


def nominated_node_name(pod) -> str:
    return getattr(pod, "nominated_node_name", "") or ""
