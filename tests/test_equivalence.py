"""The equivalence cache (NodeKernel's per-template row verdicts, _native/equivalence.pyx) and
schedule_pending's batches of identical pods (NodeKernel.run_copies) never change a decision:
the same workloads scheduled with them and without them give identical results -- chosen
node, feasible and evaluated counts, FitError text, explain records -- also under churn (pods
and nodes coming and going, cordons), nominated pods, preemption and forks."""
import copy
import random

import pytest

from hypothesis import assume, given, settings, strategies as st

import strategies as S
import volume_strategies as V
from kschedcore import Scheduler
from kschedcore.errors import UnsupportedError
from kschedcore.scheduler.loop import Simulation
from kschedcore.scheduler.schedule_one import ScheduleOne


def _copies(pending, k, grouped=False):
    """k copies of each pending pod, interleaved (p0, p1, .., p0', p1', ..: the cache) or
    grouped (p0, p0', .., p1, p1', ..: batches)."""
    out = []
    for c, p in ((c, p) for p in pending for c in range(k)) if grouped else ((c, p) for c in range(k) for p in pending):
        q = copy.deepcopy(p)
        q["metadata"]["name"] = f"{p['metadata']['name']}-c{c}"
        out.append(q)
    return out


def _schedule(nodes, bound, pending, eq, records=True, **options):
    sched = Scheduler(nodes, bound + pending, **options)
    sched.cycles.equivalence = sched.cycles.batch_copies = eq
    sched.cycles.min_copies = 2          # small workloads: batches of any run
    return [_outcome(r) for r in sched.schedule_pending(records=records)], sched.cycles.frameworks


def _outcome(r):
    return (r.pod, r.node, r.feasible_nodes, r.evaluated_nodes, r.message, r.preemption_candidates,
            r.fit_error.reasons if r.fit_error else None)


def _same(nodes, bound, pending, records=True, **options):
    """The same results with the cache and batches as pod by pod (records=False: failures
    inside the kernel's runs, compared with the cycles that keep their records)."""
    on, fws = _schedule(nodes, bound, pending, True, records, **options)
    off, _ = _schedule(nodes, bound, pending, False, True, **options)
    assert on == off
    return fws


@settings(max_examples=150, deadline=None)
@given(S.workloads(max_pending=5), st.integers(2, 5), st.booleans(), st.sampled_from([0, 30, 100]),
       st.sampled_from(["first", "random"]), st.booleans())
def test_schedule_pending_identical(workload, k, grouped, pct, tie_break, records):
    nodes, bound, pending = workload
    _same(nodes, bound, _copies(pending, k, grouped), records, percentage_of_nodes_to_score=pct,
          tie_break=tie_break, seed=3)


def test_the_cache_is_used():
    """Not vacuous: repeated templates hit the cache (and the decisions still agree). The
    templates alternate pod by pod, so no run of identical pods is batched."""
    nodes = [{"metadata": {"name": f"n{i}", "labels": {"topology.kubernetes.io/zone": f"z{i % 3}"}},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20"}}} for i in range(300)]
    pods = [{"metadata": {"name": f"p{i}", "namespace": "default"},
             "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": f"{100 * (1 + i % 3)}m"}}}]}}
            for i in range(900)]
    fws = _same(nodes, [], pods, percentage_of_nodes_to_score=20)
    eq = next(iter(fws.values())).kernel.equivalence
    assert eq.hits >= 890 and eq.misses <= 10, (eq.hits, eq.misses)


def test_batches_are_used():
    """Not vacuous: runs of identical pods go through NodeKernel.run_copies, and a run ends
    where a pod fits nowhere (its own cycle gives the FitError) or another template starts."""
    nodes = [{"metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "2", "memory": "8Gi", "pods": "20"}}}
             for i in range(50)]
    pods = [{"metadata": {"name": f"p{i}", "namespace": "default"},
             "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m" if i < 50 else "1"}}}]}}
            for i in range(200)]
    batched = []
    sched = Scheduler(nodes, pods)           # runs of 49 and 149: above min_copies
    original = sched.cycles.schedule_copies
    sched.cycles.schedule_copies = lambda pod, count, counts=None: batched.append(count) or original(pod, count, counts)
    results = sched.schedule_pending()
    # 50 pods of 100m spread one a node, then one 1-CPU pod fits on each of the 50 nodes
    assert sum(r.node is None for r in results) == 100
    assert batched == [49, 149], batched
    off, _ = _schedule(nodes, [], pods, False)
    assert [_outcome(r) for r in results] == off


