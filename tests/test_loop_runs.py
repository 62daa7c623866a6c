"""The loop's runs of copies (scheduler/runs.py): a loop deciding identical pods at the queue's
head in one kernel call does, pod by pod, what the loop with a cycle per pod does -- the
same nodes, attempts, messages, listener calls in the same order, cycles, queue and cache."""
import copy

import pytest
from hypothesis import assume, given, settings, strategies as st

import volume_strategies as V
from kschedcore import Scheduler
from kschedcore.errors import UnsupportedError
from kschedcore.scheduler import runs
from kschedcore.scheduler.loop import Simulation, SimulationListener
from kschedcore.sources.generator import generate

from invariants import check_cache


COPIES_AFTER = runs.copies_after
FAILURES_AFTER = runs.failures_after


class Recorder(SimulationListener):
    def __init__(self):
        self.calls = []

    def attempted(self, key):
        self.calls.append(("attempted", key))

    def failed(self, key, message):
        self.calls.append(("failed", key, message))
        return False

    def bound(self, key, node):
        self.calls.append(("bound", key, node))

    def preempted(self, key, node, victims):
        self.calls.append(("preempted", key, node, tuple(victims)))


def node(name, cpu="4", zone="a"):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "30"}}}


def pod(name, cpu="500m", priority=0, port=None):
    c = {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}
    if port:
        c["ports"] = [{"containerPort": port, "hostPort": port}]
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"priority": priority, "containers": [c]}}


def run_loop(make, monkeypatch, copies, counted, failures=None):
    """(outcomes, listener calls, cycles, queue parts, placements) of a loop over make()'s
    Scheduler and pods, with runs of up to `copies` copies (0: none); `counted` gets how many
    pods each run of copies (or mixed templates) took, `failures` each run of failures."""
    monkeypatch.setattr(runs, "COPIES_AT_ONCE", copies)
    sched, pods, more = make()
    rec = Recorder()
    sim = Simulation(sched, listener=rec)
    real, real_failures = COPIES_AFTER, FAILURES_AFTER

    def counting(s, p, result):
        n = real(s, p, result)
        counted.append(n)
        return n

    def counting_failures(s, p):
        n = real_failures(s, p)
        if failures is not None:
            failures.append(n)
        return n
    monkeypatch.setattr(runs, "copies_after", counting)
    monkeypatch.setattr(runs, "failures_after", counting_failures)
    for p in pods:
        sim.add_pod(p)
    sim.run_until_idle(max_seconds=600)
    for step in more:                       # events after the first run, then the loop again
        step(sim)
        sim.run_until_idle(max_seconds=600)
    check_cache(sim)
    outcomes = sorted((o.pod, o.node, o.attempts, o.message) for o in sim.outcomes.values())
    queue = sorted((key, sim.queue.where(key)) for key in sim.pods)
    placed = sorted((pl.pod.key, pl.node) for pl in sim.sched.cache.placements())
    return outcomes, rec.calls, sim.cycles, placed, queue


def identical_then_full():
    """60 identical pods on 4 nodes of 4 CPUs: 32 fit, the rest wait unschedulable; a node
    comes and frees room for 8 more."""
    sched = Scheduler([node(f"n{i}") for i in range(4)], tie_break="random", seed=3)
    return sched, [pod(f"p{i}") for i in range(60)], [lambda sim: sim.add_node(node("n9"))]


def interleaved():
    """Two templates in alternating blocks, two priorities, and pods with host ports (not
    node-local: their own cycles)."""
    sched = Scheduler([node(f"n{i}", cpu="16", zone="ab"[i % 2]) for i in range(10)], tie_break="first")
    pods = []
    for b in range(12):
        for i in range(7):
            name = f"b{b}-{i}"
            if b % 4 == 3:
                pods.append(pod(name, port=8000 + i))
            else:
                pods.append(pod(name, cpu=["250m", "1"][b % 2], priority=[0, 10][b % 3 == 0]))
    return sched, pods, []


def generated():
    """The generator's mixed shapes (taints, selectors, affinity, ports, GPUs)."""
    w = generate(nodes=120, pods=1500, seed=9)
    sched = Scheduler.from_workload(w, tie_break="random", seed=2)
    pending, sched.pending = sched.pending, []
    return sched, pending, []


