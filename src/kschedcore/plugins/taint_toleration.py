"""TaintToleration (plugins/tainttoleration): filter on NoSchedule/NoExecute, score PreferNoSchedule."""
import numpy as np

from .._kernels import F_TAINT_TOLERATION, S_TAINT_TOLERATION
from .base import Plugin


class TaintToleration(Plugin):
    name = "TaintToleration"
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


def tolerated_mask(pod, table) -> np.ndarray:
    """Per node row: the pod tolerates every NoSchedule/NoExecute taint of the node
    (PodTopologySpread's nodeTaintsPolicy=Honor)."""
    tolerated = np.asarray([any(t.tolerates(k, v, e) for t in pod.tolerations) or e == "PreferNoSchedule"
                            for k, v, e in table.taint_ids.items], bool)
    n, width = table.taints.shape
    if not len(tolerated):
        return np.ones(n, bool)
    within = np.arange(width)[None, :] < table.n_taints[:, None]
    bad = within & ~tolerated[table.taints]
    return ~bad.any(axis=1)
