"""Custom Filter and Score plugins: native (Numba, called inside the kernel's pass) and Python
(one NumPy call per pod) give the same decisions as a plain computation of their rule."""
import numpy as np
import pytest

from kschedcore import Scheduler
from kschedcore.custom import CustomFilter, CustomScore, NativeFilter, NativeScore
from kschedcore.errors import ValidationError


def node(name, cpu, gpus=0, zone="a"):
    alloc = {"cpu": cpu, "memory": "8Gi", "pods": "110"}
    if gpus:
        alloc["example.com/gpu"] = str(gpus)
    return {"metadata": {"name": name, "labels": {"zone": zone}}, "status": {"allocatable": alloc}}


def pod(name, cpu="500m", gpus=0):
    req = {"cpu": cpu}
    if gpus:
        req["example.com/gpu"] = str(gpus)
    limits = {"example.com/gpu": req["example.com/gpu"]} if gpus else {}
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "resources": {
        "requests": req, "limits": limits}}]}}


NODES = [node("n0", "4", 0, "a"), node("n1", "8", 4, "b"), node("n2", "2", 8, "a"), node("n3", "16", 2, "c")]


# ---- a score: free GPUs after placing the pod (more is better) ------------------------------------
def free_gpus(row, node, pod, params):
    gpu = params[0]
    return node.alloc[row, gpu] - node.requested[row, gpu] - pod[gpu]


class PyFreeGpus(CustomScore):
    name = "FreeGpus"

    def score(self, state, pod, nodes, rows):
        g = nodes.resource_col("example.com/gpu")
        req = pod.requests.get("example.com/gpu", 0)
        return nodes.alloc[rows, g] - nodes.requested[rows, g] - req


# ---- a filter: only zones listed in params (label value ids) ---------------------------------------
def zone_allowed(row, node, pod, params):
    v = node.labels[row, params[0]]
    for i in range(1, params.shape[0]):
        if v == params[i]:
            return 0
    return 2


def explain(plugins, p, **kw):
    sched = Scheduler(NODES, percentage_of_nodes_to_score=100, tie_break="first", plugins=plugins, **kw)
    return sched.explain(p)


@pytest.mark.parametrize("make", [lambda: NativeScore("FreeGpus", free_gpus, resources=["example.com/gpu"], weight=3),
                                  lambda: _weighted(PyFreeGpus(), 3)], ids=["native", "python"])
def test_score_is_weighted_raw_and_decides(make):
    rec = explain([make()], pod("p", gpus=1))
    # n0 has no GPU: Fit filter rejects it; free GPUs after the pod: n1 3, n2 7, n3 1
    assert {n: s["raw:FreeGpus"] for n, s in rec["scores"].items()} == {"n1": 3, "n2": 7, "n3": 1}
    assert {n: s["FreeGpus"] for n, s in rec["scores"].items()} == {"n1": 9, "n2": 21, "n3": 3}
    without = explain([], pod("p", gpus=1))
    for n, s in rec["scores"].items():
        assert s["total"] == without["scores"][n]["total"] + s["FreeGpus"]
    best = max(rec["scores"], key=lambda n: (rec["scores"][n]["total"], -int(n[1])))
    assert rec["node"] == best


def _weighted(plugin, weight):
    plugin.weight = weight
    return plugin


def test_normalized_score():
    plugin = NativeScore("FreeGpus", free_gpus, resources=["example.com/gpu"], normalize=True)
    rec = explain([plugin], pod("p", gpus=1))
    # DefaultNormalizeScore: raw * 100 / max raw (7)
    assert {n: s["FreeGpus"] for n, s in rec["scores"].items()} == {"n1": 300 // 7, "n2": 100, "n3": 100 // 7}


def test_native_filter_with_label_params():
    plugin = NativeFilter("ZoneAllowed", zone_allowed, labels=["zone"], values=["a", "c"], reason="zone not allowed")
    rec = explain([plugin], pod("p"))
    assert rec["filter"] == {"n1": {"ok": False, "code": "UnschedulableAndUnresolvable", "plugin": "ZoneAllowed",
                                    "reasons": ["zone not allowed"]}}
    # in-tree Filters run first: NodeResourcesFit rejects n1 before the custom plugin sees it
    rec = explain([plugin], pod("big", cpu="20"))
    assert rec["fitError"] == "0/4 nodes are available: 4 Insufficient cpu."
    rec = explain([plugin], pod("mid", cpu="6"))
    assert rec["fitError"] is None and rec["node"] == "n3" and rec["filter"]["n1"]["plugin"] == "ZoneAllowed"


class OnlyEvenRows(CustomFilter):
    name = "OnlyEvenRows"
    reason = "odd row"

    def filter(self, state, pod, nodes):
        return np.arange(nodes.labels.shape[0]) % 2 == 0       # True: passes


def test_python_filter_bool_mask_and_threads_agree():
    for threads in (1, 2):
        rec = explain([OnlyEvenRows()], pod("p"), threads=threads)
        assert sorted(rec["filter"]) == ["n1", "n3"] and rec["node"] in ("n0", "n2")


def test_native_and_python_give_the_same_decisions():
    pods = [pod(f"p{i}", cpu=f"{100 * (i % 7 + 1)}m", gpus=i % 3) for i in range(40)]
    results = []
    for plugin in (NativeScore("FreeGpus", free_gpus, resources=["example.com/gpu"], weight=5),
                   _weighted(PyFreeGpus(), 5)):
        sched = Scheduler(NODES, percentage_of_nodes_to_score=100, tie_break="first", plugins=[plugin])
        for p in pods:
            sched.queue(p)
        results.append([r.node for r in sched.schedule_pending()])
    assert results[0] == results[1]


def test_invalid_plugins():
    with pytest.raises(ValidationError, match="distinct"):
        Scheduler(NODES, plugins=[OnlyEvenRows(), OnlyEvenRows()])
    with pytest.raises(ValidationError, match="at most 4 custom Filter"):
        Scheduler(NODES, plugins=[NativeFilter(f"F{i}", zone_allowed) for i in range(5)])
    with pytest.raises(ValidationError, match="not a CustomFilter"):
        Scheduler(NODES, plugins=[object()])

    def bad(row, node, pod, params):
        return node.nonexistent[row]

    with pytest.raises(ValidationError, match="plugin Bad: fn: cannot be compiled with Numba"):
        Scheduler(NODES, plugins=[NativeScore("Bad", bad)])

    class WrongShape(CustomScore):
        name = "WrongShape"

        def score(self, state, pod, nodes, rows):
            return np.zeros(len(rows) + 1, np.int64)

    with pytest.raises(ValidationError, match="one value per feasible node"):
        Scheduler(NODES, plugins=[WrongShape()]).schedule(pod("p"))
