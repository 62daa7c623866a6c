"""The scheduling queue (semantics §8) on a virtual clock: ordering, backoff, the pool and its
flushes, gates, cluster events with queueing hints, in-flight events, the nominator, and a
stateful test against a small model."""
import itertools
import math
import random
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from kschedcore.util.clock import RealClock, VirtualClock
from kschedcore.backend.queue.heaps import Heap
from kschedcore.framework.cluster_events import (ActionType, ClusterEvent, ClusterEventWithHint,
                                                 EventAssignedPodAdd, EventAssignedPodDelete,
                                                 EventForceActivate, EventNodeAdd, EventResource,
                                                 EventUnschedulableTimeout, Queue, QueueSkip,
                                                 build_queueing_hint_map, match_cluster_events,
                                                 node_scheduling_properties_change,
                                                 pod_scheduling_properties_change)
from kschedcore.backend.queue import (ACTIVE_Q, BACKOFF_Q, IN_FLIGHT, UNSCHEDULABLE_PODS, BarePod, QueuedPodInfo,
                                      QueueError, SchedulingQueue)
from kschedcore.backend.queue.heaps import Heap as _Heap, PrioritySortQueue as _PrioritySortQueue, priority_sort_key
from kschedcore.plugins.registry import default_queueing_hint_map, in_tree_events
from kschedcore.plugins.schedulinggates import SchedulingGates
from kschedcore.objects.node import parse_node
from kschedcore.objects.pod import parse_pod

FIT = "NodeResourcesFit"
NODE_UPDATE_LABEL = ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel)
NODE_UPDATE_TAINT = ClusterEvent(EventResource.Node, ActionType.UpdateNodeTaint)


def pod(name, priority=0, *, gates=(), cpu="1", node_name="", labels=None, uid=None, tolerations=(),
        host_port=0, nominated="", namespace="default", affinity=None, spread=None, node_selector=None):
    container = {"name": "c", "image": "img", "resources": {"requests": {"cpu": cpu}}}
    if host_port:
        container["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    spec = {"priority": priority, "containers": [container], "tolerations": list(tolerations)}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    if node_name:
        spec["nodeName"] = node_name
    if affinity:
        spec["affinity"] = affinity
    if spread:
        spec["topologySpreadConstraints"] = spread
    if node_selector:
        spec["nodeSelector"] = node_selector
    raw = {"metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}",
                        "labels": labels or {}},
           "spec": spec, "status": {"nominatedNodeName": nominated} if nominated else {}}
    return parse_pod(raw)


def node(name, *, cpu="4", pods="110", labels=None, taints=(), unschedulable=False):
    return parse_node({"metadata": {"name": name, "labels": labels or {}},
                       "spec": {"taints": list(taints), "unschedulable": unschedulable},
                       "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": pods}}})


def new_queue(**kw):
    """A queue with the default profile's PreEnqueue plugin and queueing hints (the loop
    passes its profiles'; a bare SchedulingQueue has none)."""
    clock = VirtualClock()
    kw.setdefault("pre_enqueue_plugins", [SchedulingGates()])
    kw.setdefault("queueing_hints", default_queueing_hint_map())
    return SchedulingQueue(clock, **kw), clock


def pop_names(q):
    out = []
    while (p := q.pop()) is not None:
        out.append(p.pod.name)
        q.done(p.uid)
    return out


def fail(q, name_or_pinfo=None, plugins=(FIT,), pending=()):
    """Pops a pod (or takes the given in-flight one) and hands it back as rejected."""
    pinfo = q.pop() if name_or_pinfo is None else name_or_pinfo
    return pinfo, q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle,
                                                    unschedulable_plugins=plugins, pending_plugins=pending)


# --- activeQ order ----------------------------------------------------------------------------

def test_priority_order_then_fifo():
    q, clock = new_queue()
    q.add(pod("low", 1))
    q.add(pod("high", 10))
    clock.advance(1)
    q.add(pod("mid", 5))
    q.add(pod("high-later", 10))
    assert pop_names(q) == ["high", "high-later", "mid", "low"]


def test_fifo_within_priority_by_timestamp_then_arrival():
    q, clock = new_queue()
    for i in range(5):
        q.add(pod(f"p{i}"))
    assert pop_names(q) == [f"p{i}" for i in range(5)]
    a, b = pod("a"), pod("b")
    q.add(a)
    clock.advance(5)
    q.add(b)
    # a comes back with a later timestamp than b: b first
    pa, _ = fail(q)
    assert pa.pod.name == "a"
    q.activate([a])
    assert pop_names(q) == ["b", "a"]


def test_pop_counts_attempts_and_cycles():
    q, _ = new_queue()
    assert q.pop() is None
    q.add(pod("a"))
    p = q.pop()
    assert (p.attempts, q.scheduling_cycle, q.where("default/a")) == (1, 1, IN_FLIGHT)
    assert p.initial_attempt_timestamp == 0.0
    q.add_unschedulable_if_not_present(p)   # an error: backoffQ
    assert q.pop() is None                  # never popped from the error backoffQ early
    q.add(pod("b"))
    b, _ = fail(q)
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n"))
    b = q.pop()
    assert b.pod.name == "b" and b.unschedulable_plugins == set() and b.attempts == 2
    assert q.add_unschedulable_if_not_present(b) == BACKOFF_Q   # an error this time
    assert (b.unschedulable_count, b.consecutive_errors_count) == (1, 1)


def test_custom_queue_sort_less_and_key():
    by_name = lambda a, b: a.pod.name < b.pod.name
    q, _ = new_queue(less=by_name)
    for n in ("c", "a", "b"):
        q.add(pod(n, priority=ord(n)))
    assert pop_names(q) == ["a", "b", "c"]
    q, _ = new_queue(sort_key=lambda p: (p.pod.name,))
    for n in ("c", "a", "b"):
        q.add(pod(n))
    assert pop_names(q) == ["a", "b", "c"]


