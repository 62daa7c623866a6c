"""Per node row masks over the node table, with NumPy: node affinity terms, label selectors,
tolerated taints. Plugins that count or pick nodes by these (PodTopologySpread's inclusion
policies, VolumeBinding's PV node affinity) share them."""
import numpy as np

from ...backend.cache.node_table import NAME_KEY


def required_mask(pod, table) -> np.ndarray:
    """Per node row: the node matches the pod's nodeSelector and required node affinity
    (GetRequiredNodeAffinity, without addedAffinity), over the whole table with NumPy.
    PodTopologySpread's nodeAffinityPolicy=Honor counts only such nodes."""
    mask = np.ones(table.labels.shape[0], bool)
    for key, value in (pod.node_selector or {}).items():
        mask &= requirement_mask(table, key, "In", (value,))
    if pod.required_terms is not None:
        mask &= terms_mask(pod.required_terms, table)
    return mask


def terms_mask(terms, table, *, node_names=True) -> np.ndarray:
    """Per node row: some term of a NodeSelector matches (an empty or unparsable term matches
    nothing). node_names=False: the nodes are seen without their name, as CheckNodeAffinity
    sees them for PersistentVolumes: such a node has no fields, so matchFields are not checked
    (nodeSelectorTerm.match skips them when extractNodeFields is empty)."""
    n = table.labels.shape[0]
    out = np.zeros(n, bool)
    for t in terms:
        if t.empty or not t.parses:
            continue
        m = np.ones(n, bool)
        for r in t.expressions:
            m &= requirement_mask(table, r.key, r.operator, r.values)
        for r in t.fields if node_names else ():
            m &= requirement_mask(table, NAME_KEY if r.key == NAME_KEY else "\x00field:" + r.key,
                                  r.operator, r.values)
        out |= m
    return out


def requirement_mask(table, key, op, values) -> np.ndarray:
    """Per node row: one label requirement (labels.Requirement.Matches) holds."""
    labels = table.labels
    col = table.label_keys.get(key)
    v = labels[:, col] if col >= 0 else np.full(labels.shape[0], -1, np.int32)
    if op in ("In", "NotIn"):
        ids = [table.label_values.get(x) for x in values]
        found = np.isin(v, [i for i in ids if i >= 0]) & (v >= 0)
        return found if op == "In" else ~found
    if op == "Exists":
        return v >= 0
    if op == "DoesNotExist":
        return v < 0
    bound = int(values[0])
    safe = np.where(v >= 0, v, 0)
    ok = (v >= 0) & (table.value_is_int[safe] == 1)
    return ok & ((table.value_int[safe] > bound) if op == "Gt" else (table.value_int[safe] < bound))


def label_selector_mask(selector, table) -> np.ndarray:
    """Per node row: a LabelSelector (None: nothing) matches the node's labels."""
    n = table.labels.shape[0]
    if selector is None:
        return np.zeros(n, bool)
    m = np.ones(n, bool)
    for key, op, values in selector.requirements:
        m &= requirement_mask(table, key, op, tuple(values))
    return m


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
