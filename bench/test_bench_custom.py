"""What a custom Score plugin costs per node: a native one (Numba, called inside the kernel's
pass) against the in-tree NodeResourcesFit score of similar work, and a Python one (one NumPy
call per pod). basic 5,000 nodes, 2,000 pods, 100% of nodes scored."""
import numpy as np
import pytest

from kschedcore import Scheduler, parse_config
from kschedcore.custom import CustomScore, NativeScore

from timing import prepared, time_schedule_pending
from workloads import basic

PODS = 2000


def free_cpu(row, node, pod, params):
    """LeastAllocated on cpu alone: the share of the node's cpu left after the pod."""
    cpu = params[0]
    alloc = node.alloc[row, cpu]
    if alloc == 0:
        return 0
    return (alloc - node.requested[row, cpu] - pod[cpu]) * 100 // alloc


def free_cpu_millis(row, node, pod, params):
    """The same without the division: what calling a native plugin costs by itself."""
    cpu = params[0]
    return node.alloc[row, cpu] - node.requested[row, cpu] - pod[cpu]


class PyFreeCpu(CustomScore):
    name = "PyFreeCpu"

    def score(self, state, pod, nodes, rows):
        c = nodes.resource_col("cpu")
        a = nodes.alloc[rows, c]
        left = a - nodes.requested[rows, c] - pod.requests.get("cpu", 0)
        return np.where(a > 0, left * 100 // np.maximum(a, 1), 0)


WITHOUT_FIT_SCORE = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                     "profiles": [{"schedulerName": "default-scheduler",
                                   "plugins": {"score": {"disabled": [{"name": "NodeResourcesFit"}]}}}]}
CASES = {
    "in-tree": {},
    "in-tree-without-fit-score": {"config": parse_config(WITHOUT_FIT_SCORE)},
    "plus-native-score": {"plugins": [NativeScore("FreeCpu", free_cpu, resources=["cpu"])]},
    "plus-native-score-no-division": {"plugins": [NativeScore("FreeCpuMillis", free_cpu_millis, resources=["cpu"])]},
    "plus-python-score": {"plugins": [PyFreeCpu()]},
}


@pytest.mark.parametrize("case", list(CASES))
def test_custom_score_cost(benchmark, case):
    def make():
        sched = Scheduler.from_workload(basic(5000), percentage_of_nodes_to_score=100, **CASES[case])
        sched.pending = sched.pending[:PODS]
        return prepared(sched)

    time_schedule_pending(benchmark, make, rounds=3)