def test_pods_back_with_old_timestamps_go_first():
    q, clock = new_queue()
    q.add(pod("old1"))
    q.add(pod("old2"))
    fail(q)
    fail(q)
    clock.advance(5)
    q.add(pod("new1"))
    q.add(pod("new2"))
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n"))
    q.add(pod("new3"))
    assert pop_names(q) == ["old1", "old2", "new1", "new2", "new3"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["push", "push", "pop", "remove"]), st.integers(0, 3),
                          st.integers(0, 5)), max_size=60))
def test_priority_sort_queue_matches_a_heap(ops):
    """The bucketed activeQ pops in the same order as a heap on PrioritySort's key."""
    import itertools
    fast, ref = _PrioritySortQueue(itertools.count()), _Heap(priority_sort_key, itertools.count())
    live_fast, live_ref, n = [], [], 0
    for op, prio, ts in ops:
        if op == "push":
            n += 1
            a, b = QueuedPodInfo(pod(f"p{n}", prio), float(ts)), QueuedPodInfo(pod(f"p{n}", prio), float(ts))
            fast.push(a)
            ref.push(b)
            live_fast.append(a)
            live_ref.append(b)
        elif op == "remove" and live_fast:
            i = (prio * 7 + ts) % len(live_fast)
            fast.remove(live_fast.pop(i))
            ref.remove(live_ref.pop(i))
        elif op == "pop":
            a, b = fast.pop(), ref.pop()
            assert (a and a.key) == (b and b.key)
            if a:
                live_fast.remove(a)
                live_ref.remove(b)
        assert len(fast) == len(ref)
        assert [p.key for p in fast.items()] == [p.key for p in ref.items()]


def test_update_in_active_q_reorders():
    q, _ = new_queue()
    a, b = pod("a", 1), pod("b", 2)
    q.add(a)
    q.add(b)
    q.update(a, pod("a", 3))
    assert pop_names(q) == ["a", "b"]


# --- backoff ----------------------------------------------------------------------------------

def test_backoff_durations():
    q, _ = new_queue()
    assert [q.backoff_duration(n) for n in range(1, 8)] == [1, 2, 4, 8, 10, 10, 10]
    q, _ = new_queue(pod_initial_backoff=2, pod_max_backoff=60)
    assert [q.backoff_duration(n) for n in range(1, 7)] == [2, 4, 8, 16, 32, 60]


def test_error_backoff_expiry_and_flush_each_attempt():
    """Errors go to backoffQ; expiry = Timestamp + 1, 2, 4, 8, 10, 10 s truncated to the
    second; the pod backs off while expiry >= now truncated, so it moves at expiry + 1."""
    q, clock = new_queue()
    q.add(pod("a"))
    for attempt, duration in enumerate([1, 2, 4, 8, 10, 10], start=1):
        p = q.pop()
        assert p.attempts == attempt
        assert q.add_unschedulable_if_not_present(p) == BACKOFF_Q
        start = clock.now()
        expiry = math.floor(start + duration)
        assert q.next_wakeup() == expiry + 1
        clock.advance_to(expiry)
        q.flush_backoff_q_completed()
        assert q.where("default/a") == BACKOFF_Q
        clock.advance_to(expiry + 1)
        assert q.where("default/a") == ACTIVE_Q
        clock.advance(0.5)   # fractional timestamps: truncation shortens the wait


def test_backoff_flush_of_rejected_pods_and_pop_from_backoff_q():
    q, clock = new_queue()
    q.add(pod("a", cpu="8"))
    p = q.pop()
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n1", cpu="16"))   # in flight
    assert fail(q, p)[1] == BACKOFF_Q
    assert q.get("default/a").backoff_expiration == 1
    # activeQ empty: Pop takes the backoffQ head before its backoff ends (SchedulerPopFromBackoffQ)
    assert q.pop().pod.name == "a"
    q2, clock2 = new_queue(pop_from_backoff_q=False)
    q2.add(pod("a", cpu="8"))
    p = q2.pop()
    q2.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n1", cpu="16"))
    fail(q2, p)
    assert q2.pop() is None
    clock2.advance(1.0)   # not aligned: backing off through 0 + 1 s, moved by the tick at 2 s
    assert q2.pop() is None
    clock2.advance(1.0)
    assert q2.pop().pod.name == "a"


def test_event_at_expiry_second_still_backs_off():
    q, clock = new_queue()
    q.add(pod("a"))
    fail(q)                                   # at 0: expiry 1
    clock.advance_to(1.5)
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n"))
    assert q.where("default/a") == BACKOFF_Q  # 1 >= truncate(1.5)
    clock.advance_to(2)
    assert q.where("default/a") == ACTIVE_Q


def test_backoff_q_orders_by_expiry_then_priority():
    q, clock = new_queue()
    for name, prio in (("a", 1), ("b", 5)):
        q.add(pod(name, prio, cpu="8"))
    b, a = q.pop(), q.pop()
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n", cpu="16"))
    fail(q, a)
    clock.advance(0.5)       # b fails later, in the same whole second: priority decides
    fail(q, b)
    assert [p.name for p in q.pods_in_backoff_q()] == ["b", "a"]


# --- the unschedulable pool ------------------------------------------------------------------

def test_rejected_pod_waits_in_pool_and_leftover_flush_after_5_minutes():
    q, clock = new_queue()
    q.add(pod("a"))
    assert fail(q)[1] == UNSCHEDULABLE_PODS
    clock.advance_to(300)
    q.flush_unschedulable_pods_leftover()
    assert q.where("default/a") == UNSCHEDULABLE_PODS    # not more than 5 min old at 300
    assert q.next_wakeup() == 330
    clock.advance_to(329.9)
    assert q.where("default/a") == UNSCHEDULABLE_PODS
    clock.advance_to(330)
    assert q.where("default/a") == ACTIVE_Q               # backoff long over: activeQ


def test_leftover_flush_to_backoff_q_when_backoff_not_over():
    q, clock = new_queue(pod_initial_backoff=100, pod_max_backoff=100,
                         pod_max_in_unschedulable_pods_duration=2)
    q.add(pod("a"))
    fail(q)
    clock.advance_to(30)     # the first leftover tick after 2 s
    assert q.where("default/a") == BACKOFF_Q
    clock.advance_to(100)
    assert q.where("default/a") == BACKOFF_Q
    clock.advance_to(101)
    assert q.where("default/a") == ACTIVE_Q