def test_explain_records_identical():
    rng = random.Random(5)
    nodes = [{"metadata": {"name": f"n{i}", "labels": {"pool": rng.choice("ab")}},
              "spec": {"taints": [{"key": "t", "value": "x", "effect": "PreferNoSchedule"}]} if i % 4 == 0 else {},
              "status": {"allocatable": {"cpu": str(rng.choice((2, 4))), "memory": "8Gi", "pods": "5"}}}
             for i in range(40)]
    pods = [{"metadata": {"name": f"p{i}", "namespace": "default"},
             "spec": {"nodeSelector": {"pool": "a"} if i % 3 == 0 else {},
                      "containers": [{"name": "c", "resources": {"requests": {"cpu": "1500m"}}}]}}
            for i in range(120)]
    records = []
    for eq in (True, False):
        sched = Scheduler(nodes, pods, percentage_of_nodes_to_score=100, tie_break="first")
        sched.cycles.equivalence = sched.cycles.batch_copies = eq
        records.append(sched.explain_pending())
    assert records[0] == records[1]
    assert any(r["node"] is None for r in records[0]) and any(r["node"] for r in records[0])


def _node(i, cpu=4):
    return {"metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}",
                                                    "topology.kubernetes.io/zone": f"z{i % 3}"}},
            "status": {"allocatable": {"cpu": str(cpu), "memory": "16Gi", "pods": "12"}}}


def _pod(k, rng):
    return {"metadata": {"name": f"p{k}", "namespace": "default"},
            "spec": {"priority": rng.choice((0, 0, 0, 100)),
                     "containers": [{"name": "c", "resources": {"requests": {
                         "cpu": rng.choice(("250m", "500m", "1")), "memory": rng.choice(("1Gi", "2Gi"))}}}]}}


def _churn(eq, seed, steps=40):
    """The whole loop under churn, preemption (nominated pods) and forks, in lockstep."""
    rng = random.Random(seed)
    sched = Scheduler([_node(i, rng.choice((2, 4))) for i in range(30)], seed=seed, percentage_of_nodes_to_score=40)
    sched.cycles.equivalence = sched.cycles.batch_copies = eq
    sim = Simulation(sched)
    k, next_node, trace = 0, 30, []
    for _ in range(steps):
        for _ in range(rng.randint(5, 25)):
            sim.add_pod(_pod(k, rng))
            k += 1
        for key in rng.sample(sorted(sim.pods), min(rng.randint(0, 8), len(sim.pods))):
            sim.delete_pod(key)
        r = rng.random()
        names = sorted(sched.table.row_of)
        if r < 0.15:
            sim.add_node(_node(next_node, rng.choice((2, 4))))
            next_node += 1
        elif r < 0.3:
            sim.update_node(dict(sched.cache.node(rng.choice(names)).raw, spec={"unschedulable": True}))
        elif r < 0.4 and len(names) > 20:
            name = rng.choice(names)
            for key in [p.key for p in sched.cache.pods_on(name)]:
                sim.delete_pod(key)
            sim.remove_node(name)
        elif r < 0.5 and not sim.binding:
            # a fork between loop runs: what-if cycles, then the revert
            with_fork = sched.fork()
            sched.schedule_pending()
            with_fork.revert()
        sim.run_until_idle()
        trace.append((sorted(sim.bound.items()), len(sim.preemptions)))
    return trace, sim


def test_loop_under_churn_identical():
    for seed in range(3):
        on, sim = _churn(True, seed)
        off, _ = _churn(False, seed)
        assert on == off, seed
    assert sim.preemptions, "no preemption happened: the nominated path went untested"


def _small(cpu="2"):
    nodes = [{"metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "10"}}}
             for i in range(3)]
    sched = Scheduler(nodes, tie_break="first", percentage_of_nodes_to_score=100)
    return sched


def _p(name, cpu, priority=0):
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"priority": priority, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}


def test_nominated_pods_counted_for_a_cycle_are_seen():
    """Nominated pods' requests enter the table for a cycle without bumping generations (the
    table's epoch changes instead): a template's verdict on a row made while they were not
    counted (a pod of higher priority) is not reused while they are (the same template, lower
    priority)."""
    from kschedcore.backend.cache.nominated import NominatedUsage
    from kschedcore.backend.queue.nominator import Nominator
    for eq in (True, False):
        sched = _small()
        sched.cycles.equivalence = eq
        usage = NominatedUsage(sched.cache)
        nominator = Nominator(listener=usage)
        nominator.add(sched.parse_pod(_p("x", "2", priority=50)), "n0")
        high = sched.cycles.attempt(sched.parse_pod(_p("high", "1", priority=100)), nominator, usage.counted)
        low = sched.cycles.attempt(sched.parse_pod(_p("low", "1", priority=0)), nominator, usage.counted)
        assert (high.node, low.node) == ("n0", "n1"), eq


