"""Soak under churn and faults (`pytest -m soak`; not in the default run).

A cluster of SOAK_NODES nodes (default 5,000) and the whole loop (queue, preemption on, binding
with latency) for SOAK_CYCLES scheduling cycles (default 10^6), under continuous churn: pods of
three priorities arriving in waves and leaving, nodes added, cordoned and removed (their pods
deleted, as the pod garbage collector would); 20% of Binds fail and 5% time out. Every 10^4
cycles the loop's invariants are checked -- each pod in exactly one place (queue, binding,
bound), the cache's placements exactly the binding and bound pods, no node over allocatable, the
node table equal to a recount from the truth -- no pod is lost (every pod that arrived is
pending, bound, departed or preempted), and the RSS is recorded; the memory trend is fitted
against the cycles and the pods held (memory_trend). A second test runs live mode (threads, a
binder pool). The figures are printed (run with -s).
"""
import os
import random

import numpy as np
import pytest

from kschedcore import Scheduler
from kschedcore.scheduler.loop import Simulation, SimulationListener

pytestmark = pytest.mark.soak
NODES = int(os.environ.get("SOAK_NODES", "5000"))
CYCLES = int(os.environ.get("SOAK_CYCLES", str(10**6)))
CHECK_EVERY = 10**4


def rss_kb() -> int:
    """VmRSS after malloc_trim: what the process holds, not what glibc's allocator keeps cached."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def node(i):
    return {"metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}",
                                                    "topology.kubernetes.io/zone": f"z{i % 3}"}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}


def pod(k, rng):
    return {"metadata": {"name": f"p{k}", "namespace": "default", "labels": {"app": f"a{k % 7}"}},
            "spec": {"priority": rng.choice((0, 0, 0, 100, 1000)),
                     "containers": [{"name": "c", "image": "x", "resources": {"requests": {
                         "cpu": f"{rng.choice((250, 500, 1000, 2000))}m", "memory": f"{rng.choice((1, 2, 4))}Gi"}}}]}}


class Preempted(SimulationListener):
    def __init__(self):
        self.keys = set()

    def preempted(self, key, node, victims):
        self.keys.update(victims)


def check(sim, alive):
    t = sim.sched.table
    # queued, or popped and not yet processed (live mode pops outside the scheduler's lock; the
    # queue counts a pod in flight until its binding ends)
    queued = {p.key for p in sim.queue.pending_pods()}
    queued |= {p.key for p in sim.queue.in_flight_pods()} - set(sim.bound) - set(sim.binding)
    for key in sim.pods:
        places = (key in sim.bound) + (key in sim.binding) + (key in queued or sim.queue.get(key) is not None)
        assert places == 1, (key, key in sim.bound, key in sim.binding)
    placed = {pl.pod.key: pl.node for pl in sim.sched.cache.placements()}
    assert placed == {**sim.bound, **sim.binding}
    want = np.zeros_like(t.requested)
    pods = np.zeros_like(t.pod_count)
    for key, n in placed.items():
        row = t.row_of[n]
        for res, amount in sim.pods[key].requests.items():
            col = t.resources.get(res)
            if col >= 0:
                want[row, col] += amount
        pods[row] += 1
    rows = list(t.row_of.values())
    assert np.array_equal(t.requested[rows], want[rows]) and np.array_equal(t.pod_count[rows], pods[rows])
    assert np.all(t.requested[rows, :3] <= t.alloc[rows, :3]) and np.all(t.pod_count[rows] <= t.allowed_pods[rows])
    assert alive == set(sim.pods), (sorted(alive - set(sim.pods))[:5], sorted(set(sim.pods) - alive)[:5])


def memory_trend(cycles, rss_kib, pods_held):
    """(RSS slope in KiB per 10^4 cycles; the fit RSS = a + b * pods held + c * cycles: b in KiB
    per pod, c in KiB per 10^4 cycles). The churn lets the node count, and with it the pods the
    cluster holds, drift; c is the growth that is not explained by what is held."""
    if len(rss_kib) < 3:
        return 0.0, 0.0, 0.0
    x = np.asarray(cycles, float) / CHECK_EVERY
    y = np.asarray(rss_kib, float)
    slope = np.polyfit(x, y, 1)[0]
    design = np.column_stack([np.ones_like(x), np.asarray(pods_held, float), x])
    (_, per_pod, residual), *_ = np.linalg.lstsq(design, y, rcond=None)
    return slope, per_pod, residual


def test_soak_under_churn_and_faults():
    rng = random.Random(7)
    sched = Scheduler([node(i) for i in range(NODES)], seed=7)
    listener = Preempted()

    def binder(pod, node_name):
        x = rng.random()
        return "binding rejected" if x < 0.20 else "context deadline exceeded" if x < 0.25 else None

    sim = Simulation(sched, binder=binder, bind_latency=0.05, listener=listener)
    alive, departed, k, next_node = set(), 0, 0, NODES
    checks, rss, held = [], [], []
    arrived = 0
    while sim.cycles < CYCLES:
        for _ in range(rng.randint(50, 400)):              # a wave of arrivals (departures below)
            sim.add_pod(pod(k, rng))
            alive.add(f"default/p{k}")
            k += 1
            arrived += 1
        # departures: as many as arrived once the cluster holds its share (about 6 pods a node,
        # ~70% of cpu), fewer before -- a steady state, so memory must stay flat
        wave = rng.randint(50, 400)
        leaving = wave if len(sim.pods) >= 6 * len(sched.table) else wave // 3
        for key in rng.sample(list(sim.pods), min(leaving, len(sim.pods))):
            sim.delete_pod(key)
            alive.discard(key)
            departed += 1
        r = rng.random()
        if r < 0.03:                                      # a node joins
            sim.add_node(node(next_node))
            next_node += 1
        elif r < 0.06:                                    # a node is cordoned
            name = rng.choice(list(sched.table.row_of))
            raw = dict(sched.cache.node(name).raw, spec={"unschedulable": True})
            sim.update_node(raw)
        elif r < 0.09 and len(sched.table) > NODES * 9 // 10:   # a node goes, its pods with it
            name = rng.choice(list(sched.table.row_of))
            for key in [p.key for p in sched.cache.pods_on(name)]:
                sim.delete_pod(key)
                alive.discard(key)
                departed += 1
            sim.remove_node(name)
        sim.clock.advance_to(sim.clock.now() + rng.uniform(0.01, 2.0))
        before = sim.cycles
        while sim.schedule_one() and sim.cycles - before < 2000:
            pass
        sim.bindings.complete_due()
        alive -= listener.keys & alive                    # preempted pods are deleted by the loop
        if sim.cycles // CHECK_EVERY > len(checks):
            check(sim, alive)
            checks.append(sim.cycles)
            rss.append(rss_kb())
            held.append(len(sim.pods))
    warm, half, third = len(rss) // 5, len(rss) // 2, 2 * len(rss) // 3
    slope, per_pod, residual = memory_trend(checks[warm:], rss[warm:], held[warm:])
    late_slope = memory_trend(checks[half:], rss[half:], held[half:])[0]
    last_slope = memory_trend(checks[third:], rss[third:], held[third:])[0]
    print(f"\nsoak: {sim.cycles} cycles, {arrived} pods arrived, {departed} departed, {len(listener.keys)} preempted, "
          f"{len(sim.bound)} bound, {len(sim.pods) - len(sim.bound) - len(sim.binding)} pending at the end, "
          f"{len(checks)} checks passed; RSS {rss[0] // 1024 if rss else 0}-{max(rss) // 1024 if rss else 0} MiB, "
          f"{held[0] if held else 0}-{max(held) if held else 0} pods held; after warm-up: RSS slope {slope:.1f} KiB "
          f"per 10^4 cycles; {per_pod:.2f} KiB per pod held and {residual:.1f} KiB per 10^4 cycles at a constant "
          f"number of pods; over the second half: RSS {rss[half] // 1024 if rss else 0}-{rss[-1] // 1024 if rss else 0} MiB, "
          f"slope {late_slope:.1f} KiB per 10^4 cycles; over the last third: RSS {rss[third] // 1024 if rss else 0}-"
          f"{rss[-1] // 1024 if rss else 0} MiB, slope {last_slope:.1f} KiB per 10^4 cycles")
    assert len(checks) >= 1


LIVE_PODS = int(os.environ.get("SOAK_LIVE_PODS", str(10**5)))
LIVE_THREADS = 4


def test_live_soak_event_threads_and_binder_pool():
    """Live mode: the loop on its thread, a pool of 4 binder threads (20% of Binds fail, 5% time
    out after a wait), and 4 event threads feeding LIVE_PODS pods (default 10^5) with departures;
    one of them also adds, cordons and removes nodes. The invariants are checked under the
    scheduler's lock while everything runs, and once it is quiet."""
    import threading
    import time

    from kschedcore.scheduler.live import LiveScheduler
    listener = Preempted()
    rngs = [random.Random(100 + i) for i in range(LIVE_THREADS + 1)]

    def binder(pod, node_name):
        x = random.random()
        if x < 0.20:
            return "binding rejected"
        if x < 0.25:
            time.sleep(0.001)
            return "context deadline exceeded"
        return None

    live = LiveScheduler(Scheduler([node(i) for i in range(NODES)], seed=7), binder=binder, binder_threads=4,
                         listener=listener, pod_initial_backoff=0.01, pod_max_backoff=0.05)
    alive, stats = set(), {"arrived": 0, "departed": 0, "checks": 0, "nodes": NODES}
    check_every = max(LIVE_PODS // LIVE_THREADS // 20, 100)     # about 20 checks while it runs
    rss = []

    def feed(t):
        rng = rngs[t]
        mine = []
        for j in range(LIVE_PODS // LIVE_THREADS):
            k = t * 10**7 + j
            with live.lock:
                live.add_pod(pod(k, rng))
                alive.add(f"default/p{k}")
                stats["arrived"] += 1
            mine.append(f"default/p{k}")
            if j % 4 == 3:                        # one in four leaves again, wherever it is
                key = mine.pop(rng.randrange(len(mine)))
                with live.lock:
                    if key in live.sim.pods:
                        live.delete_pod(key)
                        alive.discard(key)
                        stats["departed"] += 1
            if t == 0 and j % 500 == 499:
                churn_nodes(rng)
            if t == 1 and j % check_every == check_every - 1:
                with live.lock:
                    check_live()

    def churn_nodes(rng):
        with live.lock:
            sched = live.sim.sched
            r = rng.random()
            if r < 0.4:
                live.add_node(node(stats["nodes"]))
                stats["nodes"] += 1
            elif r < 0.7:
                name = rng.choice(list(sched.table.row_of))
                live.update_node(dict(sched.cache.node(name).raw, spec={"unschedulable": True}))
            elif len(sched.table) > NODES * 9 // 10:
                name = rng.choice(list(sched.table.row_of))
                for key in [p.key for p in sched.cache.pods_on(name)]:
                    live.delete_pod(key)
                    alive.discard(key)
                    stats["departed"] += 1
                live.remove_node(name)

    def check_live():
        # preempted pods are deleted by the loop -- the last of a preemption's victims a cycle
        # after the others (`evicting`): until then it is still the simulation's
        alive.difference_update(listener.keys - live.sim.evicting)
        check(live.sim, alive)
        stats["checks"] += 1
        rss.append(rss_kb())

    start = time.perf_counter()
    with live:
        errors = []

        def guarded(t):
            try:
                feed(t)
            except BaseException as e:        # an event thread's failure fails the test
                errors.append(e)
                raise
        threads = [threading.Thread(target=guarded, args=(t,)) for t in range(LIVE_THREADS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        fed = time.perf_counter() - start
        assert not errors, errors[0]
        deadline, last = time.monotonic() + 120, -1   # quiet: nothing binding, no cycle for 1 s
        while time.monotonic() < deadline:
            with live.lock:
                sim = live.sim
                quiet = not sim.binding and live._in_flight == 0 and sim.cycles == last
                last = sim.cycles
            if quiet:
                break
            time.sleep(1.0)
        with live.lock:
            check_live()
            sim = live.sim
            bound, binding = len(sim.bound), len(sim.binding)
            pending = len(sim.pods) - bound - binding
    elapsed = time.perf_counter() - start
    print(f"\nlive soak: {stats['arrived']} pods from {LIVE_THREADS} threads in {fed:.1f} s "
          f"({stats['arrived'] / fed:,.0f} pods/s fed), quiet after {elapsed:.1f} s; {stats['departed']} departed, "
          f"{len(listener.keys)} preempted, {bound} bound, {binding} binding, {pending} pending; "
          f"{stats['checks']} checks passed; RSS {rss[0] // 1024}-{max(rss) // 1024} MiB")
    assert quiet and binding == 0 and stats["checks"] >= 2