def test_leftover_flush_of_in_flight_time_counts_as_event():
    """The UnschedulableTimeout flush seen while a pod is in flight requeues it (wildcard)."""
    q, clock = new_queue()
    q.add(pod("old"))
    fail(q)
    clock.advance_to(329)
    q.add(pod("b"))
    p = q.pop()
    clock.advance_to(330)    # "old" leaves the pool while b is in flight
    assert q.where("default/old") == ACTIVE_Q
    assert fail(q, p)[1] == BACKOFF_Q


# --- PreEnqueue gates -------------------------------------------------------------------------

def test_gated_pod_waits_until_gates_removed():
    q, clock = new_queue()
    gated = pod("g", gates=("a", "b"))
    assert SchedulingGates().pre_enqueue(gated) == "waiting for scheduling gates: [a b]"
    q.add(gated)
    info = q.get("default/g")
    assert q.where("default/g") == UNSCHEDULABLE_PODS
    assert info.gated and info.gating_plugin == "SchedulingGates"
    assert info.unschedulable_plugins == {"SchedulingGates"}
    assert q.pop() is None
    # label change: still gated, still in the pool
    relabelled = pod("g", gates=("a",), labels={"x": "y"})
    q.update(gated, relabelled)
    assert q.where("default/g") == UNSCHEDULABLE_PODS and q.get("default/g").gated
    # events and the 5-minute flush never move a gated pod
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n"))
    clock.advance(1000)
    assert q.where("default/g") == UNSCHEDULABLE_PODS
    q.update(relabelled, pod("g", labels={"x": "y"}))
    assert q.where("default/g") == ACTIVE_Q
    assert not q.get("default/g").gated
    assert pop_names(q) == ["g"]


def test_custom_pre_enqueue_plugin_and_its_events():
    class Hold:
        name = "Hold"
        held = True

        def pre_enqueue(self, p):
            return "held" if self.held else None

    hold = Hold()
    hints = default_queueing_hint_map(custom={"Hold": [ClusterEventWithHint(NODE_UPDATE_LABEL)]})
    q, _ = new_queue(pre_enqueue_plugins=[SchedulingGates(), hold], queueing_hints=hints)
    q.add(pod("a"))
    assert q.get("default/a").gating_plugin == "Hold"
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n"))   # not Hold's event
    assert q.where("default/a") == UNSCHEDULABLE_PODS
    q.move_all_to_active_or_backoff_queue(NODE_UPDATE_LABEL, node("n"), node("n", labels={"a": "b"}))
    assert q.where("default/a") == UNSCHEDULABLE_PODS                      # still held
    hold.held = False
    q.move_all_to_active_or_backoff_queue(NODE_UPDATE_LABEL, node("n"), node("n", labels={"a": "b"}))
    assert q.where("default/a") == ACTIVE_Q


# --- delete, update, activate -----------------------------------------------------------------

def test_delete_from_every_sub_queue():
    q, clock = new_queue()
    pods = {n: pod(n, cpu="8") for n in ("active", "backoff", "error", "pool", "flight")}
    pods["gated"] = pod("gated", gates=("x",))
    for name in ("backoff", "error", "pool", "flight"):
        q.add(pods[name])
    infos = {p.pod.name: p for p in (q.pop(), q.pop(), q.pop(), q.pop())}
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n", cpu="16"))
    fail(q, infos["backoff"])
    q.add_unschedulable_if_not_present(infos["error"])
    clock.advance(0.5)
    fail(q, infos["pool"], plugins=("InterPodAffinity",))   # its hint skips that node
    q.add(pods["active"])
    q.add(pods["gated"])
    expected = {"active": ACTIVE_Q, "backoff": BACKOFF_Q, "error": BACKOFF_Q,
                "pool": UNSCHEDULABLE_PODS, "gated": UNSCHEDULABLE_PODS, "flight": IN_FLIGHT}
    assert {n: q.where(f"default/{n}") for n in expected} == expected
    for name in expected:
        q.delete(pods[name])
    assert len(q) == 0 and q.pending_pods() == []
    # an in-flight pod stays in flight until the scheduler calls Done
    assert q.where("default/flight") == IN_FLIGHT
    q.done(infos["flight"].uid)
    assert q.where("default/flight") is None
    clock.advance(1000)
    assert q.pop() is None


def test_add_unschedulable_of_queued_pod_is_an_error():
    q, _ = new_queue()
    a = pod("a")
    q.add(a)
    p = q.pop()
    q.add(a)   # the same key added again while in flight
    with pytest.raises(QueueError, match="already present in activeQ"):
        q.add_unschedulable_if_not_present(p, unschedulable_plugins={FIT})
    assert q.in_flight_pods() == []   # Done happened anyway


def test_update_of_unknown_pod_adds_it():
    q, _ = new_queue()
    q.update(None, pod("a"))
    assert q.where("default/a") == ACTIVE_Q


def test_update_of_pool_pod_runs_hints():
    """A pod rejected by TaintToleration gets a new toleration: its own update requeues it."""
    q, clock = new_queue()
    a = pod("a")
    q.add(a)
    fail(q, plugins=("TaintToleration",))
    clock.advance(5)
    q.update(a, pod("a", labels={"x": "1"}))                       # UpdatePodLabel: not registered
    assert q.where("default/a") == UNSCHEDULABLE_PODS
    tolerant = pod("a", labels={"x": "1"}, tolerations=[{"key": "k", "operator": "Exists"}])
    q.update(pod("a", labels={"x": "1"}), tolerant)
    assert q.where("default/a") == ACTIVE_Q
    assert q.get("default/a").pod is tolerant


def test_update_while_in_flight_is_replayed_on_failure():
    q, _ = new_queue()
    a = pod("a")
    q.add(a)
    p = q.pop()
    tolerant = pod("a", tolerations=[{"key": "k", "operator": "Exists"}])
    q.update(a, tolerant)
    assert q.where("default/a") == IN_FLIGHT
    assert fail(q, p, plugins=("TaintToleration",))[1] == BACKOFF_Q


