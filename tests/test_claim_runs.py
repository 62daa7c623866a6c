"""Runs of copies with resource claims (scheduler/claim_runs.py): a loop deciding pods with
claims from one template in one kernel call does, pod by pod, what the loop with a cycle per
pod does -- the same nodes, the same devices for each claim, attempts, messages, listener
calls, cycles, queue and cache -- while rows run out of devices in the middle of a run."""
from hypothesis import given, settings, strategies as st

from kschedcore import Scheduler
from kschedcore.scheduler import claim_runs, runs
from kschedcore.scheduler.dra_events import resource_object
from kschedcore.scheduler.loop import Simulation
from kschedcore.sources.files import Workload

from invariants import check_cache
from test_loop_runs import Recorder

DRIVER = "gpu.example.com"
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def node(name, cpu="16"):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"}}}


def gpu_slice(node_name, n):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node_name}-gpus"},
            "spec": {"driver": DRIVER, "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "nodeName": node_name, "devices": [{"name": f"gpu-{i}"} for i in range(n)]}}


def template(name, count, requests=1):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [
                {"name": f"r{k}", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count}}
                for k in range(requests)]}}}}


def held(name, node_name, device):
    """A claim of no pod, allocated a device of the node (it stays in use until deleted)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "r0", "exactly": {"deviceClassName": "gpu"}}]}},
            "status": {"allocation": {
                "devices": {"results": [{"request": "r0", "driver": DRIVER, "pool": node_name, "device": device}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}}}


def pod(name, tmpl, cpu="500m", priority=0):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"priority": priority, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": tmpl}]}}


def cluster(devices, templates, claims=(), seed=3):
    """Nodes n0.. with devices[i] devices each (None: no slice), a class, the templates."""
    objects = {"DeviceClass": [CLASS], "ResourceSlice": [gpu_slice(f"n{i}", n) for i, n in enumerate(devices)
                                                          if n is not None],
               "ResourceClaimTemplate": list(templates), "ResourceClaim": list(claims)}
    return Scheduler.from_workload(Workload(nodes=[node(f"n{i}") for i in range(len(devices))], objects=objects),
                                   tie_break="random", seed=seed)


def run_loop(monkeypatch, make, copies):
    """What a loop over make()'s (Scheduler, pods, steps) did, with runs of up to `copies` (0:
    none), and how many pods the runs with claims took."""
    monkeypatch.setattr(runs, "COPIES_AT_ONCE", copies)
    took = []
    real = claim_runs.copies_after

    def counting(*args):
        n = real(*args)
        took.append(n)
        return n
    monkeypatch.setattr(claim_runs, "copies_after", counting)
    sched, pods, steps = make()
    rec = Recorder()
    sim = Simulation(sched, listener=rec)
    for p in pods:
        sim.add_pod(p)
    sim.run_until_idle(max_seconds=600)
    for step in steps:
        step(sim)
        sim.run_until_idle(max_seconds=600)
    check_cache(sim)
    outcomes = sorted((o.pod, o.node, o.attempts, o.message) for o in sim.outcomes.values())
    claims = sorted((key, repr(sim.sched.claim_allocations(key))) for key in sim.bound)
    queue = sorted((key, sim.queue.where(key)) for key in sim.pods)
    in_use = sorted(sim.sched.cache.dra.allocated_devices())
    return (outcomes, rec.calls, sim.cycles, claims, queue, in_use), sum(took)


def delete(*keys):
    def step(sim):
        for key in keys:
            sim.delete_pod(key)
    return step


def add(*pods):
    def step(sim):
        for p in pods:
            sim.add_pod(p)
    return step


def free_held(name):
    """A held claim deleted: its device is free, and no node row changes."""
    def step(sim):
        resource_object(sim, "DELETED", "ResourceClaim", {"metadata": {"name": name, "namespace": "default"}})
    return step


def devices_run_out():
    """Nodes of 0-6 devices (and one without any), claims of one and of two devices, more pods
    than devices: runs go on as rows run out of devices, and end before a pod that fits
    nowhere. Then pods leave, held claims free devices on full nodes (no row changes), and
    more pods come."""
    devices = [1, 2, 3, 6, 1, None, 4, 2, 5, 3]
    held_claims = [held("h0", "n3", "gpu-0"), held("h1", "n3", "gpu-1"), held("h2", "n6", "gpu-3")]
    sched = cluster(devices, [template("one", 1), template("two", 2), template("pair", 1, requests=2)],
                    held_claims)
    pods = ([pod(f"a{i}", "one") for i in range(9)] + [pod(f"b{i}", "two") for i in range(4)]
            + [pod(f"c{i}", "one", cpu="1") for i in range(6)] + [pod(f"d{i}", "pair") for i in range(3)])
    later = [pod(f"e{i}", "one") for i in range(6)]
    return sched, pods, [delete("default/a0", "default/a3", "default/b1"), free_held("h0"), free_held("h2"),
                         add(*later), free_held("h1"), delete("default/e0")]


def test_runs_with_claims_decide_as_cycles(monkeypatch):
    a, took = run_loop(monkeypatch, devices_run_out, runs.COPIES_AT_ONCE)
    b, none = run_loop(monkeypatch, devices_run_out, 0)
    assert a == b
    assert took > 5 and none == 0


def test_a_run_stops_taking_a_row_once_its_devices_are_used(monkeypatch):
    """Three nodes of two devices, the first with room for one pod's CPU less: eight pods of
    one device each. Every row runs out within the run."""
    def make():
        sched = cluster([2, 2, 2], [template("one", 1)])
        return sched, [pod(f"p{i}", "one") for i in range(8)], []
    a, took = run_loop(monkeypatch, make, runs.COPIES_AT_ONCE)
    b, _ = run_loop(monkeypatch, make, 0)
    assert a == b
    assert took == 4        # the first two pods' own cycles, four copies, two fit nowhere
    assert sorted(node for _, node, _, _ in a[0] if node) == ["n0", "n0", "n1", "n1", "n2", "n2"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(0, 5)), min_size=1, max_size=6),
       st.lists(st.tuples(st.sampled_from(["one", "two", "named"]), st.integers(1, 6), st.sampled_from(["250m", "4"])),
                min_size=1, max_size=4),
       st.lists(st.integers(0, 40), max_size=4), st.integers(0, 9))
def test_runs_with_claims_on_generated_clusters(devices, blocks, leaving, seed):
    """Random device counts per node, blocks of pods of two templates or naming one of three
    claims (and CPU sizes), pods leaving after: the loop with runs equals the loop without."""
    def make():
        sched = cluster(devices, [template("one", 1), template("two", 2)], [claim(f"x{k}") for k in range(3)],
                        seed=seed)
        pods = []
        for b, (tmpl, n, cpu) in enumerate(blocks):
            for i in range(n):
                p = pod(f"b{b}-{i}", tmpl, cpu)
                if tmpl == "named":     # x0, x0, x1, x1, x2, x2
                    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": f"x{i // 2 % 3}"}]
                pods.append(p)
        keys = [f"default/{p['metadata']['name']}" for p in pods]
        gone = [keys[i % len(keys)] for i in leaving]

        def leave(sim):
            for key in dict.fromkeys(gone):
                if key in sim.pods:
                    sim.delete_pod(key)
        return sched, pods, [leave, add(*[pod(f"z{i}", "one") for i in range(3)])]

    import pytest
    with pytest.MonkeyPatch.context() as mp:
        a, _ = run_loop(mp, make, runs.COPIES_AT_ONCE)
    with pytest.MonkeyPatch.context() as mp:
        b, _ = run_loop(mp, make, 0)
    assert a == b


def claim(name):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "r0", "exactly": {"deviceClassName": "gpu"}}]}}}


def test_pods_sharing_a_claim_are_no_copies_of_each_other(monkeypatch):
    """Pods naming one claim share it: once the first is placed, the next ones' claim is
    allocated, and their Filter reads its node selector -- not the devices a copy would take."""
    def make():
        sched = cluster([2, 2, 2, 2], [], [claim("x0"), claim("x1"), claim("x2")])
        named = [pod(f"s{i}", None) for i in range(6)]
        for i, p in enumerate(named):
            p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": f"x{min(i, 2)}"}]
        return sched, named, []
    a, _ = run_loop(monkeypatch, make, runs.COPIES_AT_ONCE)
    b, _ = run_loop(monkeypatch, make, 0)
    assert a == b
    assert len({node for key, node, _, _ in a[0] if key >= "default/s2"}) == 1     # x2's node


def capacity_run(monkeypatch, devices, tmpl, runs_on, cpu="1", max_limit=0, took=None):
    """capacity's answer for copies of a pod with a claim from `tmpl`, with runs of copies or a
    cycle per copy: the copies' nodes, the stop reason and every claim's devices. took: gets
    the copies each run placed."""
    from kschedcore.capacity import Template, estimate
    real = estimate._claim_copies

    def counting(sched, maker, pod, count, est):
        before = len(est.bound)
        ran = real(sched, maker, pod, count, est)
        if took is not None:
            took.append(len(est.bound) - before)
        return ran
    monkeypatch.setattr(estimate, "_claim_copies", counting if runs_on else lambda *args: False)
    sched = cluster(devices, [template("one", 1), template("two", 2), template("pair", 1, requests=2)], seed=4)
    p = pod("gpu", tmpl, cpu=cpu)
    del p["metadata"]["uid"]
    est = estimate.run(sched, [Template(pod=p, source="test")], max_limit)
    dra = sched.cache.dra
    devices_of = sorted((key, repr(c.allocation)) for key, c in dra.claims.items())
    return [(b.pod, b.node) for b in est.bound], est.stop_reason, devices_of


def test_capacity_copies_with_claims_as_cycles(monkeypatch):
    """capacity's copies of a pod with claims from templates, decided in runs: the answer, its
    nodes and every copy's devices as with a cycle per copy -- up to the device that runs out
    and to --max-limit."""
    devices = [1, 2, 3, 6, 1, None, 4, 2, 5, 3, 0, 8]
    for tmpl, cpu, limit in [("one", "1", 0), ("two", "1", 0), ("pair", "1", 0), ("one", "6", 0), ("one", "1", 17)]:
        took: list = []
        with monkeypatch.context() as m:
            with_runs = capacity_run(m, devices, tmpl, True, cpu, limit, took)
        with monkeypatch.context() as m:
            without = capacity_run(m, devices, tmpl, False, cpu, limit)
        assert with_runs == without, (tmpl, cpu, limit)
        assert sum(took) > len(with_runs[0]) // 2       # most copies placed by a run


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(0, 6)), min_size=1, max_size=8), st.sampled_from(["one", "two", "pair"]),
       st.sampled_from(["250m", "3"]))
def test_capacity_copies_with_claims_on_generated_clusters(devices, tmpl, cpu):
    import pytest
    with pytest.MonkeyPatch.context() as mp:
        a = capacity_run(mp, devices, tmpl, True, cpu)
    with pytest.MonkeyPatch.context() as mp:
        b = capacity_run(mp, devices, tmpl, False, cpu)
    assert a == b


def pending_run(devices, pods, batch, took=None):
    """schedule_pending over `pods` (with runs of copies or a cycle per pod): each result's node,
    feasible and processed nodes and message, and every claim's devices."""
    from kschedcore.scheduler import batches
    sched = cluster(devices, [template("one", 1), template("two", 2), template("pair", 1, requests=2)],
                    [claim(f"x{k}") for k in range(3)], seed=5)
    sched.cycles.batch_copies = batch
    real = batches.claim_copies_after

    def counting(*args):
        n = real(*args)
        if took is not None:
            took.append(n)
        return n
    batches.claim_copies_after = counting
    try:
        for p in pods:
            sched.add_pod(p)
        results = sched.schedule_pending()
    finally:
        batches.claim_copies_after = real
    dra = sched.cache.dra
    return ([(r.pod, r.node, r.feasible_nodes, r.message) for r in results],
            sorted((key, repr(c.allocation)) for key, c in dra.claims.items()))