def test_a_forks_revert_is_seen():
    """A fork's revert puts generations back: a row may come back to a generation it had in the
    fork with other contents (the table's epoch changes on revert)."""
    for eq in (True, False):
        sched = _small()
        sched.cycles.equivalence = eq
        sched.schedule(_p("warm", "1"))      # compiled before the fork: nothing new to intern in it
        fork = sched.fork()
        assert sched.schedule_one(_p("a", "1")).node == "n0"  # n0's generation g + 1
        assert sched.schedule_one(_p("b", "1")).node == "n1"  # n0's verdict made at g + 1
        fork.revert()                                         # n0 at g again, empty
        for i in range(3):                                    # n0 at g + 1 again, and full
            sched.assume(sched.parse_pod(_p(f"big{i}", "2")), f"n{i}")
        assert sched.schedule_one(_p("c", "1")).node is None, eq


def test_failed_results_without_records():
    """schedule_pending(records=False) keeps a failed cycle's outcome, not its per-node record:
    the same messages and candidates, no cycle."""
    nodes = [{"metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "1", "memory": "8Gi", "pods": "5"}}}
             for i in range(20)]
    for node in nodes[:4]:      # UnschedulableAndUnresolvable there: "Preemption is not helpful"
        node["spec"] = {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}
    pods = [_p(f"p{i}", "600m", priority=i % 2) for i in range(30)]
    kept = Scheduler(nodes, pods).schedule_pending()
    lean = Scheduler(nodes, pods).schedule_pending(records=False)
    assert [(r.pod, r.node, r.message, r.preemption_candidates) for r in kept] == \
        [(r.pod, r.node, r.message, r.preemption_candidates) for r in lean]
    failed = [r for r in kept if r.node is None]
    assert failed and all(r.cycle is not None for r in failed)
    assert any("No preemption victims found" in r.message and "Preemption is not helpful" in r.message
               for r in lean if r.node is None), [r.message for r in failed][:2]
    assert all(r.cycle is None for r in lean if r.node is None)


def _scored_workload(seed):
    """Many alike nodes (ties), some with PreferNoSchedule taints and labels that pods prefer,
    and runs of identical pods: the batches' normalised and unnormalised selections."""
    rng = random.Random(seed)
    nodes = []
    for i in range(80):
        node = _node(i, rng.choice((4, 4, 8)))
        if rng.random() < 0.3:
            node["spec"] = {"taints": [{"key": "t", "value": str(rng.randint(0, 1)), "effect": "PreferNoSchedule"}]}
        node["metadata"]["labels"]["disk"] = rng.choice(("ssd", "hdd"))
        nodes.append(node)
    pods = []
    for k in range(30):
        pod = _pod(k, rng)
        pod["spec"]["priority"] = 0
        if k % 3 == 1:
            pod["spec"]["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [
                    {"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}}
        if k % 3 == 2:
            pod["spec"]["tolerations"] = [{"key": "t", "operator": "Equal", "value": "0", "effect": "PreferNoSchedule"}]
        pods.append(pod)
    return nodes, pods


def test_batches_with_normalised_scores_and_ties_identical():
    for seed in range(4):
        nodes, pods = _scored_workload(seed)
        for pct in (0, 20, 100):
            for tie_break in ("first", "random"):
                fws = _same(nodes, [], _copies(pods, 12, grouped=True), percentage_of_nodes_to_score=pct,
                            tie_break=tie_break, seed=seed)
                assert sum(fw.passes for fw in fws.values()) < 30 * 12    # batches ran


def _sparse_workload(seed, n_nodes=200, n_pods=400):
    """Pods that fit on few nodes (a pool of ~10%, GPUs on ~5%) between ones that fit
    anywhere, with nodes filling up and some pods failing: the cycles skip the positions their
    slot knows reject them (EquivalenceCache.skip_bits) and write no statuses."""
    rng = random.Random(seed)
    nodes = []
    for i in range(n_nodes):
        node = _node(i, rng.choice((2, 4)))
        node["metadata"]["labels"]["pool"] = "batch" if rng.random() < 0.1 else "general"
        if rng.random() < 0.05:
            node["status"]["allocatable"]["example.com/gpu"] = "2"
        nodes.append(node)
    pods = []
    for k in range(n_pods):
        pod = _pod(k, rng)
        pod["spec"]["priority"] = 0
        kind = rng.choice(("any", "pool", "gpu", "pool"))
        if kind == "pool":
            pod["spec"]["nodeSelector"] = {"pool": "batch"}
        elif kind == "gpu":
            resources = pod["spec"]["containers"][0]["resources"]
            resources["requests"]["example.com/gpu"] = "1"
            resources["limits"] = {"example.com/gpu": "1"}
        pods.append(pod)
    return nodes, pods


def test_sparse_templates_identical():
    for seed in range(3):
        nodes, pods = _sparse_workload(seed)
        for pct in (0, 100):
            _same(nodes, [], pods, percentage_of_nodes_to_score=pct, tie_break="random", seed=seed)
        # statuses of cycles that skipped positions, read through explain
        records = []
        for eq in (True, False):
            sched = Scheduler(nodes, pods[:150], tie_break="first")
            sched.cycles.equivalence = sched.cycles.batch_copies = eq
            records.append(sched.explain_pending())
        assert records[0] == records[1]
        assert any(r["node"] is None for r in records[0])


def _leaving_trace(sched, arrivals, rng, most):
    """The loop over `sched`: each step's pods arrive, up to `most` bound pods leave, the loop
    runs until idle; the bound pods after each step."""
    sim = Simulation(sched)
    trace = []
    for pods in arrivals:
        for pod in pods:
            sim.add_pod(pod)
        for key in rng.sample(sorted(sim.bound), min(rng.randint(0, most), len(sim.bound))):
            sim.delete_pod(key)
        sim.run_until_idle()
        trace.append(sorted(sim.bound.items()))
    return trace


def _sparse_churn(eq, seed, steps=30):
    """The loop over sparse templates while pods leave: rows that rejected a template fit it
    again, which only a replayed change can tell its slot."""
    rng = random.Random(seed)
    nodes, pods = _sparse_workload(seed, n_nodes=120, n_pods=steps * 12)
    sched = Scheduler(nodes, seed=seed, tie_break="first")
    sched.cycles.equivalence = sched.cycles.batch_copies = eq
    return _leaving_trace(sched, [pods[k * 12:(k + 1) * 12] for k in range(steps)], rng, 10), sched


def test_sparse_templates_under_churn_identical():
    for seed in range(3):
        on, _ = _sparse_churn(True, seed)
        off, _ = _sparse_churn(False, seed)
        assert on == off, seed


def test_a_slot_behind_the_change_log_starts_again(monkeypatch):
    """A slot unused for more changes than the log holds cannot replay them: it forgets its
    skip bits (a log of 8 here; each placement and departure is a change)."""
    from kschedcore.backend.cache import node_table
    monkeypatch.setattr(node_table, "CHANGE_LOG_LENGTH", 8)
    for seed in range(2):
        on, sched = _sparse_churn(True, seed)
        off, _ = _sparse_churn(False, seed)
        assert on == off, seed
    assert len(sched.table.change_log) == 8 and sched.table.change_seq[0] > 8


def _wide_scored_workload(seed, n_nodes=450):
    """Hundreds of nodes (several 64-position words of a slot, WordSum) with 0-3 intolerable
    PreferNoSchedule taints and labels two preferred terms weigh, the highest raw scores rare:
    the raw TaintToleration and NodeAffinity maxima differ between windows, many totals tie."""
    rng = random.Random(seed)
    nodes = []
    for i in range(n_nodes):
        node = _node(i, rng.choice((4, 4, 8)))
        node["status"]["allocatable"]["pods"] = "30"
        roll = rng.random()
        if roll < 0.15:
            node["spec"] = {"taints": [{"key": f"t{j}", "value": "x", "effect": "PreferNoSchedule"}
                                       for j in range(1 if roll > 0.01 else 3)]}
        node["metadata"]["labels"]["disk"] = "ssd" if rng.random() < 0.01 else "hdd"
        # zones at random: the scan (zones in turn) is not the nodes' order, which "first" follows
        node["metadata"]["labels"]["topology.kubernetes.io/zone"] = rng.choice(("z0", "z1", "z2", "z2"))
        node["metadata"]["labels"]["net"] = rng.choice(("fast", "slow"))
        nodes.append(node)
    pods = []
    for k in range(6):
        pod = _pod(k, rng)
        pod["spec"]["priority"] = 0
        if k % 2 == 0:
            pod["spec"]["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [
                    {"key": "disk", "operator": "In", "values": ["ssd"]}]}},
                {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [
                    {"key": "net", "operator": "In", "values": ["fast"]}]}}]}}
        if k % 3 == 1:
            pod["spec"]["tolerations"] = [{"key": "t0", "operator": "Exists", "effect": "PreferNoSchedule"}]
        pods.append(pod)
    return nodes, pods


