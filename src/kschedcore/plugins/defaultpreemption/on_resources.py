"""Preemption where resources alone decide: DefaultPreemption's dry run of every potential node,
and SelectVictimsOnNode on every candidate, at once, as NodeResourcesFit's arithmetic over the
cache's per-row arrays of placed pods by priority (Cache.by_priority). The Filters then confirm
the chosen node's victims.

Resources alone decide when taking lower-priority pods off a node can change nothing but
NodeResourcesFit's verdict: no Filter of the profile that sees other pods acts on this pod (host
ports, pod affinity or spreading, existing pods' affinity terms, custom Filters; volumes where a
lower-priority pod has any), and every potential node failed on NodeResourcesFit. The volume
Filters that act come after NodeResourcesFit and were not asked on those nodes; their verdicts,
which the victims cannot change, are their PreFilters' per-row statuses.
"""
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..._native import F_CUSTOM_0, TOO_MANY_PODS_BIT, VOLUME_UU
from ...framework.kernel_plugin import KernelPlugin
from ...framework.status import Code
from ...objects.disruption import split_by_violation
from ..helper.volume import VolumePlugin
from .ranking import NO_VICTIMS, pick_one_node, victims_in_order

_STALE = np.iinfo(np.int64).min
#: fewer potential nodes than this: the kernel dry-runs them one by one
MIN_SCREEN = 8


@dataclass
class Screened:
    """The dry run of every potential node (status Unschedulable), in node order."""
    count: int                         # potential nodes
    rows: np.ndarray                   # their node rows
    fitting: np.ndarray                # positions of those where the pod fits without its lower-priority pods
    reasons: Callable                  # reasons() -> {reason: nodes} over the others


def resources_decide(pod, framework, cache) -> bool:
    """No Filter that sees other pods acts on the pod, and no custom PreFilter follows them;
    no claims (DynamicResources' verdict per node is read by the exact dry runs)."""
    if pod.resource_claims or framework.custom.prefilter_extensions or any(fid >= F_CUSTOM_0 for fid in framework.filters):
        return False
    return not any(p.sees_other_pods(pod, cache) for p in framework.filters.values() if isinstance(p, KernelPlugin))


def screen(evaluator, pod, cycle) -> Screened | None:
    """NodeResourcesFit's Filter on every potential node with its lower-priority pods off;
    None where resources do not decide alone (each node is then dry-run by the kernel)."""
    if cycle.rejection is not None or cycle.scan is None or cycle.extender is not None:
        return None         # (extenders' statuses: the node-by-node dry run)
    framework, cache = cycle.framework, cycle.cache
    d = cycle.diagnosis()
    unsched = d.codes == Code.UNSCHEDULABLE
    potential = d.rows[unsched]
    if len(potential) < MIN_SCREEN or not resources_decide(pod, framework, cache):
        return None
    fit = next((fid for fid, p in framework.filters.items() if p.name == "NodeResourcesFit"), None)
    if fit is None or not (d.fids[unsched] == fit).all():
        return None
    potential = potential.astype(np.int64)
    st = cache.by_priority(potential, pod.priority)
    cut, n_low = st.lower(potential, pod.priority)
    t, needs = cache.table, resource_needs(pod.compiled[1])
    room = t.allowed_pods.take(potential) - t.pod_count.take(potential) + n_low
    fits = room >= 1
    free = {}
    for col, amount in needs:
        free[col] = t.alloc[potential, col] - t.requested[potential, col] + st.freed(col, potential, cut)
        fits &= amount <= free[col]
    volumes = _volume_statuses(framework, fit, pod, potential)
    if volumes is None:
        return None
    on_volumes = fits.copy()              # resources fit: the volume Filters come next
    for _, status in volumes:
        fits &= status == 0

    def reasons():
        # the others' dry runs: no victims, or NodeResourcesFit's reasons with them off, or
        # the first volume Filter's that fails where resources fit
        plugin, dry = framework.filters[fit], ~on_volumes & (n_low > 0)
        out = {NO_VICTIMS: int(np.count_nonzero(~fits & (n_low == 0)))}
        for bit, failed in [(TOO_MANY_PODS_BIT, room < 1)] + [(c, a > free[c]) for c, a in needs]:
            n = int(np.count_nonzero(failed & dry))
            if n:
                for reason in plugin.reasons(1 << bit, t):
                    out[reason] = out.get(reason, 0) + n
        left = on_volumes & (n_low > 0)
        for vplugin, status in volumes:
            values, counts = np.unique(status[left], return_counts=True)
            for value, n in zip(values.tolist(), counts.tolist()):
                for reason in vplugin.reasons(value & (VOLUME_UU - 1), t) if value else ():
                    out[reason] = out.get(reason, 0) + n
            left &= status == 0
        return {r: n for r, n in out.items() if n}

    return Screened(len(potential), potential, np.flatnonzero(fits), reasons)


def _volume_statuses(framework, fit, pod, rows):
    """[(plugin, its status at `rows`)] of the volume Filters that act on the pod, in Filter
    order after NodeResourcesFit (resources_decide has made sure victims cannot change them);
    None where a row's status is a Filter Error (the exact path reports it)."""
    out: list = []
    after = False
    for fid, p in framework.filters.items():
        after = after or fid == fit
        if not after or not isinstance(p, VolumePlugin) or not pod.volumes:
            continue
        of, status = p.status
        if of is not pod:              # its PreFilter did not run for this pod's cycle
            return None
        if status is None:
            continue
        at = np.asarray(status)[rows]
        error = getattr(p, "ERROR_DETAIL", None)
        if error is not None and ((at & (VOLUME_UU - 1)) == error).any():
            return None
        out.append((p, at))
    return out


