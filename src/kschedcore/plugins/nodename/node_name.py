"""NodeName (plugins/nodename): a pod with spec.nodeName fits only that node."""
from ..._native import F_NODE_NAME
from ...framework.cluster_events import ActionType as A, EventResource as R, with_hint
from ...framework.kernel_plugin import KernelPlugin

REASON = "node(s) didn't match the requested node name"


class NodeName(KernelPlugin):
    name = "NodeName"
    static_reasons = True
    filter_id = F_NODE_NAME

    def reasons(self, detail, table):
        return [REASON]

    def events_to_register(self):
        return [with_hint(R.Node, A.Add)]
