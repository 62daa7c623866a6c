"""Runs of copies with resource claims: after a pod with claims was bound as it was assumed,
the copies of it at activeQ's head -- each with claims of its own, made from the same
templates -- are decided in one kernel call, then popped, allocated, assumed and bound one by
one, as runs.py does for node-local copies.

A copy's DynamicResources Filter reads how many devices its claims can take on each row; where
counting decides every row for one kind of request (DeviceIndex: ExactCount requests of one
class and selectors, no constraint), the run hands the kernel that per-row status and each
row's budget -- the copies its free devices take -- and the kernel turns a row's status to
"cannot allocate" once copies have used its budget up, before the row is evaluated again
(NodeKernel.run_copies). The allocation of each copy then follows in order, the devices the
copies before it took counted, exactly as each copy's own Reserve and PreBind would.

Exact where runs.py's runs are (nothing can happen between two pops), and besides:
- every copy's claims exist, are unallocated, reserved by nobody and named by no other pod of
  the run, and have the specs of the first copy's (its PreFilter would find what the first
  copy's found);
- no pod waits for a claim's update (a copy's PreBind write moves nobody: `hears`);
- no pod is nominated.
tests/test_claim_runs.py compares loops with and without these runs.
"""
from __future__ import annotations

from itertools import takewhile

from .dra_events import CLAIM_UPDATE, claim_events
from .run_pops import pop_decided


def claims_plugin(fw):
    """The profile's DynamicResources, when it is the one plugin that reads a pod's claims."""
    for field, plugins in fw.pod_dynamic:
        if field == "resource_claims":
            return plugins[0] if len(plugins) == 1 and plugins[0].name == "DynamicResources" else None
    return None


def run_claims(plugin, dra, plan, first: list, pods) -> list:
    """The claims of a run's copies: `first` (the first copy's), then each of `pods`' while
    copy_claims finds claims of the plan's specs that no earlier copy names (a claim two pods
    name is allocated once the first is placed: the second's Filter reads its node selector)."""
    claims, seen = [first], {c.key for c in first}
    for pod in pods:
        mine = plugin.copy_claims(pod, dra, plan)
        if mine is None or any(c.key in seen for c in mine):
            break
        seen.update(c.key for c in mine)
        claims.append(mine)
    return claims


def copies_after(sim, fw, plugin, is_copy) -> int:
    """The copies at activeQ's head of the pod just bound (is_copy(pod): a copy of it but for
    its claims, which this asks), decided, popped and bound; returns how many."""
    cache, queue = sim.sched.cache, sim.queue
    if queue.hears(CLAIM_UPDATE):
        return 0
    head = queue.head_run(1)        # (the head alone first: most pods are no copy)
    if not head or not is_copy(head[0].pod):
        return 0
    first = plugin.copy_claims(head[0].pod, cache.dra)
    plan = plugin.copies_plan(first, cache, fw.kernel) if first is not None else None
    if plan is None:
        return 0
    run = queue.head_run(sim.copies_at_once)
    claims = run_claims(plugin, cache.dra, plan, first, (q.pod for q in takewhile(lambda q: is_copy(q.pod), run[1:])))
    rows = sim.sched.cycles.schedule_copies(run[0].pod, len(claims), None, (plugin, plan))
    if rows is None:
        return 0
    rows = rows.tolist()
    nodes = cache.table.nodes
    names = [nodes[row].name for row in rows]
    # the kernel wrote their rows; nothing before their bindings reads the cache's pods
    cache.place_written([q.pod for q in run[:len(rows)]], names, True)
    for pinfo, mine, row, name in zip(run, claims, rows, names):
        outcome = pop_decided(sim, pinfo, "activeQ")
        plugin.reserve_copy(pinfo.pod, mine, row, cache, plan)      # (assume's Reserve and PreBind)
        claim_events(sim)
        outcome.message = None
        sim.bound_to(pinfo.key, name, pinfo)
    return len(rows)