def test_word_summaries_identical():
    """Interleaved templates (each cycle through its slot's columns) over several words: the
    selection read through word summaries is the pass over the positions, in both tie modes
    and with windows that wrap and cut words at both ends."""
    for seed in range(3):
        nodes, pods = _wide_scored_workload(seed)
        for pct in (0, 25, 100):
            for tie_break in ("first", "random"):
                _same(nodes, [], _copies(pods, 60), percentage_of_nodes_to_score=pct, tie_break=tie_break, seed=seed)


def _wide_churn(eq, seed, steps=25):
    """The loop over the wide scored workload while pods leave (rows of a summarised word
    change; raw maxima rise and fall)."""
    rng = random.Random(seed)
    nodes, pods = _wide_scored_workload(seed, n_nodes=300)
    sched = Scheduler(nodes, seed=seed, tie_break="random", percentage_of_nodes_to_score=30)
    sched.cycles.equivalence = sched.cycles.batch_copies = eq
    arrivals = [[dict(copy.deepcopy(pods[(step + c) % len(pods)]), metadata={"name": f"w{step}-{c}", "namespace": "default"})
                 for c in range(40)] for step in range(steps)]
    return _leaving_trace(sched, arrivals, rng, 30)


def test_word_summaries_under_churn_identical():
    for seed in range(2):
        assert _wide_churn(True, seed) == _wide_churn(False, seed), seed