def cross_pod():
    """Copies whose cycles read other pods through the counters: zone spreading, required
    anti-affinity per host, preferred affinity -- blocks of each, and a node added after."""
    sched = Scheduler([node(f"n{i}", cpu="16", zone="abc"[i % 3]) for i in range(9)], tie_break="random", seed=5)
    pods = []
    for b, (kind, count) in enumerate([("spread", 25), ("anti", 7), ("prefer", 20), ("spread", 12)]):
        for i in range(count):
            p = pod(f"{kind}{b}-{i}")
            p["metadata"]["labels"] = {"app": kind}
            sel = {"matchLabels": {"app": kind}}
            if kind == "spread":
                p["spec"]["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                           "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}]
            elif kind == "anti":
                p["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": sel, "topologyKey": "kubernetes.io/hostname"}]}}
            else:
                p["spec"]["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "anti"}},
                                                       "topologyKey": "topology.kubernetes.io/zone"}}]}}
            pods.append(p)
    return sched, pods, [lambda sim: sim.add_node(node("n9", cpu="16", zone="c"))]


def pinned():
    """Daemon-set pods: required node affinity on metadata.name (a PreFilterResult of one node),
    more than the node holds; the scan start moves over every node meanwhile, and another
    template's pods come between blocks."""
    sched = Scheduler([node(f"n{i}", cpu="16") for i in range(7)], tie_break="random", seed=8)
    pods = []
    for b in range(3):
        for i in range(14):
            p = pod(f"d{b}-{i}", cpu="1")
            p["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                        "values": [f"n{b}" if b < 2 else "n0"]}]}]}}}
            pods.append(p)
        pods += [pod(f"o{b}-{i}") for i in range(5)]
    return sched, pods, [lambda sim: sim.delete_pod("default/d0-0")]


def claims():
    """Pods with one claim each, blocks of claims of six kinds: bound to PVs no node can
    refuse (they run), bound to a PV with zone affinity or a zone label, ReadWriteOncePod (four pods to a
    claim: the first placed puts it in use), on a CSI driver that nodes limit to three volumes
    (24 pods for 18 places: runs only as long as every node has room for all their copies),
    and unbound (WaitForFirstConsumer: Reserve binds a PV; half have none); a
    node comes after."""
    nodes = [node(f"n{i}", cpu="16", zone="ab"[i % 2]) for i in range(6)]
    sched = Scheduler(nodes, tie_break="random", seed=6)
    sched.add_object({"kind": "StorageClass", "metadata": {"name": "late"}, "provisioner": "kubernetes.io/no-provisioner",
                      "volumeBindingMode": "WaitForFirstConsumer"})
    for i in range(6):
        sched.add_object({"kind": "CSINode", "metadata": {"name": f"n{i}"},
                          "spec": {"drivers": [{"name": "limited.csi", "nodeID": f"n{i}", "allocatable": {"count": 3}}]}})
    pods = []
    for b, kind in enumerate(["plain", "zoned", "plain", "labelled", "rwop", "limited", "plain", "unbound", "plain"]):
        for i in range(24 if kind == "limited" else 12):
            name = f"{kind}{b}-{i // 4 if kind == 'rwop' else i}"     # four pods to a ReadWriteOncePod claim
            modes = ["ReadWriteOncePod"] if kind == "rwop" else ["ReadWriteOnce"]
            source = ({"csi": {"driver": "limited.csi", "volumeHandle": name}} if kind == "limited"
                      else {"hostPath": {"path": f"/d/{name}"}})
            pv = {"kind": "PersistentVolume", "metadata": {"name": f"pv-{name}"},
                  "spec": {"capacity": {"storage": "1Gi"}, "accessModes": modes, **source}}
            claim = {"kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
                     "spec": {"accessModes": modes, "resources": {"requests": {"storage": "1Gi"}}}}
            if kind == "unbound":
                pv["spec"]["storageClassName"] = claim["spec"]["storageClassName"] = "late"
            else:
                pv["spec"]["claimRef"] = {"namespace": "default", "name": name}
                claim["spec"]["volumeName"] = pv["metadata"]["name"]
                claim["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
            if kind == "labelled":
                pv["metadata"]["labels"] = {"topology.kubernetes.io/zone": "a"}
            if kind == "zoned":
                pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["b"]}]}]}}
            if (kind != "unbound" or i % 2) and (kind != "rwop" or i % 4 == 0):
                sched.add_object(pv)
            if kind != "rwop" or i % 4 == 0:
                sched.add_object(claim)
            p = pod(f"{kind}{b}-{i}")
            p["spec"]["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": name}}]
            pods.append(p)
    return sched, pods, [lambda sim: sim.add_node(node("n9", cpu="16", zone="b"))]


def all_different():
    """No two pods alike (a CPU request each), two priorities: runs of mixed templates only.
    Every ninth pod is too big for any node (a run ends before it; its own cycle fails), a
    gated pod waits in the pool, and a node comes after."""
    sched = Scheduler([node(f"n{i}", cpu="16", zone="ab"[i % 2]) for i in range(6)], tie_break="random", seed=7)
    pods = []
    for i in range(150):
        p = pod(f"d{i}", cpu="64" if i % 9 == 8 else f"{100 + 7 * i}m", priority=[0, 5][i % 3 == 0])
        if i == 20:
            p["spec"]["schedulingGates"] = [{"name": "later"}]
        pods.append(p)
    return sched, pods, [lambda sim: sim.add_node(node("n9", cpu="16", zone="b"))]


