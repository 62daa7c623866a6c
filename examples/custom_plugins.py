"""A worked example of kschedcore's plugin API: three custom plugins and gang scheduling.

    python examples/custom_plugins.py

- FreeGpus (native Score, compiled with Numba): prefer nodes that keep the most GPUs free.
- TenantRacks (Python PreFilter + Filter): a pod labelled `tenant` may only use the racks
  listed for its tenant; PreFilter computes the allowed rows once per pod into the CycleState,
  Filter reads them back, and PreFilter narrows the nodes to evaluate with a PreFilterResult.
- Coscheduling: pods of a PodGroup wait at Permit until `minMember` of them are reserved.
"""
import numpy as np

from kschedcore import Scheduler
from kschedcore.custom import CustomFilter, NativeScore
from kschedcore.framework.interface import SKIP, PreFilterResult, UnschedulableAndUnresolvable
from kschedcore.scheduler.loop import Simulation
from kschedcore.plugins.coscheduling import Coscheduling


def free_gpus(row, node, pod, params):
    """Native Score: GPUs left on the node after the pod (params[0]: the GPU column)."""
    gpu = params[0]
    return node.alloc[row, gpu] - node.requested[row, gpu] - pod[gpu]


class TenantRacks(CustomFilter):
    name = "TenantRacks"
    reason = "node(s) are in a rack of another tenant"

    def __init__(self, racks_by_tenant):
        self.racks_by_tenant = racks_by_tenant

    def pre_filter(self, state, pod, nodes):
        tenant = pod.labels.get("tenant")
        if tenant is None:
            return SKIP                               # this pod's Filter is not called
        racks = self.racks_by_tenant.get(tenant)
        if not racks:
            return UnschedulableAndUnresolvable(f"tenant {tenant} has no racks")
        rack = nodes.label("rack")
        allowed = np.isin(rack, [nodes.value_id(r) for r in racks])
        state.write("TenantRacks/allowed", allowed)
        return PreFilterResult(nodes.names(np.flatnonzero(allowed & nodes.alive)))

    def filter(self, state, pod, nodes):
        return state.read("TenantRacks/allowed")   # True passes


def node(name, rack, gpus):
    return {"metadata": {"name": name, "labels": {"rack": rack}},
            "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}}}


def pod(name, gpus=0, **labels):
    req = {"cpu": "1", "memory": "1Gi"}
    gpu = {"nvidia.com/gpu": str(gpus)} if gpus else {}      # the API server wants a limit for a GPU
    return {"metadata": {"name": name, "labels": labels},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {**req, **gpu}, "limits": gpu}}]}}


def main():
    nodes = [node(f"r{r}-n{i}", f"rack-{r}", gpus=2 * (i + 1)) for r in range(3) for i in range(3)]
    groups = [{"metadata": {"name": "train"}, "spec": {"minMember": 3, "scheduleTimeoutSeconds": 30}}]
    sched = Scheduler(nodes, tie_break="first", plugins=[
        NativeScore("FreeGpus", free_gpus, resources=["nvidia.com/gpu"], weight=2, normalize=True),
        TenantRacks({"blue": ["rack-0", "rack-1"], "red": ["rack-2"]}),
        Coscheduling(groups),
    ])
    print("one decision:", sched.schedule(pod("web", gpus=1, tenant="red")).node)
    print("no racks:", sched.schedule(pod("x", tenant="green")).fit_error)

    sim = Simulation(sched, bind_latency=0.5)
    for i in range(3):
        sim.add_pod(pod(f"train-{i}", gpus=2, tenant="blue", **{"scheduling.x-k8s.io/pod-group": "train"}))
    for o in sim.run_until_idle():
        print(f"{o.pod}: {o.node} after {o.attempts} attempt(s)")


if __name__ == "__main__":
    main()