def test_activate():
    q, _ = new_queue()
    for n in ("pool", "backoff", "flight", "active"):
        q.add(pod(n, cpu="8"))
    pool, backoff, flight = q.pop(), q.pop(), q.pop()
    fail(q, pool)
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n", cpu="2"))   # skip: too small
    q.add_unschedulable_if_not_present(backoff)
    q.activate([pool.pod, backoff.pod, flight.pod, pod("unknown")])
    assert q.where("default/pool") == ACTIVE_Q and q.where("default/backoff") == ACTIVE_Q
    assert q.where("default/unknown") is None
    # the in-flight pod got a ForceActivate event: it does not wait in the pool
    assert fail(q, flight)[1] == BACKOFF_Q


# --- cluster events and queueing hints --------------------------------------------------------

def test_node_add_moves_only_pods_the_node_fits():
    q, clock = new_queue()
    q.add(pod("big", cpu="8"))
    q.add(pod("small", cpu="2"))
    fail(q)
    fail(q)
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n1", cpu="4"))
    assert q.where("default/small") == BACKOFF_Q         # backoff (1 s) not over yet
    assert q.where("default/big") == UNSCHEDULABLE_PODS  # QueueSkip
    clock.advance(2)
    assert q.where("default/small") == ACTIVE_Q
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n2", cpu="16"))
    assert q.where("default/big") == ACTIVE_Q             # backoff over: straight to activeQ


def test_events_reach_only_rejector_plugins_hints():
    calls = []

    def spy(result):
        def hint(p, old, new):
            calls.append(p.name)
            return result
        return hint

    hints = build_queueing_hint_map({
        "Yes": [ClusterEventWithHint(EventNodeAdd, spy(Queue))],
        "No": [ClusterEventWithHint(EventNodeAdd, spy(QueueSkip))],
        "Deaf": [ClusterEventWithHint(EventAssignedPodDelete)],
    })
    q, _ = new_queue(queueing_hints=hints)
    for name, plugin in (("y", "Yes"), ("n", "No"), ("d", "Deaf")):
        q.add(pod(name))
        fail(q, plugins=(plugin,))
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n"))
    assert sorted(calls) == ["n", "y"]
    assert [q.where(f"default/{n}") for n in "ynd"] == [BACKOFF_Q, UNSCHEDULABLE_PODS, UNSCHEDULABLE_PODS]
    # an event nobody registered is ignored, and not recorded for in-flight pods
    q.move_all_to_active_or_backoff_queue(ClusterEvent(EventResource.StorageClass, ActionType.Add))
    assert q.move_request_cycle == 3
    # a wildcard moves everything rejected (here the pool pods "n" and "d")
    q.move_all_to_active_or_backoff_queue(EventUnschedulableTimeout)
    assert q.unschedulable_pods() == []


def test_hint_error_counts_as_queue_and_precheck_narrows():
    def broken(p, old, new):
        raise RuntimeError("bug")

    hints = build_queueing_hint_map({"P": [ClusterEventWithHint(EventNodeAdd, broken)]})
    q, _ = new_queue(queueing_hints=hints)
    q.add(pod("a", 1))
    q.add(pod("b", 2))
    fail(q, plugins=("P",))
    fail(q, plugins=("P",))
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n"), precheck=lambda p: p.priority == 1)
    assert q.where("default/a") == BACKOFF_Q and q.where("default/b") == UNSCHEDULABLE_PODS


def test_pending_plugins_queue_immediately():
    hints = build_queueing_hint_map({"P": [ClusterEventWithHint(EventNodeAdd)]})
    q, _ = new_queue(queueing_hints=hints)
    q.add(pod("a"))
    fail(q, plugins=(), pending=("P",))
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n"))
    assert q.where("default/a") == ACTIVE_Q    # skips backoff
    p = q.pop()
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n"))
    assert fail(q, p, plugins=("X",), pending=("P",))[1] == ACTIVE_Q


def test_in_flight_events_decide_where_a_failed_pod_goes():
    """The v1.34 form of the moveRequestCycle rule: only events received while the pod was in
    flight, and only if a rejector plugin's hint answers Queue, keep it out of the pool."""
    q, _ = new_queue()
    for n in ("before", "during", "skip", "other-plugin", "error"):
        q.add(pod(n, cpu="8"))
    # an event before the attempt does not count
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n0", cpu="16"))
    assert fail(q)[1] == UNSCHEDULABLE_PODS
    p = q.pop()
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n1", cpu="16"))
    assert q.move_request_cycle == q.scheduling_cycle == 2
    assert fail(q, p)[1] == BACKOFF_Q
    p = q.pop()
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n2", cpu="2"))      # QueueSkip
    assert fail(q, p)[1] == UNSCHEDULABLE_PODS
    p = q.pop()
    q.move_all_to_active_or_backoff_queue(EventAssignedPodDelete, pod("x", node_name="n"))  # not NodeAffinity's
    assert fail(q, p, plugins=("NodeAffinity",))[1] == UNSCHEDULABLE_PODS
    p = q.pop()
    assert fail(q, p, plugins=())[1] == BACKOFF_Q    # an error always retries


def test_in_flight_events_are_forgotten_after_done():
    q, _ = new_queue()
    q.add(pod("a", cpu="8"))
    q.add(pod("b", cpu="8"))
    a = q.pop()
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n1", cpu="16"))
    q.done(a.uid)                  # bound: gone
    b = q.pop()                    # popped after the event: it does not see it
    assert fail(q, b)[1] == UNSCHEDULABLE_PODS
    assert q.in_flight_events() == []


def test_assigned_pod_delete_requeues_fit_and_ports():
    q, _ = new_queue()
    q.add(pod("fit"))
    q.add(pod("ports", host_port=8080))
    fail(q)
    fail(q, plugins=("NodePorts",))
    q.move_all_to_active_or_backoff_queue(EventAssignedPodDelete, pod("x", node_name="n", host_port=9090))
    assert q.where("default/fit") == BACKOFF_Q
    assert q.where("default/ports") == UNSCHEDULABLE_PODS
    q.move_all_to_active_or_backoff_queue(EventAssignedPodDelete, pod("y", node_name="n", host_port=8080))
    assert q.where("default/ports") == BACKOFF_Q


