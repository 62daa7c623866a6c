"""Explain records: one scheduling cycle as the parity data's explain format shows it -- the
chosen node, every rejected node's plugin, code and reasons, every plugin's scores, the
skipped plugins and the FitError (docs/formats.md)."""
from ..framework.fit_error import absent_reason
from ..framework.status import Code
from .._native import N_CUSTOM, S_CUSTOM_0, S_INTER_POD_AFFINITY, S_NODE_AFFINITY, S_POD_TOPOLOGY_SPREAD, S_TAINT_TOLERATION

#: score plugins with a NormalizeScore step; the others' scores are their raw scores
NORMALIZED_SCORES = (S_TAINT_TOLERATION, S_NODE_AFFINITY, S_INTER_POD_AFFINITY, S_POD_TOPOLOGY_SPREAD,
                     *range(S_CUSTOM_0, S_CUSTOM_0 + N_CUSTOM))


def gated_record(pod, message: str) -> dict:
    return {"pod": pod.key, "node": None, "numFeasible": 0, "filter": {}, "scores": {}, "gated": True,
            "error": message, "fitError": None}


def add_post_filter(rec: dict, result) -> None:
    """The PostFilter part of a failed cycle's message, once PostFilter ran."""
    if result.fit_error is not None and result.fit_error.post_filter_message is not None:
        rec["postFilterMessage"] = result.fit_error.post_filter_message


def record(pod, result) -> dict:
    """The explain record of a cycle (read right after it: the kernel's buffers are decoded)."""
    rec = {"pod": pod.key, "node": result.node, "numFeasible": result.feasible_nodes, "filter": {}, "scores": {}}
    cycle = result.cycle
    if cycle is None:
        rec.update(error=result.error, fitError=None)
        return rec
    fw, cache = cycle.framework, cycle.cache
    if cycle.rejection is not None:
        # a PreFilter rejected the pod: every node has its status, and
        # (as in kube-scheduler's own record) no skipped-plugin lists
        rej = cycle.rejection
        status = {"ok": False, "code": rej.code.go_name, "plugin": rej.plugin,
                  "reasons": [result.fit_error.pre_filter_message]}
        rec["filter"] = {name: dict(status) for name in cache.node_names}
        rec["preFilterStatus"] = status
        rec["fitError"] = str(result.fit_error)
        if pod.node_name:
            rec["preBound"] = True
        return rec
    state = result.cycle_state
    acted = set(cycle.acted_filters)
    skipped_filter = [p.name for p in fw.filters.values() if _filter_skipped(p, pod, acted, state)]
    rec["skippedFilterPlugins"] = sorted(skipped_filter + fw.skipping_filters)
    if cycle.scan is not None:
        d = cycle.diagnosis()
        for name, (code, plugin, reasons) in d.node_reasons().items():
            rec["filter"][name] = {"ok": False, "code": code.go_name, "plugin": plugin, "reasons": reasons}
        if cycle.narrowed:
            rec["preFilterNodeNames"] = sorted(cycle.names)
            for name in d.left_out():
                rec["filter"][name] = {"ok": False, "code": Code.UNSCHEDULABLE_AND_UNRESOLVABLE.go_name,
                                       "plugin": cycle.narrowed[0], "reasons": [absent_reason(cycle.narrowed)]}
        if not result.error and result.feasible_nodes > 1:
            rec["scores"] = _scores(fw, cache.table, result.feasible_nodes)
            _extender_scores(rec["scores"], result.extender_scores)
    if result.error:
        rec["error"] = result.error
    acted = set(cycle.acted_scores)
    rec["skippedScorePlugins"] = sorted([p.name for p in fw.scorers if _score_skipped(p, pod, acted, state)]
                                        + fw.skipping_scores)
    if pod.node_name:
        rec["preBound"] = True
    rec["fitError"] = str(result.fit_error) if result.fit_error else None
    return rec


def _extender_scores(scores: dict, added) -> None:
    """Each extender's score (x weight x 10) under its name, as PluginScore lists name it."""
    for node, pairs in (added or {}).items():
        entry = scores.get(node)
        if entry is None:
            continue
        for name, score in pairs:
            entry[name] = entry.get(name, 0) + score


def _filter_skipped(p, pod, acted, state) -> bool:
    """Its PreFilter returned Skip: known from the pod, or (cycle-dependent) not acted."""
    if getattr(p, "dynamic", False):
        return p.name not in acted or p.prefilter_skips(pod)
    return p.prefilter_skips(pod) or (state is not None and p.name in state.skip_filter_plugins)


def _score_skipped(p, pod, acted, state) -> bool:
    if getattr(p, "dynamic", False):
        return p.name not in acted
    return p.prescore_skips(pod) or (state is not None and p.name in state.skip_score_plugins)


def _scores(fw, table, nf: int) -> dict:
    k = fw.kernel
    ran = [p for p in fw.scorers if k.score_ran[p.score_id]]
    out = {}
    for j in range(nf):
        entry = {}
        for p in ran:
            raw = 0 if k.score_zero[p.score_id] else int(k.raw_scores[p.score_id, j])
            score = int(k.scores[p.score_id, j]) if p.score_id in NORMALIZED_SCORES else raw
            entry[p.name] = int(fw.weights[p.score_id]) * score
            entry["raw:" + p.name] = raw
        entry["total"] = int(k.totals[j])
        out[table.nodes[int(k.feasible[j])].name] = entry
    return out