def storm():
    """More pods than fit (three sizes, two priorities: no pod below another's priority among
    the placed ones for the low ones; a big node tainted); then placed pods leave one or two at
    a time, and each departure requeues every pod that fits nowhere -- retried from backoffQ
    with activeQ empty, in runs of failures; at last the taint goes."""
    tainted = node("n4", cpu="16")
    tainted["spec"] = {"taints": [{"key": "x", "effect": "NoSchedule"}]}
    sched = Scheduler([node(f"n{i}") for i in range(4)] + [tainted], tie_break="random", seed=11)
    pods = [pod(f"s{i}", cpu=["700m", "1300m", "2100m"][i % 3], priority=[0, 0, 3][i % 3]) for i in range(60)]

    def leave(count):
        def step(sim):
            for key in sorted(sim.bound)[:count]:
                sim.delete_pod(key)
        return step
    def untaint(sim):   # heard by TaintToleration: the pods it rejected (on n4) come back
        sim.update_node(node("n4", cpu="16"))
    return sched, pods, [leave(1 + i % 2) for i in range(8)] + [untaint, leave(2)]


@pytest.mark.parametrize("make", [identical_then_full, interleaved, generated, cross_pod, pinned, claims,
                                  all_different, storm])
def test_runs_of_copies_decide_as_cycles(make, monkeypatch):
    with_runs, without = [], []
    a = run_loop(make, monkeypatch, runs.COPIES_AT_ONCE, with_runs)
    b = run_loop(make, monkeypatch, 0, without)
    assert a == b
    assert not any(without)
    if make is not generated:       # (the generator interleaves its templates: few runs)
        assert sum(with_runs) > 0   # runs took pods


