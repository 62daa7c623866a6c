"""Scheduler.fork(): revert leaves the scheduler as it was, commit equals doing the same
directly, decisions in a fork equal a fresh scheduler's built from the fork's state."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedcore import Scheduler
from kschedcore.backend.cache.fork import ROW_ARRAYS
from kschedcore.errors import KSchedCoreError, StateError, UnsupportedError


def node(i, cpu=4, zone=None, taint=False, image=False):
    n = {"metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}",
                                                 "topology.kubernetes.io/zone": zone or f"z{i % 3}"}},
         "spec": {"taints": [{"key": "t", "value": "v", "effect": "NoSchedule"}] if taint else []},
         "status": {"allocatable": {"cpu": str(cpu), "memory": "8Gi", "pods": "20"},
                    "images": [{"names": ["img:1"], "sizeBytes": 300 * 2**20}] if image else []}}
    return n


def pod(name, cpu="500m", app="web", anti=False, spread=False, node_name=None, priority=0):
    spec = {"containers": [{"name": "c", "image": "img:1", "resources": {"requests": {"cpu": cpu}}}],
            "priority": priority}
    if anti:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}
    if spread:
        spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                              "whenUnsatisfiable": "DoNotSchedule",
                                              "labelSelector": {"matchLabels": {"app": app}}}]
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": "default", "labels": {"app": app},
                         "ownerReferences": [{"kind": "ReplicaSet", "name": f"{app}-abc", "uid": "x",
                                              "apiVersion": "apps/v1"}]}, "spec": spec}


def cluster(images=True):
    s = Scheduler([node(i, image=images and i % 2 == 0) for i in range(6)], seed=5)
    for i in range(8):
        s.queue(pod(f"base-{i}", app="web" if i % 2 else "db", spread=i % 3 == 0))
    s.schedule_pending()
    return s


def state(s):
    """Everything a revert must bring back, read through public attributes."""
    t = s.cache.table
    rows = sorted(t.row_of.values())
    return {"row_of": dict(t.row_of), "scan": t.scan_order.tolist(),
            "columns": {n: getattr(t, n)[rows].tolist() for n in ROW_ARRAYS},
            "placed": sorted((pl.pod.key, pl.node) for pl in s.cache.placements()),
            "on_node": {n: [p.key for p in s.cache.pods_on(n)] for n in t.row_of},
            "start": sorted((pl.pod.key, s.cache.start_time(pl.pod.key)) for pl in s.cache.placements()),
            "pending": [p.key for p in s.pending], "index": s.cycles.next_start_node_index,
            "utilization": s.utilization()}


def probe(s):
    """Decisions: a spreading pod, an anti-affine pod and a plain one, each not assumed."""
    return [s.schedule(pod(f"probe-{k}", cpu="250m", app=app, anti=k == 1, spread=k == 0)).node
            for k, app in enumerate(("web", "db", "other"))]


OPS = st.lists(st.tuples(st.sampled_from(["add_node", "remove_node", "relabel", "cordon", "drain", "queue",
                                          "schedule", "assume", "remove_pod", "nested", "scale"]),
                         st.integers(0, 50)), min_size=1, max_size=12)


def apply(s, ops, names, images=True):
    for op, k in ops:
        nodes = sorted(s.cache.table.row_of)
        placed = sorted(pl.pod.key for pl in s.cache.placements())
        try:
            if op == "add_node":
                s.add_node(node(100 + k, cpu=2 + k % 5, zone=f"z{k % 4}", taint=k % 5 == 0, image=images and k % 2 == 0))
            elif op == "remove_node" and len(nodes) > 1:
                s.remove_node(nodes[k % len(nodes)])
            elif op == "relabel" and nodes:
                n = node(int(nodes[k % len(nodes)][1:]), zone=f"z{k % 5}", image=images and k % 3 == 0)
                n["metadata"]["labels"]["extra"] = f"v{k}"
                s.update_node(n)
            elif op == "cordon" and nodes:
                s.cordon(nodes[k % len(nodes)])
            elif op == "drain" and nodes:
                s.drain(nodes[k % len(nodes)])
            elif op == "queue":
                s.queue(pod(f"{names}-{k}-{len(s.pending)}", cpu=f"{100 + 50 * k}m", app=("web", "db")[k % 2],
                            anti=k % 4 == 0, spread=k % 3 == 0))
            elif op == "schedule":
                s.schedule_pending()
            elif op == "assume" and nodes:
                s.schedule_one(pod(f"{names}-a{k}-{len(placed)}", cpu="200m", app="db"))
            elif op == "remove_pod" and placed:
                s.remove_pod(placed[k % len(placed)])
            elif op == "scale":
                s.scale("default/web", k % 7)
            elif op == "nested":
                with s.fork():
                    s.queue(pod(f"{names}-n{k}", app="web", spread=True))
                    s.schedule_pending()
        except KSchedCoreError:
            pass


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_revert_brings_back_everything(ops):
    s = cluster()
    before, decisions = state(s), probe(s)
    s.schedule(pod("warm"))          # a cycle before the fork leaves the same state behind
    before = state(s)
    f = s.fork()
    apply(s, ops, "f")
    f.revert()
    assert state(s) == before
    assert probe(s) == decisions


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_commit_equals_doing_it_directly(ops):
    a, b = _committed_and_direct(ops)
    assert state(a) == state(b)
    assert probe(a) == probe(b)


def _committed_and_direct(ops):
    """Two clusters after `ops`: one in a fork, committed; one directly."""
    a, b = cluster(), cluster()
    f = a.fork()
    apply(a, ops, "x")
    f.commit()
    apply(b, ops, "x")
    return a, b


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_decisions_in_a_fork_equal_a_fresh_schedulers(ops):
    s = cluster(images=False)
    with s.fork():
        # (nodes listing images are left out: a fresh snapshot has no stale image NumNodes, §7.3)
        apply(s, ops, "y", images=False)
        t = s.cache.table
        rows = sorted(t.row_of.values(), key=lambda r: t.order_key[r])   # in the order they were added
        fresh = Scheduler([t.nodes[r].raw for r in rows], seed=5)
        for pl in s.cache.placements():
            fresh.add_pod(dict(pl.pod.raw, spec=dict(pl.pod.raw["spec"], nodeName=pl.node)))
        for p in s.pending:
            fresh.queue(p.raw)
        fresh.cycles.next_start_node_index = s.cycles.next_start_node_index
        # the same filters and scores everywhere (tie-breaks aside: first in order on both)
        for sch in (s, fresh):
            sch.cycles.tie_first = True
        assert [r.node for r in (s.schedule(pod(f"q{k}", app="web", spread=k == 0, anti=k == 1))
                                 for k in range(3))] == \
               [r.node for r in (fresh.schedule(pod(f"q{k}", app="web", spread=k == 0, anti=k == 1))
                                 for k in range(3))]


def test_drain_moves_the_pods_and_revert_puts_them_back():
    s = cluster()
    before = state(s)
    with s.fork() as f:
        target = next(n for n in s.cache.table.row_of if s.cache.pods_on(n))
        evicted = s.drain(target)
        assert evicted and not s.cache.pods_on(target)
        results = s.schedule_pending()
        assert all(r.node != target for r in results)
    assert not f.open and state(s) == before


def test_only_the_innermost_fork_closes_and_objects_are_refused():
    s = cluster()
    outer = s.fork()
    inner = s.fork()
    with pytest.raises(KSchedCoreError):
        outer.revert()
    with pytest.raises(UnsupportedError):
        s.add_object({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                      "metadata": {"name": "p", "namespace": "default"}, "spec": {"minAvailable": 1}})
    inner.commit()
    outer.revert()
    with pytest.raises(StateError, match="fork: already reverted or committed"):
        outer.commit()


def test_fork_cost_follows_the_change_not_the_cluster():
    """A fork that places and removes a few pods saves those rows only."""
    s = Scheduler([node(i) for i in range(2000)])
    f = s.fork()
    for k in range(5):
        s.schedule_one(pod(f"p{k}"))
    assert len(f.journal.table.rows) <= 5 and f.journal.table.whole is None
    f.revert()
    assert not list(s.cache.placements())
    assert np.all(s.cache.table.requested == 0)


def test_preemption_in_a_fork_evicts_and_revert_brings_the_victims_back():
    s = Scheduler([node(i, cpu=2) for i in range(2)], seed=1)
    for i in range(4):
        s.schedule_one(pod(f"low-{i}", cpu="1"))
    before = state(s)
    with s.fork():
        result, victims = s.preempt(pod("high", cpu="2", priority=1000))
        assert result.node is not None and len(victims) == 2
        assert all(v not in s.cache for v in victims) and "default/high" in s.cache
    assert state(s) == before


def test_rows_the_kernel_wrote_keep_the_snapshots_image_counts_as_place_does():
    """A fork schedules pod by pod (the kernel may not write rows there), a cluster without one
    in kernel runs; both leave the last placement's row with the image counts the next cycle's
    UpdateSnapshot refreshes (found by the test above: a run refreshed it at once)."""
    a, b = _committed_and_direct([("add_node", 2), ("drain", 1), ("drain", 6), ("queue", 1), ("schedule", 0)])
    assert state(a) == state(b)


def test_image_ids_remembered_per_shape_follow_a_revert():
    """Nodes of one status.images share their image ids (NodeTable.images_memo); a revert cuts
    the names a fork interned, so what was remembered in the fork is forgotten: a later node
    with those images counts them under their new ids."""
    def node(name, *images):
        return {"metadata": {"name": name}, "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "images": [{"names": [i], "sizeBytes": 300 * 2 ** 20} for i in images]}}

    def counts(sched):
        t = sched.table
        return {t.image_ids[i]: int(t.image_count[i]) for i in range(len(t.image_ids)) if t.image_count[i]}

    sched = Scheduler([node("a", "base:1"), node("b", "base:1")])
    with sched.fork():
        sched.update_node(node("b", "new:1", "new:2"))  # a row saved, not the whole table
    sched.add_node(node("c", "other:1"))               # takes the id new:1 had in the fork
    sched.add_node(node("d", "new:1", "new:2"))        # the shape remembered in the fork
    fresh = Scheduler([node("a", "base:1"), node("b", "base:1"), node("c", "other:1"),
                       node("d", "new:1", "new:2")])
    assert counts(sched) == counts(fresh) == {"base:1": 2, "other:1": 1, "new:1": 1, "new:2": 1}
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "new:2"}]}}
    assert sched.explain(pod)["scores"] == fresh.explain(pod)["scores"]


def test_rows_in_scan_order_follow_node_adds_removes_and_reverts():
    """NodeTable.in_scan_order (a PreFilterResult's rows) keeps the snapshot's order, as
    filtering the whole scan order would, after nodes come and go and a fork is reverted."""
    def node(name, zone):
        return {"metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}

    sched = Scheduler([node(f"n{i}", "ab"[i % 2]) for i in range(6)])
    t = sched.table

    def check():
        order = t.scan_order
        for k in range(1, len(order) + 1):
            rows = list(np.random.default_rng(k).permutation(order)[:k])
            assert list(t.in_scan_order(rows)) == list(order[np.isin(order, rows)])

    check()
    sched.remove_node("n1")
    sched.add_node(node("m0", "c"))          # takes n1's row, at the tree's end
    check()
    with sched.fork():
        sched.add_node(node("m1", "a"))
        sched.remove_node("n4")
        check()
    check()


@pytest.mark.parametrize("structural_first", ["save_table", "add_node"])
def test_ids_interned_after_a_structural_change_are_cut_back_for_compiled_pods(structural_first):
    """A fork whose table was saved whole before a pod interned a new resource: at revert the
    interners come back from the saved copy, and the pods compiled in the fork (with the cut
    column) compile again -- they do not read past the table's columns."""
    gpu = dict(node(0), status={"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20", "nvidia.com/gpu": "1"}})
    s = Scheduler([dict(gpu, metadata={"name": f"g{i}"}) for i in range(3)], tie_break="first")
    s.queue({"metadata": {"name": "fpga", "namespace": "default"}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"example.com/fpga": "1"}, "limits": {"example.com/fpga": "1"}}}]}})
    for _ in range(2):
        f = s.fork(save_table=structural_first == "save_table")
        if structural_first == "add_node":
            s.add_node(dict(gpu, metadata={"name": "g9"}))
        assert [r.node for r in s.schedule_pending()] == [None]    # no node has the resource
        f.revert()
