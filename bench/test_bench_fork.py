"""Forks (Scheduler.fork): their cost follows what changed, not the cluster.

The generated default cluster at 5,000 and 100,000 nodes (pods scheduled first). Timed: a bare
fork + revert; and a fork, a drain of one node (cordon, evict), rescheduling its pods, revert --
cluster-autoscaler's scale-down question for one node -- per node, over 200 nodes with pods.
"""
import pytest

from kschedcore import Scheduler
from kschedcore.sources.generator import generate

_CLUSTERS = {}


def _cluster(nodes: int) -> Scheduler:
    if nodes not in _CLUSTERS:
        sched = Scheduler.from_workload(generate(nodes=nodes, pods=min(3 * nodes, 30000), seed=1))
        sched.schedule_pending()
        _CLUSTERS[nodes] = sched
    return _CLUSTERS[nodes]


@pytest.mark.parametrize("nodes", [5000, 100000])
def test_fork_revert(benchmark, nodes):
    sched = _cluster(nodes)

    def run():
        for _ in range(100):
            sched.fork().revert()

    benchmark.pedantic(run, rounds=5, iterations=1)
    benchmark.extra_info["microsecondsPerForkRevert"] = round(benchmark.stats.stats.median / 100 * 1e6, 1)


@pytest.mark.parametrize("nodes", [5000, 100000])
def test_fork_drain_reschedule_revert(benchmark, nodes):
    sched = _cluster(nodes)
    names = [n for n in sched.cache.table.row_of if sched.cache.pods_on(n)][:200]
    moved = []

    def run():
        moved.clear()
        for name in names:
            f = sched.fork()
            moved.append(len(sched.drain(name)))
            sched.schedule_pending()
            f.revert()

    benchmark.pedantic(run, rounds=3, iterations=1)
    per_node = benchmark.stats.stats.median / len(names)
    benchmark.extra_info["millisecondsPerDrain"] = round(per_node * 1e3, 3)
    benchmark.extra_info["millisecondsPerDisplacedPod"] = round(per_node * 1e3 / (sum(moved) / len(names)), 3)