# --- in-tree hints ----------------------------------------------------------------------------

def hint(plugin, event_action, resource=EventResource.Node):
    for e in in_tree_events(plugin):
        if e.event.resource == resource and e.event.action & event_action:
            return e.hint
    raise AssertionError(f"{plugin} registers no {resource} {event_action!r}")


def test_fit_hints():
    h = hint(FIT, ActionType.Add)
    p = pod("p", cpu="3")
    assert h(p, None, node("n", cpu="4")) == Queue
    assert h(p, None, node("n", cpu="2")) == QueueSkip
    assert h(p, None, node("n", pods="0")) == QueueSkip
    assert h(p, node("n", cpu="3"), node("n", cpu="4")) == Queue
    assert h(p, node("n", cpu="4"), node("n", cpu="4", pods="200")) == Queue
    assert h(p, node("n", cpu="4", labels={"a": "b"}), node("n", cpu="4")) == QueueSkip
    ph = hint(FIT, ActionType.Delete, EventResource.Pod)
    assert ph(p, pod("gone", node_name="n"), None) == Queue
    assert ph(p, pod("gone"), None) == QueueSkip
    assert ph(p, pod("gone", nominated="n"), None) == Queue
    assert ph(p, pod("b", node_name="n", cpu="2"), pod("b", node_name="n", cpu="1")) == Queue
    assert ph(p, pod("b", cpu="2"), pod("b", cpu="1")) == QueueSkip       # not bound
    assert ph(p, pod("p", cpu="4"), pod("p", cpu="3")) == Queue           # itself


def test_node_affinity_taint_unschedulable_hints():
    na = hint("NodeAffinity", ActionType.Add)
    p = pod("p", node_selector={"zone": "a"})
    assert na(p, None, node("n", labels={"zone": "a"})) == Queue
    assert na(p, None, node("n", labels={"zone": "b"})) == QueueSkip
    assert na(p, node("n", labels={"zone": "b"}), node("n", labels={"zone": "a"})) == Queue
    assert na(p, node("n", labels={"zone": "a", "x": "1"}), node("n", labels={"zone": "a"})) == QueueSkip
    by_name = pod("q", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n9"]}]}]}}})
    assert na(by_name, None, node("n9")) == Queue and na(by_name, None, node("n8")) == QueueSkip

    tt = hint("TaintToleration", ActionType.Add)
    taint = {"key": "k", "value": "v", "effect": "NoSchedule"}
    plain, tolerant = pod("p"), pod("t", tolerations=[{"key": "k", "operator": "Equal", "value": "v"}])
    assert tt(plain, None, node("n", taints=[taint])) == QueueSkip
    assert tt(tolerant, None, node("n", taints=[taint])) == Queue
    assert tt(plain, node("n", taints=[taint]), node("n")) == Queue
    assert tt(plain, None, node("n", taints=[{**taint, "effect": "PreferNoSchedule"}])) == Queue

    nu = hint("NodeUnschedulable", ActionType.Add)
    assert nu(plain, None, node("n")) == Queue
    assert nu(plain, None, node("n", unschedulable=True)) == QueueSkip
    assert nu(plain, node("n", unschedulable=True), node("n")) == Queue
    tol = hint("NodeUnschedulable", ActionType.UpdatePodToleration, EventResource.Pod)
    ok = pod("p", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                "effect": "NoSchedule"}])
    other = pod("p", tolerations=[{**taint, "operator": "Equal"}])
    assert tol(plain, plain, ok) == Queue and tol(plain, plain, other) == QueueSkip


def test_interpod_affinity_and_spread_hints():
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}
    wants = pod("w", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    avoids = pod("a", affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    h = hint("InterPodAffinity", ActionType.Add, EventResource.Pod)
    db = pod("db", node_name="n", labels={"app": "db"})
    web = pod("web", node_name="n", labels={"app": "web"})
    assert h(wants, None, db) == Queue and h(wants, None, web) == QueueSkip
    assert h(wants, None, pod("db", labels={"app": "db"})) == QueueSkip          # unscheduled
    assert h(avoids, db, None) == Queue and h(avoids, web, None) == QueueSkip
    assert h(avoids, db, web) == Queue and h(wants, web, db) == Queue and h(wants, db, web) == QueueSkip
    hn = hint("InterPodAffinity", ActionType.Add)
    assert hn(wants, None, node("n", labels={"zone": "a"})) == Queue
    assert hn(wants, None, node("n")) == QueueSkip
    assert hn(avoids, None, node("n")) == Queue
    assert hn(avoids, node("n", labels={"zone": "a"}), node("n")) == Queue
    assert hn(wants, node("n", labels={"zone": "a"}), node("n", labels={"zone": "a", "x": "y"})) == QueueSkip

    spread = [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "db"}}}]
    sp = pod("s", labels={"app": "db"}, spread=spread)
    hs = hint("PodTopologySpread", ActionType.Add, EventResource.Pod)
    assert hs(sp, None, db) == Queue and hs(sp, None, web) == QueueSkip
    assert hs(sp, None, pod("db2", node_name="n", labels={"app": "db"}, namespace="other")) == QueueSkip
    assert hs(sp, web, db) == Queue and hs(sp, db, pod("db", node_name="n", labels={"app": "db", "v": "2"})) == QueueSkip
    assert hs(pod("nospread"), None, db) == Queue      # conservative: default constraints
    hsn = hint("PodTopologySpread", ActionType.Add)
    assert hsn(sp, None, node("n", labels={"zone": "a"})) == Queue and hsn(sp, None, node("n")) == QueueSkip
    assert hsn(sp, node("n", labels={"zone": "a"}), node("n", labels={"zone": "b"})) == Queue
    assert hsn(sp, node("n", labels={"zone": "a"}), node("n", labels={"zone": "a", "x": "1"})) == QueueSkip


