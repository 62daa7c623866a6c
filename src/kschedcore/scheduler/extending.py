"""The extenders' part of a scheduling cycle (schedule_one.go): after the Filter pass (and its
percentageOfNodesToScore sampling) the interested extenders filter the feasible nodes one
after another; none left is a FitError whose statuses include theirs, one left is chosen
without scoring, otherwise the Score plugins score the survivors and the extenders' scores
are added before selectHost.

After a filter that answered with full Node objects (not nodeCacheCapable), kube-scheduler
scores NEW NodeInfos made from those objects: without pods, so NodeResourcesFit and
NodeResourcesBalancedAllocation score as on an empty node and ImageLocality (no image
states) scores 0; the other scores read the node's labels and taints, or the snapshot.
"""
from __future__ import annotations

import numpy as np

from .._native import S_BALANCED_ALLOCATION, S_IMAGE_LOCALITY, S_NODE_RESOURCES_FIT
from ..errors import UnsupportedError
from ..extender.interface import ExtenderError
from ..extender.runtime import FilterOutcome, find_nodes_that_pass_extenders, prioritize
from ..framework.fit_error import FitError, absent_reason
from ..objects.node import parse_node
from ..reference import plugins as ref
from ..reference.state import new_node_info
from .result import ScheduleResult

#: the scores a NodeInfo without pods changes (ImageLocality: no image states, 0)
_EMPTY_NODE_SCORES = (S_NODE_RESOURCES_FIT, S_BALANCED_ALLOCATION, S_IMAGE_LOCALITY)


def run_filters(one, pod, cycle, nf: int, processed: int) -> tuple:
    """findNodesThatPassExtenders on the pass's feasible rows: (FilterOutcome, None) or
    (None, a ScheduleResult ending the cycle: an extender's error)."""
    fw, t = cycle.framework, one.cache.table
    rows = np.asarray(fw.kernel.feasible)[:nf].tolist()
    cycle.diagnosis()           # the pass's statuses, decoded before any later pass
    try:
        outcome = find_nodes_that_pass_extenders(one.extenders, pod, [t.nodes[r] for r in rows])
    except ExtenderError as e:
        return None, ScheduleResult(pod.key, None, 0, processed, error=str(e), cycle_state=cycle.state, cycle=cycle)
    cycle.extender = outcome
    return outcome, None


def failed(pod, cycle, outcome: FilterOutcome, processed: int, n_all: int) -> ScheduleResult:
    """No node passed the extenders: the FitError counts every status, the Filter plugins'
    and the extenders' (Diagnosis.node_reasons has both)."""
    reasons: dict[str, int] = {}
    for _, _, node_reasons in cycle.diagnosis().node_reasons().values():
        for r in node_reasons:
            reasons[r] = reasons.get(r, 0) + 1
    left_out = cycle.diagnosis().left_out()
    if left_out:
        reason = absent_reason(cycle.narrowed)
        reasons[reason] = reasons.get(reason, 0) + len(left_out)
    return ScheduleResult(pod.key, None, 0, processed, FitError(pod.key, n_all, reasons=reasons), None,
                          cycle.state, cycle)


def score(one, pod, fw, outcome: FilterOutcome) -> tuple:
    """The survivors' totals (the kernel's buffers hold their pass): the empty-NodeInfo
    correction after an answer of Node objects, then the extenders' scores. Returns (rows,
    totals, {node: [(extender, score)]})."""
    k = fw.kernel
    nf = len(outcome.nodes)
    rows = np.asarray(k.feasible)[:nf].astype(np.int64)
    totals = np.asarray(k.totals)
    if outcome.returned is not None:
        _score_empty(one, pod, fw, outcome.returned, rows, totals)
    nodes = one.cache.table.nodes
    added = {}
    if any(e.is_prioritizer() for e in one.extenders):
        added = prioritize(one.extenders, pod, [nodes[r] for r in rows.tolist()])
    if added:
        totals[:nf] += np.fromiter((sum(s for _, s in added.get(nodes[r].name, ())) for r in rows.tolist()),
                                   np.int64, nf)
    return rows, totals[:nf].copy(), added


