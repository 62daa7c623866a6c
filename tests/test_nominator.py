"""Nominated pods counted through per-priority sums (backend/cache/nominated.py) give the very
decisions of placing each counted pod around every cycle, and leave the cache as it was; the
queue's Nominator is the one store of nominations, the sums follow it."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedcore import Scheduler
from kschedcore.scheduler.loop import Simulation
from kschedcore.backend.cache.nominated import NominatedUsage
from kschedcore.backend.queue import Nominator
from test_preemption_fast import PRIORITIES, _cluster, _outcomes, _pod, _then_nodes_change


def _run(seed, mode, tie_break):
    """mode: "sums" (whole-table sums), "rows" (each nominated node's row), "each" (every
    counted pod placed in the cache)."""
    NominatedUsage.sums = mode != "each"
    NominatedUsage.row_by_row = 0 if mode == "sums" else 32
    try:
        sched, rng = _cluster(seed, tie_break)
        before = sched.table.requested.copy()
        sim = Simulation(sched, bind_latency=rng.choice([0.0, 2.0]))
        for i in range(rng.randint(4, 12)):       # arriving together: many nominated at once
            sim.add_pod(_pod(f"high-{i}", rng, rng.choice(PRIORITIES[2:]), big=rng.random() < 0.7))
        counted = []
        real = sim.usage.counted

        def spy(pod):
            counted.append(len(sim.usage))
            return real(pod)

        sim.usage.counted = spy
        first = _outcomes(sim, 30)
        then = _then_nodes_change(sim, rng, 4)
        # the cache is the placed pods' sum: nothing nominated was left in it
        want = np.zeros_like(sched.table.requested)
        for pl in sched.cache.placements():
            np.add.at(want[sched.table.row_of[pl.node]], pl.cols, pl.vals)
        assert (sched.table.requested == want).all()
        assert before.shape[1] <= want.shape[1]
        return (sim.preemptions, first, then, dict(sim.nominated)), counted
    finally:
        NominatedUsage.sums, NominatedUsage.row_by_row = True, 32


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["first", "random"]))
def test_sums_and_rows_decide_as_placing_each_pod(seed, tie_break):
    each = _run(seed, "each", tie_break)[0]
    assert _run(seed, "sums", tie_break)[0] == each
    assert _run(seed, "rows", tie_break)[0] == each


def test_examples_count_several_nominated_pods_at_once():
    """Not vacuous: cycles ran with two or more pods nominated."""
    most = max(max(_run(seed, "rows", "first")[1], default=0) for seed in range(8))
    assert most >= 2


@pytest.mark.parametrize("row_by_row", [0, 32])
def test_counted_requests_follow_the_pod(row_by_row):
    """A nominated pod counts with its requests of the moment (re-nominating it after an
    update counts the new ones), for pods of lower or equal priority, never for itself."""
    node = {"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "4", "pods": "10"}}}
    sched = Scheduler([node])

    def pod(name, cpu, priority):
        return sched.parse_pod({"metadata": {"name": name}, "spec": {"priority": priority, "containers": [
            {"name": "c", "resources": {"requests": {"cpu": cpu}}}]}})

    usage = NominatedUsage(sched.cache)
    usage.row_by_row = row_by_row            # 0: through the sums
    nominator = Nominator(listener=usage)
    n = pod("n", "1", 5)
    nominator.add(n, "a")
    t, cpu = sched.table, sched.table.resource_col("cpu")
    seen = []
    for incoming in (pod("low", "1", 1), pod("high", "1", 9), n):
        with usage.counted(incoming) as rows:
            seen.append((list(rows), int(t.requested[t.row_of["a"], cpu])))
    assert seen == [([t.row_of["a"]], 1000), ([], 0), ([], 0)]
    bigger = pod("n", "3", 5)
    nominator.update(n, bigger)            # an update keeps the nomination, counted anew
    assert nominator.node_of(bigger) == "a"
    with usage.counted(pod("low", "1", 1)):
        assert t.requested[t.row_of["a"], cpu] == 3000
    assert t.requested[t.row_of["a"], cpu] == 0
    nominator.delete(bigger)               # the sums follow the Nominator, nothing else
    with usage.counted(pod("low", "1", 1)) as rows:
        assert not len(rows) and t.requested[t.row_of["a"], cpu] == 0
