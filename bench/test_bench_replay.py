"""Replay throughput (kschedcore.replay) against the bare scheduling of the same pods.

The generated default cluster (`kschedcore simulate` with no workload: 5,000 nodes, 30,000 pods
of mixed shapes), once scheduled in order by `schedule_pending()` and once replayed with
`--arrival timestamps`: the pods arrive 400 a second and each leaves after running a random
10-60 s (`kschedcore.io/duration`; about 14,000 pods run at a time, half of what fits), so the
cluster churns -- every departure frees room and goes through the queue's event path. Parsing is outside both timings. The Alibaba 2023 trace excerpt in the
repository is replayed too (the full trace: see docs/benchmarks.md).
"""
import random
import time
from datetime import datetime, timedelta, timezone

from kschedcore import Scheduler
from kschedcore.replay import Replay
from kschedcore.replay.events import workload_events
from kschedcore.sources.generator import generate

NODES, PODS = 5000, 30000
EPOCH = datetime(2025, 1, 1, tzinfo=timezone.utc)
_BARE = {}


def _churning(seed=1, nodes=NODES, pods=PODS):
    w = generate(nodes=nodes, pods=pods, seed=seed)
    rng, t = random.Random(seed), 0.0
    for p in w.pending:
        t += rng.expovariate(400.0)
        meta = p["metadata"]
        meta["creationTimestamp"] = (EPOCH + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        meta.setdefault("annotations", {})["kschedcore.io/duration"] = f"{rng.randint(10, 60)}s"
    return w


def test_bare_schedule_pending_generated_default(benchmark):
    state = {}

    def setup():
        sched = Scheduler.from_workload(_churning())
        for pod in sched.pending:
            sched.prepare(pod)
        state["sched"] = sched
        return (), {}

    def run():
        state["results"] = state["sched"].schedule_pending()

    benchmark.pedantic(run, setup=setup, rounds=3, iterations=1)
    pods_per_second = PODS / benchmark.stats.stats.median
    _BARE["podsPerSecond"] = pods_per_second
    benchmark.extra_info["podsPerSecond"] = round(pods_per_second)


def test_replay_generated_default_with_departures(benchmark):
    state = {}

    def setup():
        cluster, arrivals = workload_events(_churning(), "generated")
        state["replay"] = Replay(Scheduler(), cluster, arrivals, arrival="timestamps")
        return (), {}

    def run():
        state["replay"].run()

    benchmark.pedantic(run, setup=setup, rounds=3, iterations=1)
    replay, median = state["replay"], benchmark.stats.stats.median
    recs = replay.recorder.records.values()
    assert sum(1 for r in recs if r.bound_at is not None) > 0.99 * PODS
    assert sum(1 for r in recs if r.departed_at is not None) > 0.99 * PODS
    info = benchmark.extra_info
    info["podsPerSecond"] = round(PODS / median)
    info["eventsPerSecond"] = round(replay.applied / median)
    info["events"] = replay.applied
    info["cycles"] = replay.sim.cycles
    if "podsPerSecond" in _BARE:
        info["ofBareSchedulePending"] = round(PODS / median / _BARE["podsPerSecond"], 3)


def test_replay_full_cluster_storm(benchmark):
    """The generated cluster at 1,000 nodes with 6,000 such pods, all arriving at once: about a
    thousand fit nowhere, and every departure sends them back to be retried (NodeResourcesFit
    queues them on any assigned pod's deletion) -- a storm of failed cycles from backoffQ, as
    kube-scheduler goes through it. The first 20 replay seconds."""
    state = {}

    def setup():
        cluster, arrivals = workload_events(_churning(nodes=1000, pods=6000), "generated")
        state["replay"] = Replay(Scheduler(), cluster, arrivals, arrival="all", until=20)
        return (), {}

    def run():
        state["replay"].run()

    benchmark.pedantic(run, setup=setup, rounds=3, iterations=1)
    replay = state["replay"]
    assert replay.sim.cycles > 300_000
    benchmark.extra_info["cycles"] = replay.sim.cycles
    benchmark.extra_info["cyclesPerSecond"] = round(replay.sim.cycles / benchmark.stats.stats.median)


def test_replay_alibaba_excerpt_end_to_end(benchmark):
    """Whole replay of the repository's Alibaba excerpt, loading included (a smoke figure)."""
    from pathlib import Path
    from kschedcore.replay import load_replay
    data = Path(__file__).parents[1] / "tests" / "data" / "alibaba"

    def run():
        r = load_replay([data / "openb_node_list_excerpt.csv", data / "openb_pod_list_excerpt.csv"])
        t0 = time.perf_counter()
        r.run()
        return time.perf_counter() - t0

    benchmark.pedantic(run, rounds=5, iterations=1)