def test_batches_of_mixed_templates_are_used(monkeypatch):
    """Interleaved templates go to the kernel in runs (ScheduleOne.schedule_batch); their
    decisions are the per-pod cycles' (the tests above compare both ways)."""
    from kschedcore.scheduler.schedule_one import ScheduleOne
    placed = []
    original = ScheduleOne.schedule_batch

    def spy(self, fw, cps, counts, may_fail=None):
        out = original(self, fw, cps, counts, may_fail)
        placed.append(0 if out is None else int((out[0] >= 0).sum()))
        return out
    monkeypatch.setattr(ScheduleOne, "schedule_batch", spy)
    nodes, pods = _wide_scored_workload(0, n_nodes=200)
    _same(nodes, [], _copies(pods, 20), tie_break="random", seed=1)
    assert sum(placed) > 60, placed


def _failing_workload(seed, n_nodes=60, n_pods=500):
    """Nodes that fill up (tainted, labelled, with extended resources), pods of many templates
    that fail more and more often: some of higher priority (preemption may find victims: their
    failure ends a run), some with preemptionPolicy Never."""
    rng = random.Random(seed)
    nodes, pods = _sparse_workload(seed, n_nodes, n_pods)
    for node in nodes[:n_nodes // 6]:
        node["spec"] = {"taints": [{"key": "k", "value": rng.choice("ab"), "effect": "NoSchedule"}]}
    for pod in pods:
        r = rng.random()
        if r < 0.1:
            pod["spec"]["priority"] = 100
        elif r < 0.2:
            pod["spec"]["preemptionPolicy"] = "Never"
            pod["spec"]["priority"] = 100
        if rng.random() < 0.2:
            pod["spec"]["tolerations"] = [{"key": "k", "operator": "Equal", "value": "a", "effect": "NoSchedule"}]
    return nodes, pods


def test_failures_inside_batches_identical(monkeypatch):
    """Without records, a pod that fits nowhere stays in the kernel's run where its PostFilters
    settle without its cycle; its result (FitError reasons and text, the PostFilter message,
    no candidates) is its own cycle's, and so is every decision after it."""
    from kschedcore.scheduler.schedule_one import ScheduleOne
    inside, original = [], ScheduleOne.schedule_batch

    def spy(self, fw, cps, counts, may_fail=None):
        out = original(self, fw, cps, counts, may_fail)
        inside.append(0 if out is None else int((out[0] < 0).sum()))
        return out
    monkeypatch.setattr(ScheduleOne, "schedule_batch", spy)
    for seed in range(3):
        nodes, pods = _failing_workload(seed)
        for pct in (0, 100):
            _same(nodes, [], pods, False, percentage_of_nodes_to_score=pct, tie_break="random", seed=seed)
    assert sum(inside) > 200, inside
    results = Scheduler(nodes, pods).schedule_pending(records=False)
    assert any("preemption: not eligible due to preemptionPolicy=Never." in r.message for r in results if r.message)
    assert any(r.preemption_candidates for r in results), "no pod had victims: the ending of a run went untested"


def test_reasons_remembered_are_reasons_made(monkeypatch):
    """Framework.histogram's memo (by the kernel's FitError counts) gives what the plugins give
    (taints, resources, node affinity, pod affinity and spreading, PreFilterResult names)."""
    import kschedcore.framework.framework as framework
    for seed in range(3):
        nodes, pods = _failing_workload(seed, n_nodes=30, n_pods=200)
        rng = random.Random(seed)
        for k, pod in enumerate(pods):
            if rng.random() < 0.2:
                pod["metadata"]["labels"] = {"app": "a"}
                pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}]}}
            elif rng.random() < 0.1:
                pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                            "values": [f"n{rng.randrange(40)}"]}]}]}}}
        remembered, _ = _schedule(nodes, [], pods, True, False)
        monkeypatch.setattr(framework, "REASONS_MEMO_ENTRIES", 0)     # a new memo every time
        made, _ = _schedule(nodes, [], pods, True, False)
        monkeypatch.undo()
        assert remembered == made
        assert len({r[4] for r in made if r[1] is None}) > 5


