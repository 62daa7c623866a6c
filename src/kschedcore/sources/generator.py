"""A synthetic cluster: the embedded default workload of `kschedcore simulate`.

Deterministic for a seed. Nodes come in a few instance types over three zones, some tainted
or labelled for dedicated pools; pods come in a few shapes (web, batch, cache, GPU jobs,
pool-pinned, host-port daemons, best-effort), so every node-local plugin has work to do.
"""
import itertools
import random
from typing import Any

from ..util import collector
from .files import Workload

INSTANCE_TYPES = (  # name, cpu, memory GiB, weight
    ("m5.large", "2", 8, 3), ("m5.xlarge", "4", 16, 4), ("m5.2xlarge", "8", 32, 3),
    ("c5.4xlarge", "16", 32, 1), ("r5.2xlarge", "8", 64, 1))
ZONES = ("zone-a", "zone-b", "zone-c")
#: random.choices' cumulative weights, made once (the same draws as weights=)
_TYPE_CUM = tuple(itertools.accumulate(t[3] for t in INSTANCE_TYPES))
KINDS = ("web", "batch", "cache", "gpu", "pinned", "daemon", "besteffort")
_KIND_CUM = tuple(itertools.accumulate((40, 25, 10, 3, 10, 2, 10)))


def _node(i, rng):
    name, cpu, mem, _ = rng.choices(INSTANCE_TYPES, cum_weights=_TYPE_CUM)[0]
    labels = {"kubernetes.io/hostname": f"node-{i:05d}", "kubernetes.io/os": "linux",
              "topology.kubernetes.io/region": "region-1", "topology.kubernetes.io/zone": ZONES[i % 3],
              "node.kubernetes.io/instance-type": name, "pool": rng.choice(("general", "general", "batch"))}
    spec: dict[str, Any] = {}
    alloc = {"cpu": cpu, "memory": f"{mem}Gi", "ephemeral-storage": "100Gi", "pods": "110"}
    roll = rng.random()
    if roll < 0.05:
        labels["accelerator"] = "nvidia-t4"
        alloc["nvidia.com/gpu"] = "4"
        spec["taints"] = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    elif roll < 0.08:
        spec["taints"] = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    elif roll < 0.12:
        spec["taints"] = [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]
    if rng.random() < 0.01:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i:05d}", "labels": labels},
            "spec": spec, "status": {"capacity": dict(alloc), "allocatable": alloc,
                                      "images": [{"names": ["registry.k8s.io/pause:3.10"], "sizeBytes": 750000},
                                                 {"names": ["nginx:1.27"], "sizeBytes": 70000000}]}}


def _container(image, cpu, mem, ports=()):
    c = {"name": "app", "image": image, "resources": {"requests": {"cpu": cpu, "memory": mem}}}
    if ports:
        c["ports"] = [{"containerPort": p, "hostPort": p, "protocol": "TCP"} for p in ports]
    return c


def _pod_params(rng) -> tuple:
    """A pod's shape and its random choices, drawn in a fixed order (the workload of a seed)."""
    kind = rng.choices(KINDS, cum_weights=_KIND_CUM)[0]
    if kind == "web":
        return kind, rng.choice(("100m", "250m", "500m")), rng.choice(("128Mi", "256Mi", "512Mi")), rng.choice(ZONES)
    if kind == "batch":
        return kind, rng.choice(("1", "2")), rng.choice(("1Gi", "2Gi", "4Gi"))
    if kind == "cache":
        return kind, rng.choice(("2Gi", "4Gi", "8Gi"))
    if kind == "pinned":
        return kind, rng.choice(ZONES)
    return (kind,)


def _spec(params) -> dict:
    kind = params[0]
    spec: dict[str, Any] = {"schedulerName": "default-scheduler"}
    if kind == "web":
        spec["containers"] = [_container("nginx:1.27", params[1], params[2])]
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "preference": {"matchExpressions": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [params[3]]}]}}]}}
    elif kind == "batch":
        spec["containers"] = [_container("busybox", params[1], params[2])]
        spec["nodeSelector"] = {"pool": "batch"}
        spec["tolerations"] = [{"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"}]
    elif kind == "cache":
        spec["containers"] = [_container("redis:7", "500m", params[1])]
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "node.kubernetes.io/instance-type",
                                                         "operator": "In", "values": ["r5.2xlarge", "m5.2xlarge"]}]}]}}}
    elif kind == "gpu":
        c = _container("cuda:12", "2", "8Gi")
        c["resources"]["requests"]["nvidia.com/gpu"] = "1"
        c["resources"]["limits"] = {"nvidia.com/gpu": "1"}
        spec["containers"] = [c]
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    elif kind == "pinned":
        spec["containers"] = [_container("app:v2", "250m", "512Mi")]
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In",
                                                         "values": [params[1]]}]}]}}}
    elif kind == "daemon":
        spec["containers"] = [_container("exporter:1", "50m", "64Mi", ports=(9100,))]
        spec["tolerations"] = [{"operator": "Exists"}]
    else:
        spec["containers"] = [{"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": {}}]
    return spec


def _pod(i, rng, specs=None):
    """Pod i. Pods of one shape share their spec and labels dicts (`specs`: params -> (spec,
    labels)): a million generated pods are a million small metadata dicts, not a million trees
    (nothing in kschedcore writes into a raw object it was given)."""
    params = _pod_params(rng)
    shared = specs.get(params) if specs is not None else None
    if shared is None:
        shared = (_spec(params), {"app": params[0]})
        if specs is not None:
            specs[params] = shared
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{params[0]}-{i:06d}", "namespace": "default", "labels": shared[1]},
            "spec": shared[0]}


def generate(nodes: int = 5000, pods: int = 30000, seed: int = 1) -> Workload:
    """A synthetic Workload: `nodes` nodes and `pods` pending pods of mixed shapes."""
    rng = random.Random(seed)
    with collector.paused():      # millions of new dicts, none in a cycle
        specs: dict = {}
        return Workload(nodes=[_node(i, rng) for i in range(nodes)], pods=[],
                        pending=[_pod(i, rng, specs) for i in range(pods)])
