"""NodeUnschedulable (plugins/nodeunschedulable): spec.unschedulable nodes, unless tolerated.

The kernel's part: Filter id F_NODE_UNSCHEDULABLE reads the node table's `unschedulable`
column; the pass leaves it out for pods that tolerate the unschedulable taint
(`tolerates_unschedulable`, written here).
"""
from ..._native import F_NODE_UNSCHEDULABLE
from ...framework.cluster_events import ActionType as A, EventResource as R, Queue, QueueSkip, with_hint
from ...framework.kernel_plugin import KernelPlugin

REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = ("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable(KernelPlugin):
    name = "NodeUnschedulable"
    static_reasons = True
    filter_id = F_NODE_UNSCHEDULABLE

    def compile(self, pod, cp, table):
        cp.tolerates_unschedulable = _tolerates(pod)

    def reasons(self, detail, table):
        return [REASON]

    def events_to_register(self):
        return [with_hint(R.Node, A.Add | A.UpdateNodeTaint, after_node_change),
                with_hint(R.Pod, A.UpdatePodToleration, after_pod_toleration)]


def _tolerates(pod) -> bool:
    return any(t.tolerates(*UNSCHEDULABLE_TAINT) for t in pod.tolerations)


def after_node_change(pod, old, new):
    """isSchedulableAfterNodeChange: a node added schedulable, or made schedulable."""
    became = old is not None and old.unschedulable and not new.unschedulable
    return Queue if became or (old is None and not new.unschedulable) else QueueSkip


def after_pod_toleration(pod, old, new):
    """isSchedulableAfterPodTolerationChange: the pod itself now tolerates the taint."""
    if new.uid != pod.uid:
        return QueueSkip
    return Queue if _tolerates(new) else QueueSkip