def test_reasons_remembered_follow_the_node_count():
    """The same FitError counts with more nodes left out by a PreFilterResult: another text."""
    sched = Scheduler([_node(i) for i in range(3)])
    pod = _p("x", "1")
    pod["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gone"]}]}]}}}
    messages = []
    for i in (3, 4):
        messages.append(sched.schedule_one(dict(pod, metadata={"name": f"x{i}", "namespace": "default"})).message)
        sched.add_node(_node(i))
    assert messages == [f"0/{n} nodes are available: {n} node(s) didn't satisfy plugin(s) [NodeAffinity]. no new "
                        f"claims to deallocate, preemption: 0/{n} nodes are available: {n} Preemption is not "
                        "helpful for scheduling." for n in (3, 4)], messages


def _port_pods(seed, n):
    rng = random.Random(seed)
    pods = []
    for k in range(n):
        pod = _pod(k, rng)
        pod["spec"]["priority"] = 0
        if rng.random() < 0.6:        # a few host ports, shared between templates
            pod["spec"]["containers"][0]["ports"] = [{"containerPort": p, "hostPort": p, "protocol": "TCP"}
                                                     for p in rng.sample((80, 443, 9100), rng.randint(1, 2))]
        pods.append(pod)
    return pods


def test_host_port_templates_identical():
    """Pods with host ports go through their template's slot (NodePorts reads the row, whose
    used ports change with its generation): the same decisions and FitErrors as without."""
    for seed in range(3):
        nodes = [_node(i, 8) for i in range(150)]
        for pct in (0, 100):
            _same(nodes, [], _port_pods(seed, 500), percentage_of_nodes_to_score=pct, tie_break="random", seed=seed)


def _ports_churn(eq, seed, steps=20):
    """The loop while pods with host ports leave: their rows' ports are free again."""
    rng = random.Random(seed)
    pods = _port_pods(seed, steps * 15)
    sched = Scheduler([_node(i, 8) for i in range(60)], seed=seed, tie_break="first")
    sched.cycles.equivalence = sched.cycles.batch_copies = eq
    return _leaving_trace(sched, [pods[k * 15:(k + 1) * 15] for k in range(steps)], rng, 12)


def test_host_port_templates_under_churn_identical():
    for seed in range(3):
        assert _ports_churn(True, seed) == _ports_churn(False, seed), seed


