"""TaintToleration (plugins/tainttoleration): filter on NoSchedule/NoExecute, score PreferNoSchedule."""
import numpy as np

from ..._native import F_TAINT_TOLERATION, S_TAINT_TOLERATION
from ...framework.cluster_events import ActionType as A, EventResource as R, Queue, QueueSkip, with_hint
from ...framework.kernel_plugin import KernelPlugin
from ..helper.predicates import untolerated


class TaintToleration(KernelPlugin):
    name = "TaintToleration"
    static_reasons = True
    filter_id = F_TAINT_TOLERATION
    score_id = S_TAINT_TOLERATION
    default_weight = 3

    def compile(self, pod, cp, table):
        """Per taint id known to the table: is it tolerated (filter) / counted (score)?"""
        n = len(table.taint_ids)
        tolerated = np.zeros(n, np.uint8)
        prefer_intolerable = np.zeros(n, np.uint8)
        prefer_tolerations = [t for t in pod.tolerations if t.effect in ("", "PreferNoSchedule")]
        for tid, (key, value, effect) in enumerate(table.taint_ids.items):
            tolerated[tid] = any(t.tolerates(key, value, effect) for t in pod.tolerations)
            if effect == "PreferNoSchedule":
                prefer_intolerable[tid] = not any(t.tolerates(key, value, effect) for t in prefer_tolerations)
        cp.tolerated = tolerated
        cp.prefer_intolerable = prefer_intolerable
        cp.taint_version = table.taint_version

    def reasons(self, detail, table):
        key, value, _ = table.taint_ids[detail]
        return [f"node(s) had untolerated taint {{{key}: {value}}}"]

    def histogram(self, kernel, table):
        """Counted per untolerated taint (the kernel's status detail is the taint id)."""
        return [(self.reasons(int(tid), table)[0], int(kernel.hist_taint[tid]))
                for tid in np.flatnonzero(np.asarray(kernel.hist_taint))]

    def events_to_register(self):
        return [with_hint(R.Node, A.Add | A.UpdateNodeTaint, after_node_change),
                with_hint(R.Pod, A.UpdatePodToleration, own_pod_updated)]


def after_node_change(pod, old, new):
    """isSchedulableAfterNodeChange: a node whose taints the pod now tolerates."""
    was = True if old is None else untolerated(old.taints, pod.tolerations)
    return Queue if was and not untolerated(new.taints, pod.tolerations) else QueueSkip


def own_pod_updated(pod, old, new):
    """isSchedulableAfterPodTolerationChange: the pod itself changed."""
    return Queue if new.uid == pod.uid else QueueSkip
