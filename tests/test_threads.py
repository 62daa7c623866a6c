"""Sharing scans with a helper thread never changes a decision."""
import pytest

from kschedcore import Scheduler
from kschedcore.sources.generator import generate


@pytest.fixture(scope="module")
def workload():
    # mixed shapes: taints, selectors, affinity, ports, GPUs; enough nodes for shared rounds
    return generate(nodes=600, pods=4000, seed=3)


def _run(workload, threads, pct, tie_break):
    sched = Scheduler.from_workload(workload, percentage_of_nodes_to_score=pct, threads=threads,
                                    tie_break=tie_break, seed=11)
    return [(r.pod, r.node, r.feasible_nodes, r.evaluated_nodes, str(r.fit_error))
            for r in sched.schedule_pending()], sched


@pytest.mark.parametrize("pct", [0, 30, 100])
@pytest.mark.parametrize("tie_break", ["first", "random"])
def test_two_threads_decide_as_one(workload, pct, tie_break):
    one, _ = _run(workload, 1, pct, tie_break)
    two, _ = _run(workload, 2, pct, tie_break)
    assert one == two
    assert any(r[1] is None for r in one) and any(r[1] for r in one)   # both outcomes exercised


def test_two_threads_explain_as_one(workload):
    records = []
    for threads in (1, 2):
        sched = Scheduler.from_workload(workload, percentage_of_nodes_to_score=100, threads=threads,
                                        tie_break="first")
        sched.pending = sched.pending[:40]
        records.append(sched.explain_pending())
    assert records[0] == records[1]
