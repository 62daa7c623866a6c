"""Runs of identical copies of pods whose cycles read other pods (PodTopologySpread,
InterPodAffinity), scheduled in one kernel call (_native/cross_copies via
ScheduleOne.schedule_cross_copies), give exactly what a cycle per copy gives: chosen node,
feasible and evaluated counts, FitError text -- and leave the cache's counters as the cycles
leave them."""
import copy
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kschedcore import Scheduler
from kschedcore.scheduler.schedule_one import ScheduleOne

ZONE, HOST = "topology.kubernetes.io/zone", "kubernetes.io/hostname"


def _nodes(n, zones, unlabelled=0, cpu="4"):
    out = []
    for i in range(n):
        labels = {HOST: f"n{i}"}
        if i >= unlabelled:
            labels[ZONE] = f"z{i % zones}"
        out.append({"metadata": {"name": f"n{i}", "labels": labels},
                    "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}})
    return out


def _pod(name, labels, spread=(), anti=None, affinity=None, preferred=None, cpu="100m", node=None, port=None):
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if port:
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": port}]
    if spread:
        spec["topologySpreadConstraints"] = list(spread)
    aff = {}
    if anti or preferred:
        aff["podAntiAffinity"] = {}
        if anti:
            aff["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = [anti]
        if preferred:
            aff["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": 10, "podAffinityTerm": preferred}]
    if affinity:
        aff["podAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [affinity]}
    if aff:
        spec["affinity"] = aff
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "default", "labels": dict(labels)}, "spec": spec}


def _term(key, app):
    return {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}


def _constraint(key, skew, action, app, min_domains=None):
    c = {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": action,
         "labelSelector": {"matchLabels": {"app": app}}}
    if min_domains is not None:
        c["minDomains"] = min_domains
    return c


def _run(nodes, pods, batch, objects=(), **options):
    """(results, the counters' state after) with runs of copies in the kernel or not."""
    sched = Scheduler(copy.deepcopy(nodes), copy.deepcopy(pods), **options)
    for obj in objects:
        sched.add_object(copy.deepcopy(obj))
    sched.cycles.batch_copies = batch
    results = [(r.pod, r.node, r.feasible_nodes, r.evaluated_nodes, r.message) for r in sched.schedule_pending()]
    c, t = sched.cache.counters, sched.cache.table
    state = (list(c.totals), t.domains[:c.n_rows].tolist(),
             {k: v[:len(t.row_of)].tolist() for k, v in c.rows.items()})
    return results, state


def _same(nodes, pods, objects=(), **options):
    taken = []
    original = ScheduleOne.schedule_cross_copies

    def counting(self, pod, count, counts):
        rows = original(self, pod, count, counts)
        taken.append(0 if rows is None else len(rows))
        return rows

    ScheduleOne.schedule_cross_copies = counting
    try:
        on = _run(nodes, pods, True, objects, **options)
    finally:
        ScheduleOne.schedule_cross_copies = original
    off = _run(nodes, pods, False, objects, **options)
    assert on[0] == off[0]
    assert on[1] == off[1]
    return sum(taken), on[0]


def _copies(template, n, prefix):
    out = []
    for i in range(n):
        p = copy.deepcopy(template)
        p["metadata"]["name"] = f"{prefix}-{i}"
        out.append(p)
    return out


def test_spread_runs_go_to_the_kernel():
    """Not vacuous: a run of spread copies is scheduled by the kernel (all but the first of
    each run), and a run ends where a copy fits nowhere (its FitError comes from its cycle)."""
    nodes = _nodes(30, 3, cpu="1")
    web = _pod("web", {"app": "web"}, [_constraint(ZONE, 1, "DoNotSchedule", "web"),
                                       _constraint(HOST, 1, "ScheduleAnyway", "web")], cpu="300m")
    taken, results = _same(nodes, _copies(web, 120, "web"))
    assert taken >= 80, taken
    failed = [r for r in results if r[1] is None]
    assert failed and "0/30 nodes are available" in failed[0][4]


def test_anti_affinity_runs_go_to_the_kernel():
    nodes = _nodes(40, 4)
    pods = _copies(_pod("db", {"app": "db"}, anti=_term(HOST, "db")), 45, "db")
    taken, results = _same(nodes, pods, percentage_of_nodes_to_score=30)
    assert taken >= 35, taken
    assert sum(r[1] is None for r in results) == 5      # one per host, then FitErrors


def test_copies_refused_by_placed_pods_anti_affinity():
    """Copies with no affinity terms of their own that placed pods' anti-affinity refuses
    (their runs decided as node-local ones, InterPodAffinity's verdicts taken once per row):
    what a cycle per copy gives, with either tie-break, by hostname and by zone."""
    nodes = _nodes(40, 4)
    for key, refused in ((HOST, 10), (ZONE, 10)):
        guards = [_pod(f"guard-{i}", {"app": "guard"}, node=f"n{i * 4}", anti=_term(key, "db")) for i in range(2)]
        pods = guards + _copies(_pod("db", {"app": "db"}), 60, "db")
        for tie_break in ("first", "random"):
            taken, results = _same(nodes, pods, percentage_of_nodes_to_score=50, tie_break=tie_break, seed=3)
            assert taken >= 50, taken
            used = {r[1] for r in results if r[0].startswith("default/db")}
            assert None not in used and len(used) == 40 - (2 if key == HOST else refused), used


def test_first_copy_registers_and_self_affinity():
    """The first pod's cycle registers the counters and, for self-affinity, finds no matching
    pod (the self-affine rule): the copies after it see the totals nonzero."""
    nodes = _nodes(20, 2)
    pods = _copies(_pod("a", {"app": "a"}, affinity=_term(ZONE, "a")), 30, "a")
    taken, results = _same(nodes, pods)
    assert taken >= 25 and all(r[1] is not None for r in results)
    zones = {int(r[1][1:]) % 2 for r in results}
    assert len(zones) == 1      # all in the first pod's zone


def test_min_domains_and_nodes_without_the_key():
    nodes = _nodes(24, 3, unlabelled=5)
    pods = _copies(_pod("m", {"app": "m"}, [_constraint(ZONE, 2, "DoNotSchedule", "m", min_domains=4)]), 40, "m")
    taken, _ = _same(nodes, pods)
    assert taken > 0


@st.composite
def workloads(draw):
    zones = draw(st.integers(1, 4))
    nodes = _nodes(draw(st.integers(3, 25)), zones, unlabelled=draw(st.integers(0, 2)),
                   cpu=draw(st.sampled_from(["1", "2", "4"])))
    apps = ["a", "b"]
    bound = []
    for i in range(draw(st.integers(0, 6))):
        app = draw(st.sampled_from(apps))
        bound.append(_pod(f"old-{i}", {"app": app}, node=f"n{draw(st.integers(0, len(nodes) - 1))}",
                          anti=_term(HOST, app) if draw(st.booleans()) else None))
    pending = []
    for r in range(draw(st.integers(1, 4))):
        app = draw(st.sampled_from(apps))
        labels = {"app": app} if draw(st.integers(0, 3)) else {"app": "other"}
        key = lambda: draw(st.sampled_from([ZONE, HOST]))
        spread = {}
        for _ in range(draw(st.integers(0, 3))):      # (key, action) pairs are unique
            k, action = key(), draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]))
            min_domains = draw(st.sampled_from([None, 1, 3, 5])) if action == "DoNotSchedule" else None
            spread[k, action] = _constraint(k, draw(st.integers(1, 3)), action, draw(st.sampled_from(apps)), min_domains)
        spread = list(spread.values())
        kind = draw(st.sampled_from(["none", "anti", "affinity", "preferred"]))
        template = _pod("t", labels, spread, cpu=draw(st.sampled_from(["100m", "300m", "700m"])),
                        anti=_term(key(), draw(st.sampled_from(apps))) if kind == "anti" else None,
                        affinity=_term(key(), draw(st.sampled_from(apps))) if kind == "affinity" else None,
                        preferred=_term(key(), draw(st.sampled_from(apps))) if kind == "preferred" else None,
                        port=draw(st.sampled_from([None, None, None, 8080])))
        pending += _copies(template, draw(st.integers(1, 12)), f"r{r}")
    return nodes, bound + pending