def test_hint_registration_rules():
    m = default_queueing_hint_map()
    taint_plugins = {f.plugin_name for f in m[NODE_UPDATE_TAINT]}
    # Node/Add without UpdateNodeTaint implies UpdateNodeTaint (kubernetes#109437)
    assert {"NodeName", "NodePorts", FIT, "NodeAffinity", "InterPodAffinity"} <= taint_plugins
    # a plugin without EnqueueExtensions hears everything
    m2 = build_queueing_hint_map({"Custom": None})
    assert any(match_cluster_events(e, ClusterEvent(EventResource.StorageClass, ActionType.Add)) for e in m2)
    assert match_cluster_events(ClusterEvent(EventResource.Pod, ActionType.Update),
                                ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodLabel))
    assert not match_cluster_events(ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel),
                                    ClusterEvent(EventResource.Pod, ActionType.Update))
    assert not match_cluster_events(EventNodeAdd, EventForceActivate)
    assert EventAssignedPodAdd.label == "AssignedPodAdd" and EventUnschedulableTimeout.label == "UnschedulableTimeout"


def test_properties_change_events():
    a = pod("a", cpu="2", gates=("g",))
    b = pod("a", cpu="1", labels={"x": "y"}, tolerations=[{"key": "k", "operator": "Exists"}])
    actions = {e.action for e in pod_scheduling_properties_change(b, a)}
    assert actions == {ActionType.UpdatePodLabel, ActionType.UpdatePodScaleDown,
                       ActionType.UpdatePodSchedulingGatesEliminated, ActionType.UpdatePodToleration}
    assert [e.action for e in pod_scheduling_properties_change(a, a)] == [ActionType.Update]
    n1, n2 = node("n", labels={"a": "1"}), node("n", labels={"a": "2"}, cpu="8", unschedulable=False)
    assert {e.action for e in node_scheduling_properties_change(n2, n1)} == {
        ActionType.UpdateNodeLabel, ActionType.UpdateNodeAllocatable}
    assert [e.action for e in node_scheduling_properties_change(node("n"), node("n", unschedulable=True))] == [
        ActionType.UpdateNodeTaint]


# --- edge rules: gates on backoffQ entry, ForceActivate, plugin mixes, profiles, compaction ----

def test_gated_on_entry_to_backoff_q():
    """PreEnqueue runs when a pod enters backoffQ (SchedulerPopFromBackoffQ): a gate keeps it
    in the pool."""
    class Hold:
        name, held = "Hold", False

        def pre_enqueue(self, p):
            return "held" if self.held else None

    hold = Hold()
    hints = default_queueing_hint_map(custom={"Hold": [ClusterEventWithHint(NODE_UPDATE_LABEL)]})
    q, _ = new_queue(pre_enqueue_plugins=[hold], queueing_hints=hints)
    q.add(pod("a", cpu="8"))
    p = q.pop()
    hold.held = True
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n", cpu="16"))
    assert fail(q, p)[1] == UNSCHEDULABLE_PODS
    info = q.get("default/a")
    assert info.gating_plugin == "Hold" and info.unschedulable_plugins == {FIT, "Hold"}
    hold.held = False
    # NodeResourcesFit would requeue it, but its gating plugin does not wait for Node/Add
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n2", cpu="16"))
    assert q.where("default/a") == UNSCHEDULABLE_PODS
    q.move_all_to_active_or_backoff_queue(NODE_UPDATE_LABEL, node("n"), node("n", labels={"a": "b"}))
    assert q.where("default/a") == BACKOFF_Q


def test_force_activate_is_for_one_pod_only():
    q, _ = new_queue()
    q.add(pod("a"))
    q.add(pod("b"))
    a, b = q.pop(), q.pop()
    q.activate([a.pod])
    assert fail(q, b)[1] == UNSCHEDULABLE_PODS
    assert fail(q, a)[1] == BACKOFF_Q


def test_mixed_pending_and_unschedulable_plugins():
    hints = build_queueing_hint_map({"U": [ClusterEventWithHint(EventNodeAdd)],
                                     "P": [ClusterEventWithHint(EventNodeAdd, lambda *a: QueueSkip)]})
    q, _ = new_queue(queueing_hints=hints)
    q.add(pod("a"))
    fail(q, plugins=("U",), pending=("P",))
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n"))
    assert q.where("default/a") == BACKOFF_Q   # only the unschedulable plugin said Queue


def test_done_before_failure_and_duplicate_pops():
    q, _ = new_queue()
    a = pod("a")
    q.add(a)
    p = q.pop()
    q.done(p.uid)                                         # not in flight any more: retry
    assert q.add_unschedulable_if_not_present(p, unschedulable_plugins={FIT}) == BACKOFF_Q
    q2, _ = new_queue()
    q2.add(a)
    q2.pop()
    q2.add(a)                                             # the same pod again while in flight
    assert q2.pop() is None and len(q2) == 0              # discarded, as upstream does


def test_profiles_have_their_own_hints_and_gates():
    class Never:
        name = "Never"

        def pre_enqueue(self, p):
            return "never"

    hints = {"default-scheduler": default_queueing_hint_map(),
             "other": build_queueing_hint_map({FIT: [ClusterEventWithHint(EventNodeAdd, lambda *a: QueueSkip)]})}
    q, _ = new_queue(queueing_hints=hints, pre_enqueue_plugins={"default-scheduler": [SchedulingGates()],
                                                                "blocked": [Never()]})
    mine, other = pod("mine", cpu="8"), pod("other", cpu="8")
    other.scheduler_name = "other"
    q.add(mine)
    q.add(other)
    blocked = pod("blocked")
    blocked.scheduler_name = "blocked"
    q.add(blocked)
    assert q.get("default/blocked").gating_plugin == "Never"
    stray = pod("stray", cpu="8")
    stray.scheduler_name = "no-such-profile"
    q.add(stray)
    fail(q)
    fail(q)
    fail(q)
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n", cpu="16"))
    assert q.where("default/mine") == BACKOFF_Q and q.where("default/other") == UNSCHEDULABLE_PODS
    assert q.where("default/stray") == BACKOFF_Q   # no hints for its profile: retried