def _score_empty(one, pod, fw, returned: dict, rows, totals) -> None:
    """Replaces the pod-dependent resource scores and ImageLocality by what a NodeInfo made
    from the returned Node object (no pods, no image states) gets."""
    k = fw.kernel
    raw, ran, zero = np.asarray(k.raw_scores), np.asarray(k.score_ran), np.asarray(k.score_zero)
    fit_args = _fit_args(fw)
    fit_req = ref.fit_pod_requests(pod.raw, fit_args)
    bal_req = ref.balanced_pod_requests(pod.raw)
    memo = _empty_scores_memo(one, fw, fit_args)
    requests = (tuple(fit_req), tuple(bal_req))
    nodes = one.cache.table.nodes
    for j, r in enumerate(rows.tolist()):
        node = nodes[r]
        obj = returned[node.name]
        if obj != node.raw:          # what the extender sent back is not what it was sent
            _same_node(node, obj)
        key = (node.name, requests)
        hit = memo.get(key)
        if hit is None or hit[0] is not node:
            ni = new_node_info(node.raw)
            hit = memo[key] = (node, {S_NODE_RESOURCES_FIT: ref.node_resources_fit_score(fit_req, ni, fit_args),
                                      S_BALANCED_ALLOCATION: ref.balanced_allocation_score(bal_req, ni),
                                      S_IMAGE_LOCALITY: 0})
        empty = hit[1]
        for s in _EMPTY_NODE_SCORES:
            if not ran[s] or zero[s]:
                continue
            w = int(fw.weights[s])
            totals[j] += w * (empty[s] - int(raw[s, j]))
            raw[s, j] = empty[s]


def _empty_scores_memo(one, fw, fit_args) -> dict:
    """(node name, the pod's request vectors) -> (the cache's Node, its empty-NodeInfo scores),
    per profile: the scores read only the node's allocatable, which is the same while the
    cache keeps the same Node object (a node update replaces it)."""
    memos = one.empty_scores
    memo = memos.get(id(fw))
    if memo is None or memo[0] != fit_args:
        memo = memos[id(fw)] = (fit_args, {})
    if len(memo[1]) > 1_000_000:     # bounded: a long run of many shapes starts afresh
        memo[1].clear()
    return memo[1]


def _fit_args(fw):
    args = fw.profile.plugin_args.get("NodeResourcesFit") or {}
    bal = fw.profile.plugin_args.get("NodeResourcesBalancedAllocation") or {}
    if bal.get("resources") and [r.get("name") for r in bal["resources"]] != ["cpu", "memory"]:
        raise UnsupportedError("KubeSchedulerConfiguration", "NodeResourcesBalancedAllocation.resources",
                               "scoring after an extender that answers with Node objects supports cpu and memory only")
    return ref.parse_fit_args(args.get("scoringStrategy"), args.get("ignoredResources"),
                              args.get("ignoredResourceGroups"))


def _same_node(node, obj) -> None:
    """The returned object must say what the cache's Node says where a Score reads it."""
    other = parse_node(obj)
    if (other.labels, other.taints, other.allocatable, other.allowed_pods) != \
            (node.labels, node.taints, node.allocatable, node.allowed_pods):
        raise UnsupportedError(f"node {node.name}", "",
                               "an extender's filter answered with a changed Node object (scoring it is not supported)")


def select(one, rows: np.ndarray, totals: np.ndarray) -> int:
    """selectHost over `totals` of the feasible `rows` (ties: the first in node order, or one
    draw), where scores were added after the kernel's own selection."""
    ties = np.flatnonzero(totals == totals.max())
    if one.tie_first:
        j = ties[np.argmin(one.cache.table.order_key[rows[ties]])]
    else:
        j = ties[one.rng.randrange(len(ties))]
    return int(rows[j])