@settings(max_examples=200, deadline=None)
@given(workloads(), st.sampled_from([0, 50, 100]), st.sampled_from(["first", "random"]))
def test_runs_of_copies_identical(workload, pct, tie_break):
    nodes, pods = workload
    _same(nodes, pods, percentage_of_nodes_to_score=pct, tie_break=tie_break, seed=7)


def test_row_counters_and_domains_follow_the_kernel():
    """The counters after a kernel run are the cycles' (spread by hostname: row counters)."""
    nodes = _nodes(12, 3)
    pods = _copies(_pod("h", {"app": "h"}, [_constraint(HOST, 1, "DoNotSchedule", "h")]), 30, "h")
    _, results = _same(nodes, pods)
    placed = [r[1] for r in results if r[1] is not None]
    counts = np.unique(placed, return_counts=True)[1]
    assert len(placed) == 30 and counts.max() - counts.min() <= 1


def test_spread_by_a_label_two_nodes_share():
    """Spreading by a per-node label the kernel re-reads only on the row a copy lands on, and
    everywhere when the domain minimum moves -- not where two nodes share the value (both
    rows' verdicts move with one copy)."""
    for shared in (False, True):
        nodes = _nodes(12, 3)
        if shared:
            nodes[1]["metadata"]["labels"][HOST] = "n0"
        pods = _copies(_pod("h", {"app": "h"}, [_constraint(HOST, 1, "DoNotSchedule", "h")]), 40, "h")
        taken, results = _same(nodes, pods, percentage_of_nodes_to_score=50)
        assert taken >= 20, taken


