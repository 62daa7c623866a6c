"""NodeName (plugins/nodename): a pod with spec.nodeName fits only that node."""
from .._kernels import F_NODE_NAME
from .base import Plugin

REASON = "node(s) didn't match the requested node name"


class NodeName(Plugin):
    name = "NodeName"
    filter_id = F_NODE_NAME

    def reasons(self, detail, table):
        return [REASON]
