"""NodePorts (plugins/nodeports): host ports of sidecars and app containers must be free."""
import numpy as np

from ..._native import F_NODE_PORTS
from ...backend.cache.node_table import pack_port
from ...framework.cluster_events import ActionType as A, EventResource as R, Queue, QueueSkip, with_hint
from ...framework.kernel_plugin import EMPTY_I64, KernelPlugin

REASON = "node(s) didn't have free ports for the requested pod ports"


class NodePorts(KernelPlugin):
    name = "NodePorts"
    static_reasons = True
    filter_id = F_NODE_PORTS

    def compile(self, pod, cp, table):
        ports = [pack_port(table.ip_ids.intern(p.ip), p.protocol, p.port) for p in pod.host_ports]
        cp.host_ports = np.asarray(ports, np.int64) if ports else EMPTY_I64

    def prefilter_skips(self, pod):
        return not pod.host_ports

    def sees_other_pods(self, pod, cache):
        return bool(pod.host_ports)

    def reasons(self, detail, table):
        return [REASON]

    def events_to_register(self):
        return [with_hint(R.Pod, A.Delete, after_pod_deleted), with_hint(R.Node, A.Add)]


def _ports_conflict(want, used) -> bool:
    """HostPortInfo.CheckConflict of each wanted port against the used ones."""
    return any(w.protocol == u.protocol and w.port == u.port
               and (w.ip == "0.0.0.0" or u.ip == "0.0.0.0" or w.ip == u.ip)
               for w in want for u in used)


def after_pod_deleted(pod, old, new):
    """isSchedulableAfterPodDeleted: a deleted pod held one of the pod's host ports."""
    if not old.node_name and not old.nominated_node_name:
        return QueueSkip
    return Queue if _ports_conflict(pod.host_ports, old.host_ports) else QueueSkip