def test_flush_methods_and_compaction():
    q, clock = new_queue()
    pods = [pod(f"p{i}", i % 4) for i in range(4000)]
    for p in pods:
        q.add(p)
    q.add(pods[3])                                         # AddOrUpdate: still one p3
    for p in pods[::4] + pods[1::4] + pods[2::4]:
        q.delete(p)
    assert len(q) == 1000 and pop_names(q)[:3] == ["p7", "p11", "p15"]
    first = q.add(pods[0]) or q.pop()
    for i in range(1100):    # events seen by `first` only
        q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node(f"n{i % 3}"))
    q.add(pods[1])
    second = q.pop()
    q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n"))
    q.done(first.uid)
    assert len(q.in_flight_events()) == 1
    q.done(second.uid)
    for p in pods[:200]:
        q.add(p)
    infos = [q.pop() for _ in range(200)]
    for i in range(1500):    # events while pods are in flight
        q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node(f"n{i % 3}"))
    for info in infos[:150]:
        q.add_unschedulable_if_not_present(info)              # errors: backoffQ
    for info in infos[150:]:
        q.done(info.uid)
    assert q.in_flight_events() == []
    for info in infos[:100]:
        q.delete(info.pod)
    q.flush_backoff_q_completed()
    assert len(q.pods_in_backoff_q()) == 50
    clock.advance(2)
    q.flush_backoff_q_completed()
    q.flush_unschedulable_pods_leftover()
    assert len(q.pods_in_active_q()) == 50 and not q.pods_in_backoff_q()


# --- nominator --------------------------------------------------------------------------------

def test_nominator():
    q, _ = new_queue()
    a, b = pod("a", cpu="8"), pod("b", nominated="n2")
    q.add(a)
    q.add(b)                                          # status.nominatedNodeName is honoured
    q.add_nominated_pod(a, "n1")
    assert q.nominated_pods_for_node("n1") == [a]
    assert q.nominated_pods_for_node("n2") == [b]
    p = q.pop()                                       # in flight: not in any queue -> bare pod
    bare = q.nominated_pods_for_node("n1")[0]
    assert isinstance(bare, BarePod) and (bare.key, bare.uid, bare.priority) == ("default/a", "uid-a", 0)
    q.update_nominated_pod(a, pod("a", cpu="8", labels={"v": "2"}))   # keeps the nomination
    assert q.nominator.node_of(a) == "n1"
    q.add_nominated_pod(a, "n3")
    assert q.nominated_pods_for_node("n1") == [] and len(q.nominated_pods_for_node("n3")) == 1
    q.delete_nominated_pod_if_exists(a)              # assumed
    assert q.nominated_pods_for_node("n3") == []
    q.delete(b)
    assert q.nominated_pods_for_node("n2") == []
    q.done(p.uid)
    lister = {"default/c": pod("c", node_name="n")}.get
    q2, _ = new_queue(pod_lister=lister)
    q2.add_nominated_pod(pod("c"), "n")               # already bound: not nominated
    q2.add_nominated_pod(pod("d"), "n")               # gone: not nominated
    assert q2.nominated_pods_for_node("n") == []


# --- live mode --------------------------------------------------------------------------------

def test_real_clock_blocking_pop():
    q = SchedulingQueue(RealClock(), pre_enqueue_plugins=[SchedulingGates()], queueing_hints=default_queueing_hint_map())
    threading.Timer(0.05, q.add, args=(pod("late"),)).start()
    start = time.monotonic()
    p = q.pop(timeout=5)
    assert p is not None and p.pod.name == "late" and time.monotonic() - start < 4
    assert q.pop(timeout=0.05) is None
    q.close()
    assert q.pop(timeout=None) is None


# --- stateful test against a model ------------------------------------------------------------

PLUGINS = (FIT, "NodeAffinity", "TaintToleration", "InterPodAffinity", "PodTopologySpread", "NodePorts")
EVENTS = st.sampled_from(["node-add-small", "node-add-big", "node-label", "node-taint", "pod-delete",
                          "pod-add", "wildcard"])


class Hold:
    """A PreEnqueue plugin switched on and off by the test."""
    name, held = "Hold", False

    def pre_enqueue(self, p):
        return "held" if self.held else None