def _cross_pod_workload(seed, n_nodes=90, n_pods=480):
    """Pods whose cycles run PodTopologySpread and InterPodAffinity (required and preferred,
    hostname and zone keys) beside node-local plugins that reject (taints, selectors, full
    nodes). Two nodes share a hostname label (one domain, two rows) and some nodes lack the
    zone label: a placement changes counts on rows whose generation it does not bump."""
    rng = random.Random(seed)
    nodes = []
    for i in range(n_nodes):
        labels = {"kubernetes.io/hostname": "twin" if i in (1, 2) else f"n{i}", "pool": rng.choice("ab")}
        if i % 11:
            labels["topology.kubernetes.io/zone"] = f"z{i % 4}"
        node = {"metadata": {"name": f"n{i}", "labels": labels},
                "status": {"allocatable": {"cpu": str(rng.choice((1, 2, 4))), "memory": "8Gi", "pods": "5"}}}
        if i % 9 == 0:
            node["spec"] = {"taints": [{"key": "k", "value": "v", "effect": rng.choice(("NoSchedule", "PreferNoSchedule"))}]}
        nodes.append(node)
    selector = lambda app: {"matchLabels": {"app": app}}
    kinds = [
        lambda app: {"topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": selector(app)},
            {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": selector(app)}]},
        lambda app: {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": selector(app), "topologyKey": "kubernetes.io/hostname"}]}}},
        lambda app: {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": selector(app), "topologyKey": "topology.kubernetes.io/zone"}]}}},
        lambda app: {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "podAffinityTerm": {"labelSelector": selector(app), "topologyKey": "topology.kubernetes.io/zone"}}]},
            "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 3, "podAffinityTerm": {"labelSelector": selector("a0"), "topologyKey": "kubernetes.io/hostname"}}]}}},
    ]
    pods = []
    for k in range(n_pods):
        app = f"a{rng.randrange(3)}"
        spec = dict(rng.choice(kinds)(app))
        if rng.random() < 0.3:
            spec["nodeSelector"] = {"pool": "a"}
        if rng.random() < 0.3:
            spec["tolerations"] = [{"key": "k", "operator": "Exists"}]
        spec["containers"] = [{"name": "c", "resources": {"requests": {"cpu": rng.choice(("100m", "300m", "700m"))}}}]
        pods.append({"metadata": {"name": f"p{k}", "namespace": "default", "labels": {"app": app}}, "spec": spec})
    return nodes, pods


def test_cross_pod_cycles_identical():
    """Cycles where only PodTopologySpread / InterPodAffinity act take the node-local part of
    each row from the template's entries and run the cross-pod Filters and Score per row:
    every per-node status and score (explain records), the FitErrors and the decisions under
    churn are the uncached pass's -- and the entries are used (hits)."""
    for seed in range(3):
        nodes, pods = _cross_pod_workload(seed)
        for pct in (0, 100):
            records, hits = [], []
            for eq in (True, False):
                sched = Scheduler(nodes, pods, percentage_of_nodes_to_score=pct, tie_break="first")
                sched.cycles.equivalence = sched.cycles.batch_copies = eq
                records.append(sched.explain_pending())
                hits.append(next(iter(sched.cycles.frameworks.values())).kernel.equivalence.hits)
            assert records[0] == records[1], (seed, pct)
            assert hits[0] > 300 and hits[1] == 0, hits
            assert any(r["node"] is None for r in records[0]) and sum(bool(r["node"]) for r in records[0]) > 100
        _same(nodes, [], pods, percentage_of_nodes_to_score=30, tie_break="random", seed=seed)


def _cross_pod_churn(eq, seed, steps=25):
    rng = random.Random(seed)
    nodes, pods = _cross_pod_workload(seed, n_pods=600)
    sched = Scheduler(nodes, seed=seed, percentage_of_nodes_to_score=50)
    sched.cycles.equivalence = sched.cycles.batch_copies = eq
    sim = Simulation(sched)
    trace = []
    for step in range(steps):
        for pod in pods[step * 24:(step + 1) * 24]:
            sim.add_pod(pod)
        for key in rng.sample(sorted(sim.bound), min(rng.randint(0, 10), len(sim.bound))):
            sim.delete_pod(key)
        sim.run_until_idle()
        trace.append(sorted(sim.bound.items()))
    return trace


def test_cross_pod_cycles_under_churn_identical():
    """Departures change domain counts (and a departed pod's row generation): the loop's
    decisions with the entries are the uncached pass's."""
    for seed in range(2):
        assert _cross_pod_churn(True, seed) == _cross_pod_churn(False, seed), seed


def test_batched_copies_keep_each_pods_priority_and_start_time():
    """Pods of one template may differ in priority and startTime (neither is a template field):
    a batch records each pod's own, as cycles pod by pod do (preemption reads both)."""
    nodes = [{"metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20"}}}
             for i in range(5)]
    pods = [{"metadata": {"name": f"p{i}", "namespace": "default"},
             "spec": {"priority": i % 3, "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}]},
             "status": {"startTime": f"2024-01-01T00:00:0{i}Z"} if i % 2 else {}}
            for i in range(8)]
    seen = []
    for eq in (True, False):
        sched = Scheduler(copy.deepcopy(nodes), copy.deepcopy(pods))
        sched.cycles.equivalence = sched.cycles.batch_copies = eq
        sched.schedule_pending()
        cache = sched.cache
        seen.append(([(pl.pod.key, cache.start_time(pl.pod.key)) for pl in cache.placements()],
                     {p: n for p, n in cache._priorities.items() if n}))
    assert seen[0] == seen[1]
    assert seen[0][1] == {0: 3, 1: 3, 2: 2}


def _volume_outcomes(workload, eq, k, batches=None):
    nodes, objects, bound, pending = workload
    sched = Scheduler(copy.deepcopy(nodes), percentage_of_nodes_to_score=50, tie_break="first")
    sched.cycles.equivalence = eq
    sched.cycles.batch_copies = eq if batches is None else batches
    for obj in copy.deepcopy(objects):
        sched.add_object(obj)
    for p in copy.deepcopy(bound):
        sched.add_pod(p)
    for p in _copies(pending, k):     # copies share claims: ReadWriteOncePod, limits, bindings
        sched.queue(p)
    return [_outcome(r) for r in sched.schedule_pending()], sched


@settings(max_examples=120, deadline=None)
@given(V.volume_workloads(max_pending=4), st.integers(1, 3))
def test_volume_cycles_identical(workload, k):
    """Pods with volumes read their template's slot where every volume PreFilter left all
    nodes passing, and join runs of copies where every volume plugin passes them everywhere;
    elsewhere the pass runs in full: the same decisions either way."""
    try:
        off = _volume_outcomes(workload, False, k)[0]
    except UnsupportedError:    # a bound PV whose CSI translation fails on a migrated node: refused
        assume(False)
    assert _volume_outcomes(workload, True, k)[0] == off


def test_volume_cycles_use_the_slot():
    """Not vacuous: pods whose claims are bound to PVs without node affinity (every node
    passes every volume Filter) hit their template's entries, pods without volumes beside
    them share the entries, and a PV with node affinity still narrows its pod's nodes. With
    runs of copies, such pods join the runs of pods without volumes."""
    nodes = [{"metadata": {"name": f"n{i}", "labels": {"zone": f"z{i % 3}"}},
              "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}} for i in range(30)]
    objects, pods = [], []
    for i in range(60):
        pv = {"kind": "PersistentVolume", "metadata": {"name": f"pv{i}"},
              "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                       "csi": {"driver": "csi.example.com", "volumeHandle": f"h{i}"},
                       "claimRef": {"namespace": "default", "name": f"c{i}"}}}
        if i % 20 == 18:
            pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["z1"]}]}]}}
        objects += [pv, {"kind": "PersistentVolumeClaim", "metadata": {"name": f"c{i}", "namespace": "default",
                         "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                         "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": f"pv{i}",
                                  "resources": {"requests": {"storage": "1Gi"}}}}]
        spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "300m"}}}]}
        if i % 2 == 0:
            spec["volumes"] = [{"name": "v", "persistentVolumeClaim": {"claimName": f"c{i}"}}]
        pods.append({"metadata": {"name": f"p{i}", "namespace": "default"}, "spec": spec})
    workload = (nodes, objects, [], pods)
    on, sched = _volume_outcomes(workload, True, 1, batches=False)
    off, _ = _volume_outcomes(workload, False, 1)
    assert on == off
    batched = []
    original = ScheduleOne.schedule_copies

    def spy(self, pod, count, counts=None):
        rows = original(self, pod, count, counts)
        batched.append(0 if rows is None else len(rows))
        return rows
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ScheduleOne, "schedule_copies", spy)
        assert _volume_outcomes(workload, True, 1)[0] == off
    # all but the three pods whose PV narrows and the four cycles that start runs (p0, and
    # the pods after the three)
    assert batched == [17, 18, 18], batched
    hits = next(iter(sched.cycles.frameworks.values())).kernel.equivalence.hits
    assert hits == 56, hits     # all but the first cycle and the three whose PV narrows
    placed = {pod: node for pod, node, *_ in on}
    assert all(placed[f"default/p{i}-c0"] in {f"n{j}" for j in range(1, 30, 3)} for i in (38, 58)), placed


