"""NodeUnschedulable (plugins/nodeunschedulable): spec.unschedulable nodes, unless tolerated."""
from .._kernels import F_NODE_UNSCHEDULABLE
from .base import Plugin

REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = ("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable(Plugin):
    name = "NodeUnschedulable"
    filter_id = F_NODE_UNSCHEDULABLE

    def compile(self, pod, cp, table):
        cp.tolerates_unschedulable = any(t.tolerates(*UNSCHEDULABLE_TAINT) for t in pod.tolerations)

    def reasons(self, detail, table):
        return [REASON]
