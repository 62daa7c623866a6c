"""A replay's time series stay aligned: every resource's utilisation series has one value per
sample, None where no node had that resource at the time (GPU nodes that join late or leave)."""
from kschedcore import Scheduler
from kschedcore.replay import Replay
from kschedcore.replay.events import WatchEvent


def _node(name, gpus=None):
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "20"}
    if gpus:
        alloc["nvidia.com/gpu"] = gpus
    return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": alloc, "capacity": dict(alloc)}}


def _pod(name, gpus=None):
    requests = {"cpu": "1"}
    if gpus:
        requests["nvidia.com/gpu"] = gpus
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": requests, "limits": dict(requests)}}]}}


def _ev(typ, obj):
    return WatchEvent(typ, obj["kind"], obj, f"test: {obj['metadata']['name']}")


def test_utilization_series_align_when_a_resource_comes_and_goes():
    """A GPU node joins after the first samples and leaves before the end: the GPU series is
    None before it joins and after it leaves, and as long as the time series."""
    timeline = [_ev("ADDED", _pod("a")), _ev("ADDED", _node("gpu", gpus="2")), _ev("ADDED", _pod("g", gpus="1")),
                _ev("DELETED", _pod("g", gpus="1")), _ev("DELETED", _node("gpu", gpus="2")), _ev("ADDED", _pod("b"))]
    replay = Replay(Scheduler(tie_break="first"), [_ev("ADDED", _node("cpu"))], timeline, arrival="settle", samples=100)
    replay.run()
    series = replay.sampler.finish()
    n = len(series["time"])
    assert n == len(timeline) + 1
    assert {name: len(values) for name, values in series["utilization"].items()} == \
        {name: n for name in series["utilization"]}
    # a sample after each event, and the final one: the node joins at the second event, the
    # GPU pod runs from the third to the fourth, the node leaves at the fifth
    assert series["utilization"]["nvidia.com/gpu"] == [None, 0.0, 0.5, 0.0, None, None, None]