def test_schedule_pending_runs_with_claims_as_cycles():
    """The batch path's runs of copies with claims: every result and every claim's devices as
    with a cycle per pod, rows running out of devices mid-run."""
    devices = [1, 2, 3, 6, 1, None, 4, 2, 5, 3]
    pods = ([pod(f"a{i}", "one") for i in range(12)] + [pod(f"b{i}", "two", cpu="2") for i in range(5)]
            + [pod(f"c{i}", "pair") for i in range(4)] + [pod(f"d{i}", "one") for i in range(8)])
    took: list = []
    assert pending_run(devices, pods, True, took) == pending_run(devices, pods, False)
    assert sum(took) > 15


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(0, 5)), min_size=1, max_size=6),
       st.lists(st.tuples(st.sampled_from(["one", "two", "pair", "named"]), st.integers(1, 6),
                          st.sampled_from(["250m", "4"])), min_size=1, max_size=4))
def test_schedule_pending_runs_with_claims_on_generated_clusters(devices, blocks):
    pods = []
    for b, (tmpl, n, cpu) in enumerate(blocks):
        for i in range(n):
            p = pod(f"b{b}-{i}", tmpl, cpu)
            if tmpl == "named":
                p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": f"x{i // 2 % 3}"}]
            pods.append(p)
    assert pending_run(devices, pods, True) == pending_run(devices, pods, False)