def affine_waits_then_copies():
    """A pod needing a pod labelled app=db beside it (none is) waits unschedulable, rejected by
    InterPodAffinity, while 20 identical small pods come."""
    sched = Scheduler([node(f"n{i}") for i in range(4)], tie_break="first")
    waiting = pod("affine")
    waiting["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    return sched, [waiting] + [pod(f"s{i}") for i in range(20)], []


def big_waits_then_copies():
    """A pod too big for any node waits unschedulable, rejected by NodeResourcesFit, while 20
    identical small pods come."""
    sched = Scheduler([node(f"n{i}") for i in range(4)], tie_break="first")
    return sched, [pod("big", cpu="64")] + [pod(f"s{i}") for i in range(20)], []


def test_no_run_while_a_waiting_pod_hears_bindings(monkeypatch):
    # InterPodAffinity registers AssignedPodAdd: every binding may move the waiting pod, so
    # each copy has its own cycle
    taken, none = [], []
    with_runs = run_loop(affine_waits_then_copies, monkeypatch, runs.COPIES_AT_ONCE, taken)
    assert with_runs == run_loop(affine_waits_then_copies, monkeypatch, 0, none)
    assert not any(taken) and len(taken) == 20
    outcomes = {o[0]: o for o in with_runs[0]}
    assert outcomes["default/affine"][1] is None and all(outcomes[f"default/s{i}"][1] for i in range(20))


def test_runs_while_the_waiting_pods_cannot_hear_bindings(monkeypatch):
    # NodeResourcesFit hears assigned pods deleted, not added: no binding can move the big pod
    taken, none = [], []
    with_runs = run_loop(big_waits_then_copies, monkeypatch, runs.COPIES_AT_ONCE, taken)
    assert with_runs == run_loop(big_waits_then_copies, monkeypatch, 0, none)
    assert sum(taken) > 0
    outcomes = {o[0]: o for o in with_runs[0]}
    assert outcomes["default/big"][1] is None and all(outcomes[f"default/s{i}"][1] for i in range(20))


def nominated_then_copies(preemptor_cpu, spare=4, copies=40, pct=None):
    """A priority-100 pod preempts the four priority-0 pods of a 5-CPU node and is nominated
    there; 40 identical 500m pods follow while it waits. With 5 CPUs its nominated row is full
    for them; with 4.5 one copy still fits there (the copies' cycles up to that one see the
    row feasible: no run until it is full)."""
    nodes = [node(f"r{i}") for i in range(spare)] + [node(f"s{i}", cpu="5") for i in range(4)]
    bound = []
    for i in range(4):
        for j in range(4):
            p = pod(f"low-{i}-{j}", cpu="1")
            p["spec"]["nodeName"] = f"s{i}"
            bound.append(p)
    sched = Scheduler(nodes, bound, tie_break="random", seed=4, percentage_of_nodes_to_score=pct)
    return sched, [pod("preemptor", cpu=preemptor_cpu, priority=100)] + [pod(f"c{i}") for i in range(copies)], []


@pytest.mark.parametrize("cpu", ["5", "4500m"])
def test_runs_beside_nominated_pods_decide_as_cycles(cpu, monkeypatch):
    taken, none = [], []
    make = lambda: nominated_then_copies(cpu)
    with_runs = run_loop(make, monkeypatch, runs.COPIES_AT_ONCE, taken)
    assert with_runs == run_loop(make, monkeypatch, 0, none)
    outcomes = {o[0]: o for o in with_runs[0]}
    node = outcomes["default/preemptor"][1]
    assert node is not None and any(c[0] == "preempted" for c in with_runs[1])     # it preempted, then bound
    assert sum(taken) > 0
    sharing = [o[0] for o in outcomes.values() if o[1] == node and o[0] != "default/preemptor"]
    assert len(sharing) == (0 if cpu == "5" else 1), sharing


def test_runs_beside_nominated_pods_outside_the_scan(monkeypatch):
    """300 nodes scored by 10% (100 found a cycle): the nominated row may lie beyond the rows a
    copy's cycle examined, feasible for a later copy; runs look at every row it changed."""
    make = lambda: nominated_then_copies("4500m", spare=300, copies=700, pct=10)
    taken, none = [], []
    with_runs = run_loop(make, monkeypatch, runs.COPIES_AT_ONCE, taken)
    assert with_runs == run_loop(make, monkeypatch, 0, none)
    assert sum(taken) > 0


@settings(max_examples=60, deadline=None)
@given(V.volume_workloads(max_pending=4), st.integers(2, 5))
def test_runs_of_pods_with_volumes_decide_as_cycles(workload, k):
    """Generated storage (bound and unbound claims, PV affinity and zones, CSINode limits,
    ReadWriteOncePod, inline disks, ephemeral volumes): k copies of each pending pod in a
    row, each copy with the same claims (so placing one may change the next one's cycle)."""
    nodes, objects, bound, pending = workload

    def make():
        sched = Scheduler(copy.deepcopy(nodes), tie_break="first", percentage_of_nodes_to_score=50)
        for obj in copy.deepcopy(objects):
            sched.add_object(obj)
        for p in copy.deepcopy(bound):
            sched.add_pod(p)
        copies = []
        for p in pending:
            for c in range(k):
                q = copy.deepcopy(p)
                q["metadata"]["name"] = f"{p['metadata']['name']}-c{c}"
                copies.append(q)
        return sched, copies, []
    with pytest.MonkeyPatch.context() as mp:
        try:
            without = run_loop(make, mp, 0, [])
        except UnsupportedError:    # (a bound PV whose CSI translation fails on a migrated node)
            assume(False)
        assert run_loop(make, mp, runs.COPIES_AT_ONCE, []) == without


def test_a_pod_with_a_replaced_field_is_no_copy(monkeypatch):
    """A Pod made from another by dataclasses.replace keeps its parsed spec but not what it
    reads: a node selector replaced on one pod of a run sends it where the selector says, as
    its own cycle does (runs compare what compile and node_local read, not the spec)."""
    from dataclasses import replace

    from kschedcore.framework.framework import TEMPLATE_FIELDS
    from kschedcore.objects.pod import parse_pod

    def make():
        sched = Scheduler([node(f"n{i}", cpu="16") for i in range(5)] + [node("n5", cpu="2")], tie_break="first")
        pods = [parse_pod(pod(f"p{i}")) for i in range(20)]
        pinned = pod("pinned")
        pinned["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "n5"}     # (the least room)
        other = parse_pod(pinned)
        pods[9] = replace(pods[9], **{f: getattr(other, f) for f in TEMPLATE_FIELDS})
        assert pods[9].spec_fields is pods[0].spec_fields
        return sched, pods, []

    counted = []
    with_runs = run_loop(make, monkeypatch, runs.COPIES_AT_ONCE, counted)
    without = run_loop(make, monkeypatch, 0, [])
    assert with_runs == without
    assert sum(counted) >= 10
    assert ("default/p9", "n5") in with_runs[3]


def test_runs_of_failures_decide_as_cycles(monkeypatch):
    """The storm: each departure's retries are decided by the kernel in runs, failures and all,
    and every pod ends as with a cycle each -- outcomes, messages, attempts, listener calls."""
    failures, none = [], []
    with_runs = run_loop(storm, monkeypatch, runs.COPIES_AT_ONCE, [], failures)
    assert with_runs == run_loop(storm, monkeypatch, 0, [], none)
    assert sum(failures) > 20 and not any(none)
    messages = [c[2] for c in with_runs[1] if c[0] == "failed"]
    assert len(messages) > sum(failures) and all(m.startswith("0/5 nodes are available") for m in messages)