def _capacity(nodes, spec, cross):
    from kschedcore import capacity
    tmpl = capacity.Template(capacity.podspec.default_pod(
        {"metadata": {"name": "t", "labels": {"app": "t"}},
         "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "250m"}}}],
                  **spec}}), "<test>")
    original = ScheduleOne.cross_copies_ready
    runs = []
    if not cross:
        ScheduleOne.cross_copies_ready = lambda self, pod: None
    else:
        def counting(self, pod):
            ready = original(self, pod)
            runs.append(ready is not None)
            return ready
        ScheduleOne.cross_copies_ready = counting
    try:
        sched = Scheduler(copy.deepcopy(nodes), seed=5)
        est = capacity.run(sched, [tmpl], 500)
    finally:
        ScheduleOne.cross_copies_ready = original
    return ([(b.pod, b.node) for b in est.bound], est.stop_reason, sched.utilization()), sum(runs)


def test_capacity_runs_cross_pod_copies_in_the_kernel():
    """cluster-capacity's run of copies: spreading and anti-affinity templates through the
    kernel's runs give the bindings and the stop reason of a cycle per copy."""
    nodes = _nodes(30, 3, cpu="2")
    specs = [{"topologySpreadConstraints": [_constraint(ZONE, 1, "DoNotSchedule", "t"),
                                            _constraint(HOST, 1, "ScheduleAnyway", "t")]},
             {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term(HOST, "t")]}}}]
    for spec in specs:
        on, used = _capacity(nodes, spec, True)
        off, _ = _capacity(nodes, spec, False)
        assert on == off
        assert used >= 1 and len(on[0]) >= 30, (used, len(on[0]))


def test_default_spreading_by_service_and_controller():
    """Pods without constraints of their own get the System default constraints (ScheduleAnyway,
    with the selector of their Service and ReplicaSet): the copies of one controller run in the
    kernel, and a pod of another controller (another default selector) ends the run."""
    nodes = _nodes(30, 3)
    objects = [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
                "spec": {"selector": {"app": "t"}}}]
    pods = []
    for rs in ("rs-a", "rs-b"):
        objects.append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": rs, "namespace": "default"},
                        "spec": {"selector": {"matchLabels": {"app": "t", "rs": rs}}}})
        template = _pod("t", {"app": "t", "rs": rs})
        template["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                                    "uid": rs, "controller": True}]
        pods += _copies(template, 40, rs)
    taken, results = _same(nodes, pods, objects)
    assert taken >= 60 and all(r[1] is not None for r in results)


UPSTREAM = Path(__file__).parent / "data" / "scheduler_perf"


@pytest.mark.parametrize("suite, case, workload", [
    ("topology_spreading", "TopologySpreading", "500Nodes"),
    ("topology_spreading", "PreferredTopologySpreading", "500Nodes"),
    ("topology_spreading", "SchedulingWithNodeInclusionPolicy", "500Nodes"),
    ("affinity", "SchedulingPodMatchingAntiAffinity", "500Nodes"),
    ("affinity", "SchedulingPodAntiAffinity", "500Nodes"),
    ("affinity", "SchedulingRequiredPodAntiAffinityWithNSSelector", "500Nodes"),
])
def test_upstream_workloads_place_as_without_runs(suite, case, workload, monkeypatch):
    """Upstream's scheduler_perf workloads through kube-scheduler's loop: every pod on the node
    it gets with the loop's runs of copies turned off (and the runs did take pods)."""
    from kschedcore.perf.config import load_perf_config
    from kschedcore.perf.runner import Runner
    from kschedcore.scheduler import runs

    tc = next(c for c in load_perf_config(UPSTREAM / suite / "performance-config.yaml") if c.name == case)
    wl = next(w for w in tc.workloads if w.name == workload)
    taken = []
    original = ScheduleOne.schedule_cross_copies

    def counting(self, ready, count, counts):
        rows = original(self, ready, count, counts)
        taken.append(len(rows))
        return rows

    bound = []
    for most in (runs.COPIES_AT_ONCE, 0):
        monkeypatch.setattr(runs, "COPIES_AT_ONCE", most)
        monkeypatch.setattr(ScheduleOne, "schedule_cross_copies", counting)
        r = Runner(tc, wl)
        r.run()
        bound.append(dict(r.sim.bound))
    assert bound[0] == bound[1]
    assert len(bound[0]) >= 100 and sum(taken) >= len(bound[0]) // 3, (len(bound[0]), sum(taken))