def victims(evaluator, pod, node_names, rows):
    """SelectVictimsOnNode on every candidate at once and pickOneNodeForPreemption: (node,
    victims) or None. The reprieve is NodeResourcesFit's arithmetic, all candidates a step at
    a time; the chosen node's victims are then confirmed by the Filters (_confirm)."""
    cache = evaluator.cache
    t, cp = cache.table, pod.compiled[1]
    st = cache.by_priority(rows, pod.priority)
    cut, n_low = st.lower(rows, pod.priority)
    width = int(n_low.max(initial=0))
    if width == 0:
        return None
    seq, live, breaking = _reprieve_order(cache, st, rows, cut, n_low, width)
    needs = resource_needs(cp)
    amounts = np.asarray([a for _, a in needs], np.int64)
    free = np.empty((len(rows), len(needs)), np.int64)       # with every lower-priority pod off
    use = np.empty(seq.shape + (len(needs),), np.int64)
    for j, (c, _) in enumerate(needs):
        free[:, j] = t.alloc[rows, c] - t.requested[rows, c] + st.freed(c, rows, cut)
        use[:, :, j] = st.use_at(c, rows, seq)
    room = t.allowed_pods.take(rows) - t.pod_count.take(rows) + n_low

    def fits(free, room):
        return (room >= 1) & (amounts <= free).all(axis=1)

    ok = fits(free, room)                 # every lower-priority pod off
    victim = np.zeros(live.shape, bool)
    for i in range(width):               # put back in order, if the pod still fits
        tried = live[:, i] & ok
        back_free, back_room = free - use[:, i], room - 1
        still = fits(back_free, back_room)
        keep = tried & still
        free = np.where(keep[:, None], back_free, free)
        room = np.where(keep, back_room, room)
        victim[:, i] = tried & ~still
    prio = st.prio_at(rows, seq)
    n_victims = victim.sum(axis=1)
    top = np.where(victim, prio, _STALE).max(axis=1)
    chosen = np.flatnonzero(n_victims > 0)
    if not len(chosen):
        return None
    keys = ((victim & breaking).sum(axis=1), top, np.where(victim, prio + 2 ** 31, 0).sum(axis=1), n_victims)

    def earliest_start(tied):
        # the earliest start among each tied candidate's most important victims, at once
        cand = chosen[tied]
        at, slot = np.nonzero(victim[cand] & (prio[cand] == top[cand, None]))
        when = st.start_at(rows[cand[at]], seq[cand[at], slot])
        first = np.full(len(cand), np.iinfo(np.int64).max, np.int64)
        np.minimum.at(first, at, when)
        return first

    pick = chosen[pick_one_node(*(k[chosen] for k in keys), earliest_start)]  # type: ignore[call-arg]  # keys: the four ranking arrays
    row, pods = int(rows[pick]), st.pods[int(rows[pick])]
    order = [pods[s] for s in seq[pick][live[pick]].tolist()]
    chosen_victims = [pods[s] for s in seq[pick][victim[pick]].tolist()]
    node = t.nodes[row].name
    out = victims_in_order(chosen_victims, {pods[s].key for s in seq[pick][breaking[pick]].tolist()})
    if not _confirm(evaluator, pod, node, order, chosen_victims):
        raise AssertionError(f"preemption of {pod.key} on {node}: resource arithmetic chose "
                             f"{[v.key for v in chosen_victims]}, the Filters {evaluator.select_victims(pod, node)}")
    return node, out[0]


def _reprieve_order(cache, st, rows, cut, n_low, width):
    """Per candidate, its lower-priority slots in reprieve order -- those whose eviction breaks
    a budget first (each group most important first), else most important first: (slots,
    which are live, which break a budget)."""
    step = np.arange(width)
    seq = cut[:, None] + step
    live = step < n_low[:, None]
    breaking = np.zeros(live.shape, bool)
    if cache.pdbs:
        pdbs = list(cache.pdbs.values())
        for i, (row, c, n) in enumerate(zip(rows.tolist(), cut.tolist(), n_low.tolist())):
            low = st.pods[row][c:c + n]
            violating, _ = split_by_violation(low, pdbs)
            if violating:
                bad = {id(p) for p in violating}
                order = sorted(range(n), key=lambda j: id(low[j]) not in bad)
                seq[i, :n] = [c + j for j in order]
                breaking[i, :len(violating)] = True
    return np.where(live, seq, 0), live, breaking


def _confirm(evaluator, pod, node_name: str, order, victims) -> bool:
    """The Filters agree with the reprieve that made `victims` of the node's `order` (its
    lower-priority pods in reprieve order): with the other pods back, the pod fits, and each
    victim, put back after the pods reprieved before it, made it fail. (A pod reprieved before
    fitted with fewer pods than the pod fits with at the end.)"""
    cache = evaluator.cache
    out = set(id(v) for v in victims)
    with cache.without(order, node_name) as off:
        for p in order:
            cache.put_back(p, node_name, off[p.key])
            if id(p) in out:
                fits = evaluator.fits_on(pod, node_name)
                cache.take_off(p.key)
                if fits:
                    return False
        return evaluator.fits_on(pod, node_name)


def resource_needs(cp) -> list:
    """[(resource column, amount)] NodeResourcesFit's Filter checks for a compiled pod (the
    kernel's fit filter): cpu, memory, ephemeral storage when requested, every scalar."""
    if not (cp.cpu != 0 or cp.memory != 0 or cp.ephemeral != 0 or cp.has_scalar_entry):
        return []
    needs = [(c, v) for c, v in ((0, cp.cpu), (1, cp.memory), (2, cp.ephemeral)) if v > 0]
    return needs + list(zip(np.asarray(cp.scalar_cols).tolist(), np.asarray(cp.scalar_vals).tolist()))
