"""The scheduling loop on a virtual clock: queue, binding cycle, cluster events, failures."""
import random

import numpy as np
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, initialize

from kschedcore import Scheduler
from kschedcore.scheduler.loop import Simulation

from invariants import check_cache


def node(name, cpu="2"):
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "20"}}}


def pod(name, cpu="500m", gates=None, priority=0):
    p = {"metadata": {"name": name, "uid": f"uid-{name}"},
         "spec": {"priority": priority, "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}
    if gates:
        p["spec"]["schedulingGates"] = [{"name": g} for g in gates]
    return p


def test_same_decisions_as_schedule_pending():
    pods = [pod(f"p{i}", cpu=f"{100 * (i % 5 + 1)}m") for i in range(30)]
    nodes = [node(f"n{i}", cpu=str(2 + i % 3)) for i in range(6)]
    direct = Scheduler(nodes, tie_break="first")
    for p in pods:
        direct.queue(p)
    want = {r.pod: r.node for r in direct.schedule_pending()}
    sim = Simulation(Scheduler(nodes, tie_break="first"))
    for p in pods:
        sim.add_pod(p)
    got = {o.pod: o.node for o in sim.run_until_idle()}
    assert got == want


def test_unschedulable_pod_waits_for_a_node_event():
    sim = Simulation(Scheduler([node("small", cpu="1")]))
    sim.add_pod(pod("big", cpu="3"))
    [out] = sim.run_until_idle(max_seconds=60)
    assert out.node is None and out.message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert sim.queue.where("default/big") == "unschedulablePods"
    sim.add_node(node("large", cpu="4"))          # NodeResourcesFit's hint: Queue
    [out] = sim.run_until_idle(max_seconds=60)
    assert out.node == "large" and out.attempts == 2


def test_scheduling_gates_hold_a_pod_until_removed():
    sim = Simulation(Scheduler([node("n")]))
    sim.add_pod(pod("gated", gates=["example.com/wait"]))
    [out] = sim.run_until_idle()
    assert out.node is None and out.attempts == 0
    sim.update_pod(pod("gated"))
    [out] = sim.run_until_idle()
    assert out.node == "n"


def test_bind_failures_retry_with_backoff_and_lose_no_pod():
    failures = {}

    def flaky(p, node_name):                       # every pod's first two binds fail
        failures[p.key] = failures.get(p.key, 0) + 1
        return "connection refused" if failures[p.key] <= 2 else None

    sim = Simulation(Scheduler([node("a"), node("b")]), binder=flaky)
    for i in range(6):
        sim.add_pod(pod(f"p{i}"))
    outs = sim.run_until_idle()
    assert all(o.node is not None for o in outs) and all(failures[o.pod] == 3 for o in outs)
    # backoff after two errors: 1 s then 2 s (each waiting out its whole second)
    assert sim.clock.now() >= 3
    check_cache(sim)


def test_node_deleted_while_binding():
    sim = Simulation(Scheduler([node("a"), node("b", cpu="1")], tie_break="first"), bind_latency=5)
    sim.add_pod(pod("p", cpu="1500m"))             # only a fits
    assert sim.schedule_one() and sim.binding == {"default/p": "a"}
    sim.remove_node("a")
    sim.add_node(node("c", cpu="4"))
    [out] = sim.run_until_idle(max_seconds=60)
    assert out.node == "c"
    check_cache(sim)




class LoopMachine(RuleBasedStateMachine):
    """Random pods, nodes, deletions, bind failures and clock jumps: no pod is lost or bound
    twice, no node is over its allocatable, and the cache equals the truth."""

    @initialize(seed=st.integers(0, 2**16))
    def start(self, seed):
        self.rng = random.Random(seed)
        self.fail_rate = self.rng.choice([0.0, 0.3])
        from kschedcore.plugins.coscheduling import Coscheduling
        groups = [{"metadata": {"name": "g"}, "spec": {"minMember": 2, "scheduleTimeoutSeconds": 5}}]
        self.sim = Simulation(Scheduler([node("n0")], seed=seed), binder=self._binder,
                              bind_latency=self.rng.choice([0, 0.5]), permit_plugins=[Coscheduling(groups)])
        self.n_nodes, self.n_pods = 1, 0
        self.live = set()

    def _binder(self, p, node_name):
        return "injected bind failure" if self.rng.random() < self.fail_rate else None

    @rule(cpu=st.sampled_from(["250m", "500m", "1", "3"]), priority=st.sampled_from([0, 0, 5, 10]))
    def add_pod(self, cpu, priority):
        self.n_pods += 1
        name = f"p{self.n_pods}"
        self.sim.add_pod(pod(name, cpu=cpu, priority=priority))   # priorities: preemption happens
        self.live.add(f"default/{name}")

    @rule(cpu=st.sampled_from(["500m", "1"]))
    def add_gang_pod(self, cpu):
        self.n_pods += 1
        p = pod(f"p{self.n_pods}", cpu=cpu)
        p["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": "g"}
        self.sim.add_pod(p)
        self.live.add(f"default/p{self.n_pods}")

    @rule(cpu=st.sampled_from(["1", "2", "4"]))
    def add_node(self, cpu):
        self.sim.add_node(node(f"n{self.n_nodes}", cpu=cpu))
        self.n_nodes += 1

    @rule(i=st.integers(0, 50))
    def delete_pod(self, i):
        keys = sorted(self.live)
        if keys:
            key = keys[i % len(keys)]
            self.sim.delete_pod(key)
            self.live.discard(key)

    @rule(i=st.integers(0, 50))
    def remove_node(self, i):
        names = sorted(self.sim.sched.table.row_of)
        if len(names) > 1:
            name = names[i % len(names)]
            for key, n in list(self.sim.bound.items()):   # its pods are deleted with it
                if n == name:
                    self.sim.delete_pod(key)
                    self.live.discard(key)
            self.sim.remove_node(name)

    @rule(i=st.integers(0, 50), tainted=st.booleans())
    def taint_node(self, i, tainted):
        """A node update while pods may be binding to it: admission refuses them if tainted."""
        t = self.sim.sched.table
        names = sorted(t.row_of)
        name = names[i % len(names)]
        n = t.nodes[t.row_of[name]]
        raw = node(name, cpu=str(n.allocatable["cpu"] // 1000))
        if tainted:
            raw["spec"] = {"taints": [{"key": "maintenance", "effect": "NoSchedule"}]}
        self.sim.update_node(raw)

    @rule(steps=st.integers(1, 5))
    def schedule(self, steps):
        for _ in range(steps):
            if not self.sim.schedule_one():
                break

    @rule(seconds=st.sampled_from([0.5, 1, 3, 20, 400]))
    def advance(self, seconds):
        self.sim.clock.advance(seconds)

    @rule()
    def run_until_idle(self):
        self.sim.run_until_idle(max_seconds=30)

    def _forget_victims(self):
        evicting = self.sim.evicting             # the last victims of a preemption go a cycle later
        for _, _, victims in self.sim.preemptions:
            self.live.difference_update(set(victims) - evicting)     # deleted by the loop, as the API would

    @invariant()
    def every_pod_in_one_place(self):
        self._forget_victims()
        q, sim = self.sim.queue, self.sim
        for key in self.live:
            where = q.where(key)
            queued = where is not None and where != "inFlight"
            places = [key in sim.bound, key in sim.binding, queued]
            assert sum(places) == 1, (key, places, where)
            # a pod being bound is still in flight for the queue (Done comes after binding)
            assert (where == "inFlight") == (key in sim.binding), (key, where)
        assert set(sim.bound) | set(sim.binding) <= self.live
        assert not set(sim.bound) & set(sim.binding)
        # a binding cycle's CycleState lives exactly as long as the binding cycle
        alive = sim.bindings.states_alive()
        assert alive <= set(sim.binding), alive - set(sim.binding)
        assert set(sim.waiting) <= set(sim.binding)        # waiting at Permit: still assumed

    @invariant()
    def preemption_victims_are_gone(self):
        self._forget_victims()
        for _, _, victims in self.sim.preemptions:
            assert not (set(victims) - self.sim.evicting) & (set(self.sim.bound) | set(self.sim.binding))
        assert set(self.sim.nominated) <= set(self.sim.pods)

    @invariant()
    def cache_is_the_truth(self):
        live_nodes = set(self.sim.sched.table.row_of)
        sim = self.sim
        # pods bound to a deleted node were deleted with it; bindings to it will fail
        assert all(n in live_nodes for n in sim.bound.values())
        check_cache(sim)


TestLoopMachine = LoopMachine.TestCase
TestLoopMachine.settings = settings(max_examples=150, stateful_step_count=50, deadline=None)


def test_cli_simulate_queue_outcomes(tmp_path, capsys):
    from kschedcore.cli import main
    path = tmp_path / "w.yaml"
    path.write_text("""kind: List
items:
- {kind: Node, metadata: {name: a}, status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}}
- {kind: Pod, metadata: {name: web-1}, spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
- {kind: Pod, metadata: {name: big}, spec: {containers: [{name: c, resources: {requests: {cpu: "3"}}}]}}
- {kind: Pod, metadata: {name: gated}, spec: {schedulingGates: [{name: x}], containers: [{name: c}]}}
""")
    import json
    for extra in ([], ["--queue"]):
        assert main(["simulate", str(path), "-o", "jsonl", *extra]) == 0
        out = {o["pod"]: o for o in map(json.loads, capsys.readouterr().out.splitlines())}
        assert out["default/web-1"]["node"] == "a"
        assert out["default/big"]["message"] == (
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: "
            "0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
        assert out["default/gated"]["node"] is None and out["default/gated"]["attempts"] == 0


def test_preemption_evicts_the_cheapest_victims_and_nominates():
    sched = Scheduler([node("a"), node("b")], tie_break="first")
    sim = Simulation(sched)
    # a: one pod of priority 5 using it all; b: two of priority 1 and 2, one CPU each
    sim.add_pod({**pod("a-big", cpu="2", priority=5), "spec": {**pod("a-big", cpu="2", priority=5)["spec"], "nodeName": "a"}})
    for name, prio in (("b-1", 1), ("b-2", 2)):
        p = pod(name, cpu="1", priority=prio)
        p["spec"]["nodeName"] = "b"
        sim.add_pod(p)
    sim.add_pod(pod("urgent", cpu="1", priority=10))
    outs = {o.pod: o for o in sim.run_until_idle()}
    # b's lowest victim set is {b-1} (priority 1): b-2 is reprieved; a's would be priority 5
    assert sim.preemptions == [("default/urgent", "b", ["default/b-1"])]
    assert outs["default/urgent"].node == "b" and outs["default/urgent"].attempts == 2
    assert "default/b-1" not in sim.pods and sim.bound["default/b-2"] == "b"
    assert sim.nominated == {}
    check_cache(sim)


def test_nominated_pod_keeps_its_node_from_lower_priority_pods():
    sched = Scheduler([node("a", cpu="1")], tie_break="first")
    sim = Simulation(sched, bind_latency=0)
    low = pod("low", cpu="1", priority=1)
    low["spec"]["nodeName"] = "a"
    sim.add_pod(low)
    sim.add_pod(pod("high", cpu="1", priority=10))
    assert sim.schedule_one()                      # high fails, preempts low, is nominated to a
    assert sim.nominated == {"default/high": "a"}
    sim.add_pod(pod("mid", cpu="1", priority=5))   # arrives first in activeQ? it must not take a
    outs = {o.pod: o for o in sim.run_until_idle(max_seconds=30)}
    assert outs["default/high"].node == "a" and outs["default/mid"].node is None


def test_simulation_knows_the_schedulers_bound_pods():
    """Pods bound before the Simulation starts are victims like any other."""
    low = pod("low", cpu="2", priority=1)
    low["spec"]["nodeName"] = "a"
    sched = Scheduler([node("a")], [low])
    sim = Simulation(sched)
    sim.add_pod(pod("high", cpu="2", priority=9))
    [out] = sim.run_until_idle()
    assert out.node == "a" and sim.preemptions == [("default/high", "a", ["default/low"])]
    assert "default/low" not in sched.cache


# ---- Permit and gang scheduling -------------------------------------------------------------------
from kschedcore.framework.interface import PermitPlugin, Reject  # noqa: E402
from kschedcore.plugins.coscheduling import Coscheduling  # noqa: E402


def gang_pod(name, group, cpu="1"):
    p = pod(name, cpu=cpu)
    p["metadata"]["labels"] = {"scheduling.x-k8s.io/pod-group": group}
    return p


def pod_group(name, min_member, timeout=30):
    return {"kind": "PodGroup", "metadata": {"name": name, "namespace": "default"},
            "spec": {"minMember": min_member, "scheduleTimeoutSeconds": timeout}}


def test_gang_binds_all_once_min_member_are_reserved():
    sim = Simulation(Scheduler([node("a", cpu="2"), node("b", cpu="2")]),
                     permit_plugins=[Coscheduling([pod_group("g", 3)])])
    for i in range(3):
        sim.add_pod(gang_pod(f"g{i}", "g"))
    assert sim.schedule_one() and sim.schedule_one()
    assert sorted(sim.waiting) == ["default/g0", "default/g1"] and not sim.bound   # held, not bound
    outs = sim.run_until_idle()
    assert all(o.node for o in outs) and sorted(sim.bound) == ["default/g0", "default/g1", "default/g2"]
    check_cache(sim)


def test_gang_that_cannot_assemble_times_out_and_releases_everything():
    sim = Simulation(Scheduler([node("a", cpu="2")]),          # room for 2 of 3
                     permit_plugins=[Coscheduling([pod_group("g", 3, timeout=10)])])
    for i in range(3):
        sim.add_pod(gang_pod(f"g{i}", "g"))
    sim.add_pod(pod("other", cpu="1"))
    outs = {o.pod: o for o in sim.run_until_idle(max_seconds=12)}
    assert not any(k.startswith("default/g") for k in sim.bound)
    assert outs["default/g0"].message == "rejected due to timeout after waiting 10s at plugin Coscheduling"
    # the release is a cluster event: the pod outside the gang was tried again
    assert outs["default/other"].attempts >= 2
    check_cache(sim)


def test_permit_reject_unreserves():
    class NoB(PermitPlugin):
        name = "NoB"

        def permit(self, state, p, node_name, handle):
            return Reject("node b is closed") if node_name == "b" else Reject("nowhere") if p.name == "x" else \
                __import__("kschedcore.framework.interface", fromlist=["Allow"]).Allow()

    sim = Simulation(Scheduler([node("a", cpu="1"), node("b", cpu="1")], tie_break="first"), permit_plugins=[NoB()])
    sim.add_pod(pod("x", cpu="1"))
    assert sim.schedule_one()
    assert sim.outcomes["default/x"].message == "0/1 nodes are available: 1 nowhere."
    assert not sim.binding and sim.queue.where("default/x") in ("unschedulablePods", "backoffQ", "activeQ")
    check_cache(sim)


def test_admission_at_bind_rejects_a_node_changed_meanwhile():
    """A taint added while the pod was binding: the node refuses it, the pod goes elsewhere."""
    sim = Simulation(Scheduler([node("a"), node("b")], tie_break="first"), bind_latency=2)
    sim.add_pod(pod("p"))
    assert sim.schedule_one() and sim.binding == {"default/p": "a"}
    tainted = node("a")
    tainted["spec"] = {"taints": [{"key": "maintenance", "effect": "NoSchedule"}]}
    sim.update_node(tainted)
    [out] = sim.run_until_idle(max_seconds=60)
    assert out.node == "b" and out.attempts == 2
    check_cache(sim)


def test_binding_cycle_plugins_run_in_order_and_unreserve_in_reverse():
    from kschedcore.framework.interface import SKIP
    log = []

    class Recorder:
        def __init__(self, name, fail_pre_bind=False, bind=SKIP):
            self.name, self.fail_pre_bind, self._bind = name, fail_pre_bind, bind

        def reserve(self, state, p, n, h):
            log.append(("reserve", self.name, p.name))

        def unreserve(self, state, p, n, h):
            log.append(("unreserve", self.name, p.name))

        def pre_bind(self, state, p, n, h):
            log.append(("pre_bind", self.name, p.name))
            return "volume not ready" if self.fail_pre_bind and p.name == "bad" else None

        def bind(self, state, p, n, h):
            log.append(("bind", self.name, p.name))
            return self._bind

        def post_bind(self, state, p, n, h):
            log.append(("post_bind", self.name, p.name))

    sim = Simulation(Scheduler([node("a")]), plugins=[Recorder("A", fail_pre_bind=True), Recorder("B", bind=None)],
                     binder=lambda p, n: "the default binder must not run")
    sim.add_pod(pod("good"))
    assert sim.schedule_one()
    assert log == [("reserve", "A", "good"), ("reserve", "B", "good"), ("pre_bind", "A", "good"),
                   ("pre_bind", "B", "good"), ("bind", "A", "good"), ("bind", "B", "good"),
                   ("post_bind", "A", "good"), ("post_bind", "B", "good")]
    assert sim.bound == {"default/good": "a"}
    log.clear()
    sim.add_pod(pod("bad"))
    assert sim.schedule_one()
    assert log == [("reserve", "A", "bad"), ("reserve", "B", "bad"), ("pre_bind", "A", "bad"),
                   ("unreserve", "B", "bad"), ("unreserve", "A", "bad")]
    assert sim.outcomes["default/bad"].message == 'running PreBind plugin "A": volume not ready'
    assert "default/bad" not in sim.binding and "default/bad" not in sim.sched.cache


def _bound_pod(name, node_name, cpu, priority, labels=None):
    p = pod(name, cpu=cpu, priority=priority)
    p["spec"]["nodeName"] = node_name
    if labels:
        p["metadata"]["labels"] = labels
    return p


def _pdb(name, app, allowed):
    return {"kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": app}}}, "status": {"disruptionsAllowed": allowed}}


def test_preemption_prefers_nodes_whose_victims_break_no_budget():
    sched = Scheduler([node("a", cpu="1"), node("b", cpu="1")], tie_break="first")
    sched.add_object(_pdb("db", "db", 0))
    sim = Simulation(sched)
    sim.add_pod(_bound_pod("db-0", "a", "1", 1, {"app": "db"}))     # protected by a budget
    sim.add_pod(_bound_pod("web-0", "b", "1", 1, {"app": "web"}))
    sim.add_pod(pod("urgent", cpu="1", priority=10))
    [out] = sim.run_until_idle()
    assert sim.preemptions == [("default/urgent", "b", ["default/web-0"])] and out.node == "b"


def test_budget_breaking_victims_are_reprieved_first_and_budgets_keep_their_status():
    sched = Scheduler([node("a", cpu="2")], tie_break="first")
    sched.add_object(_pdb("db", "db", 1))
    sim = Simulation(sched)
    # two db pods (the budget allows one disruption) and a web pod; the preemptor needs 1 CPU
    sim.add_pod(_bound_pod("db-0", "a", "500m", 1, {"app": "db"}))
    sim.add_pod(_bound_pod("db-1", "a", "500m", 1, {"app": "db"}))
    sim.add_pod(_bound_pod("web-0", "a", "1", 1, {"app": "web"}))
    victims, breaking = sched.select_victims(sched.parse_pod(pod("x", cpu="1", priority=10)), "a")
    # evicting both db pods would break the budget (one disruption allowed): db-1, the one that
    # breaks it, is put back first, then db-0; the web pod alone frees the CPU
    assert [v.name for v in victims] == ["web-0"] and breaking == 0
    victims, breaking = sched.select_victims(sched.parse_pod(pod("y", cpu="2", priority=10)), "a")
    assert sorted(v.name for v in victims) == ["db-0", "db-1", "web-0"] and breaking == 1
    sim.add_pod(pod("z", cpu="2", priority=10))
    sim.run_until_idle()
    assert sim.bound["default/z"] == "a" and not {"default/db-0", "default/db-1"} & set(sim.pods)
    # kube-scheduler deletes victims without touching budgets; no disruption controller runs
    assert sched.pdbs["default/db"].disruptions_allowed == 1


def test_nominated_pods_count_in_filter_but_not_in_scores():
    sim = Simulation(Scheduler([node("a", cpu="4"), node("b", cpu="4")], tie_break="first"))
    big = sim.sched.parse_pod(pod("nominee", cpu="2", priority=10))
    sim.pods[big.key] = big
    sim.queue.add_nominated_pod(big, "a")
    assert sim.nominated == {big.key: "a"}
    sim.add_pod(pod("p", cpu="1", priority=5))
    assert sim.schedule_one()
    # a passes Filter with the nominee on it (2 of 4 CPUs left); scored without it, a and b tie
    # and the first wins -- counted in Score as well, a would have lost to b
    assert sim.binding.get("default/p", sim.bound.get("default/p")) == "a"
    sim.add_pod(pod("q", cpu="3", priority=5))
    assert sim.schedule_one()
    # 3 CPUs do not fit next to the nominee: only b passes Filter
    assert sim.bound.get("default/q") == "b"


def test_coscheduling_queue_sort_keeps_a_gang_together():
    cs = Coscheduling([pod_group("g", 2)])
    sim = Simulation(Scheduler([node("a", cpu="8")], plugins=[cs]))
    sim.add_pod(gang_pod("g0", "g"))           # the group is created (its first pod queued) at t=0
    sim.clock.advance(1)
    sim.add_pod(pod("solo"))
    sim.clock.advance(1)
    sim.add_pod(gang_pod("g1", "g"))
    order = [sim.queue.pop().key for _ in range(3)]
    assert order == ["default/g0", "default/g1", "default/solo"]
    # PrioritySort would take them by arrival
    sim = Simulation(Scheduler([node("a", cpu="8")]))
    for i, p in enumerate([gang_pod("g0", "g"), pod("solo"), gang_pod("g1", "g")]):
        sim.clock.advance(i)
        sim.add_pod(p)
    assert [sim.queue.pop().key for _ in range(3)] == ["default/g0", "default/solo", "default/g1"]


def test_coscheduling_prefilter_waits_for_enough_siblings():
    cs = Coscheduling([pod_group("g", 3)])
    sim = Simulation(Scheduler([node("a", cpu="8")], plugins=[cs]))
    sim.add_pod(gang_pod("g0", "g"))
    sim.add_pod(gang_pod("g1", "g"))
    assert sim.schedule_one() and not sim.binding and not sim.waiting      # rejected before Filter
    assert sim.outcomes["default/g0"].message == (
        "0/1 nodes are available: pre-filter pod g0 cannot find enough sibling pods, current pods number: 2, "
        "minMember of group: 3. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption "
        "is not helpful for scheduling., PodGroup default/g gets rejected due to Pod g0 is unschedulable even after "
        "PostFilter")
    sim.add_pod(gang_pod("g2", "g"))
    outs = sim.run_until_idle()
    assert all(o.node == "a" for o in outs) and len(sim.bound) == 3    # Permit, via the same object
    check_cache(sim)


def test_coscheduling_postfilter_releases_a_gang_that_cannot_assemble():
    cs = Coscheduling([pod_group("g", 3, timeout=30)])
    sim = Simulation(Scheduler([node("a", cpu="2")], plugins=[cs]))       # room for 2 of 3
    for i in range(3):
        sim.add_pod(gang_pod(f"g{i}", "g"))
    assert sim.schedule_one() and sim.schedule_one() and sorted(sim.waiting) == ["default/g0", "default/g1"]
    assert sim.schedule_one()                  # g2 fails: the gang is 1/3 short, its waiting pods go now
    assert not sim.waiting and not sim.binding and sim.clock.now() == 0
    assert sim.outcomes["default/g0"].message == "optimistic rejection in PostFilter"
    assert sim.outcomes["default/g2"].message.endswith(
        ", PodGroup default/g gets rejected due to Pod g2 is unschedulable even after PostFilter")
    check_cache(sim)
    # a pod outside any group gets the plugin's word too, as with scheduler-plugins
    err = sim.sched.schedule(pod("solo", cpu="4")).fit_error
    assert err.full_message.endswith("Preemption is not helpful for scheduling., can not find pod group")


def test_failed_cycles_rejector_plugins_from_the_counts_are_the_decoded_ones(monkeypatch):
    """The loop reads a failed cycle's rejector plugins (the hints' unschedulable plugins) from
    the kernel's FitError counts; decoding its per-node statuses names the same plugins --
    through taints, selectors, ports, GPUs, spreading and affinity of the generator's shapes,
    and preemption."""
    from kschedcore.framework import cycle as cycle_module
    from kschedcore.sources.generator import generate
    real = cycle_module.Cycle.rejector_plugins
    compared, seen = [], set()

    def compare(cycle):
        from_counts = cycle._counts_current()
        got = real(cycle)
        if from_counts:
            assert got == cycle_module.Diagnosis(cycle).rejector_plugins(), cycle.pod.key
            compared.append(cycle.pod.key)
            seen.update(got)
        return got
    monkeypatch.setattr(cycle_module.Cycle, "rejector_plugins", compare)
    sched = Scheduler.from_workload(generate(nodes=60, pods=900, seed=4), tie_break="random", seed=1)
    sim = Simulation(sched)
    sim.run_until_idle()
    low = Scheduler([node(f"n{i}") for i in range(3)], tie_break="first")
    sim2 = Simulation(low)
    for i in range(12):
        sim2.add_pod(pod(f"low{i}"))
    sim2.run_until_idle()
    for i in range(4):
        sim2.add_pod(pod(f"high{i}", cpu="1500m", priority=100))
    sim2.run_until_idle()
    assert len(compared) > 100 and sim2.preemptions
    assert {"NodeResourcesFit", "TaintToleration"} <= seen