def test_a_batch_of_more_templates_than_slots_leaves_no_slot_to_another():
    """A batch of node-local pods of more templates than the equivalence cache has slots ends
    before the first template left without one: the LRU would hand it a slot of the batch,
    which the kernel then fills with the other template's verdicts (here: a 30-CPU pod told
    that nodes with 14 CPUs free fit it, as they fit a 100m pod)."""
    import numpy as np

    def node(name, cpu):
        return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"allocatable": {"cpu": cpu, "memory": "640Gi", "pods": "110"}}}

    def pod(name, cpu, mem, node_name=None):
        spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
        return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                "spec": {**spec, **({"nodeName": node_name} if node_name else {})}}
    nodes = [node(f"n{i}", "8" if i < 6 else "64") for i in range(12)]
    bound = [pod(f"b{i}", "50" if i < 9 else "32", "1Gi", f"n{i}") for i in range(6, 12)]
    sched = Scheduler(nodes, bound, tie_break="first")
    sched.schedule(pod("warm", "100m", "1Gi"))          # (the kernel bound to the table)
    fw = next(iter(sched.profiles.values()))
    n = fw.kernel.equivalence.n_slots
    pods = [sched.parse_pod(pod(f"p{i}", "100m", f"{1024 + i}Mi")) for i in range(n)]
    big = sched.parse_pod(pod("big", "30", "2Gi"))
    rows, _ = sched.cycles.schedule_batch(fw, [fw.compile(p) for p in pods + [big]], np.zeros((n + 1, 2), np.int64))
    assert len(rows) == n
    seen = sched.explain(big)
    fw.kernel.equivalence.clear()
    assert seen == sched.explain(big) and seen["numFeasible"] == 3