class QueueMachine(RuleBasedStateMachine):
    """Random operations; the model knows which pods must be somewhere in the queue."""

    @initialize()
    def start(self):
        self.clock = VirtualClock()
        self.hold = Hold()
        hints = default_queueing_hint_map(custom={"Hold": [ClusterEventWithHint(NODE_UPDATE_LABEL)]})
        self.q = SchedulingQueue(self.clock, pre_enqueue_plugins=[SchedulingGates(), self.hold],
                                 queueing_hints=hints)
        self.pods = {}          # key -> current version, for pods the scheduler still owns
        self.flight = {}        # key -> QueuedPodInfo popped and not yet handed back
        self.deleted_flight = set()
        self.n = 0

    def make_pod(self, name, priority, gated, cpu, version=0):
        return pod(name, priority, gates=("g",) if gated else (), cpu=str(cpu), labels={"v": str(version)})

    @rule(priority=st.integers(0, 3), gated=st.booleans(), cpu=st.integers(1, 8))
    def add(self, priority, gated, cpu):
        self.n += 1
        p = self.make_pod(f"p{self.n}", priority, gated, cpu)
        self.pods[p.key] = p
        self.q.add(p)

    @rule()
    def pop(self):
        active = [self.q.get(p.key) for p in self.q.pods_in_active_q()]
        rejected = [i for i in map(self.q.get, (p.key for p in self.q.pods_in_backoff_q()))
                    if i.unschedulable_plugins or i.pending_plugins]   # not errors
        got = self.q.pop()
        if got is None:
            assert not active and not rejected
            return
        if active:
            best = min((-(i.pod.priority), i.timestamp) for i in active)
            assert (-got.pod.priority, got.timestamp) == best
        else:   # the backoffQ head: by expiry, then PrioritySort
            best = min((i.backoff_expiration, -i.pod.priority, i.timestamp) for i in rejected)
            assert (got.backoff_expiration, -got.pod.priority, got.timestamp) == best
        assert got.key in self.pods and got.key not in self.flight
        assert not got.pod.raw["spec"].get("schedulingGates")
        self.flight[got.key] = got

    @precondition(lambda self: self.flight)
    @rule(data=st.data(), plugins=st.lists(st.sampled_from(PLUGINS), max_size=2, unique=True))
    def fail(self, data, plugins):
        key = data.draw(st.sampled_from(sorted(self.flight)))
        pinfo = self.flight.pop(key)
        if key in self.deleted_flight:
            self.deleted_flight.discard(key)
            self.q.done(pinfo.uid)     # gone from the informer: not requeued
            return
        where = self.q.add_unschedulable_if_not_present(pinfo, self.q.scheduling_cycle,
                                                        unschedulable_plugins=plugins,
                                                        pod=self.pods[key])
        assert where in (ACTIVE_Q, BACKOFF_Q, UNSCHEDULABLE_PODS)
        if not plugins and not self.hold.held:
            assert where != UNSCHEDULABLE_PODS   # an error always retries, unless gated

    @precondition(lambda self: self.flight)
    @rule(data=st.data())
    def bind(self, data):
        key = data.draw(st.sampled_from(sorted(self.flight)))
        self.q.done(self.flight.pop(key).uid)
        self.deleted_flight.discard(key)
        self.pods.pop(key, None)

    @precondition(lambda self: self.pods)
    @rule(data=st.data())
    def delete(self, data):
        key = data.draw(st.sampled_from(sorted(self.pods)))
        p = self.pods.pop(key)
        self.q.delete(p)
        if key in self.flight:
            self.deleted_flight.add(key)

    @precondition(lambda self: self.pods)
    @rule(data=st.data(), ungate=st.booleans(), priority=st.integers(0, 3), cpu=st.integers(1, 8))
    def update(self, data, ungate, priority, cpu):
        key = data.draw(st.sampled_from(sorted(self.pods)))
        old = self.pods[key]
        gated = bool(old.raw["spec"].get("schedulingGates")) and not ungate
        new = self.make_pod(old.name, priority, gated, cpu, version=int(old.labels["v"]) + 1)
        self.pods[key] = new
        self.q.update(old, new)

    @precondition(lambda self: self.pods)
    @rule(data=st.data())
    def activate(self, data):
        keys = data.draw(st.lists(st.sampled_from(sorted(self.pods)), max_size=3))
        self.q.activate([self.pods[k] for k in keys])

    @rule(kind=EVENTS)
    def event(self, kind):
        q = self.q
        if kind == "node-add-small":
            q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n", cpu="2"))
        elif kind == "node-add-big":
            q.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node("n", cpu="16", labels={"zone": "a"}))
        elif kind == "node-label":
            q.move_all_to_active_or_backoff_queue(NODE_UPDATE_LABEL, node("n"), node("n", labels={"zone": "a"}))
        elif kind == "node-taint":
            q.move_all_to_active_or_backoff_queue(NODE_UPDATE_TAINT, node("n", taints=[
                {"key": "k", "effect": "NoSchedule"}]), node("n"))
        elif kind == "pod-delete":
            q.move_all_to_active_or_backoff_queue(EventAssignedPodDelete, pod("x", node_name="n"))
        elif kind == "pod-add":
            q.move_all_to_active_or_backoff_queue(EventAssignedPodAdd, None, pod("x", node_name="n"))
        else:
            q.move_all_to_active_or_backoff_queue(EventUnschedulableTimeout)

    @rule()
    def toggle_hold(self):
        self.hold.held = not self.hold.held

    @rule(seconds=st.sampled_from([0.25, 0.5, 1, 1.5, 3, 10, 31, 301, 1000]))
    def tick(self, seconds):
        self.clock.advance(seconds)

    @invariant()
    def every_pod_in_exactly_one_place(self):
        q = self.q
        queued = [p.key for p in q.pods_in_active_q() + q.pods_in_backoff_q() + q.unschedulable_pods()]
        flying = [p.key for p in q.in_flight_pods()]
        everything = queued + flying
        assert len(everything) == len(set(everything)), "a pod is in two places"
        live_flight = set(self.flight) - self.deleted_flight
        assert set(queued) | (set(flying) - self.deleted_flight) == set(self.pods), "a pod got lost"
        assert set(flying) == set(self.flight) and not (set(queued) & live_flight)
        assert len(q) == len(queued)

    @invariant()
    def sub_queue_rules(self):
        q, now = self.q, self.clock.now()
        for p in q.pods_in_active_q() + q.pods_in_backoff_q():
            assert not p.raw["spec"].get("schedulingGates"), "a gated pod left the pool"
            assert not q.get(p.key).gated
        for p in q.pods_in_backoff_q():    # flushed at every whole second once over
            assert q._backoff_of.expiry(q.get(p.key)) >= math.floor(now) or now < 1
        last_tick = 30 * math.floor(now / 30)
        for p in q.unschedulable_pods():   # non-gated pool pods leave after 5 minutes
            info = q.get(p.key)
            assert info.gated or last_tick - info.timestamp <= 300
        active = [q.get(p.key) for p in q.pods_in_active_q()]
        keys = [(-i.pod.priority, i.timestamp) for i in active]
        assert keys == sorted(keys)


QueueMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=50, deadline=None,
                                          suppress_health_check=[HealthCheck.too_slow])
TestQueueMachine = QueueMachine.TestCase


def test_heap_head_is_the_pop_order_without_popping():
    """Heap.head (backoffQ's run of the next pops): the first live entries in pop order, with
    removed entries skipped and popped ones gone; the heap left as it was."""
    class Item:
        def __init__(self, key):
            self.key, self.heap_entry = key, None
    for trial in range(200):
        rng = random.Random(trial)
        heap = Heap(lambda p: (p.key,), itertools.count())
        items = [Item(rng.randint(0, 20)) for _ in range(rng.randint(0, 60))]
        for p in items:
            heap.push(p)
        for p in rng.sample(items, len(items) // 3):
            heap.remove(p)
        for _ in range(rng.randint(0, 5)):
            heap.pop()
        order = heap.items()
        for most in (1, 3, 8, 100):
            assert heap.head(most) == order[:most]
        assert heap.items() == order and len(heap) == len(order)
