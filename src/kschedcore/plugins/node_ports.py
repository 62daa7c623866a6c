"""NodePorts (plugins/nodeports): host ports of sidecars and app containers must be free."""
import numpy as np

from .._kernels import F_NODE_PORTS
from ..state.node_table import pack_port
from .base import EMPTY_I64, Plugin

REASON = "node(s) didn't have free ports for the requested pod ports"


def packed_ports(pod, table):
    return [pack_port(table.ip_ids.intern(p.ip), p.protocol, p.port) for p in pod.host_ports]


class NodePorts(Plugin):
    name = "NodePorts"
    filter_id = F_NODE_PORTS

    def compile(self, pod, cp, table):
        ports = packed_ports(pod, table)
        cp.host_ports = np.asarray(ports, np.int64) if ports else EMPTY_I64

    def prefilter_skips(self, pod):
        return not pod.host_ports

    def reasons(self, detail, table):
        return [REASON]
