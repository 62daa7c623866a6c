"""Benchmark workloads: kube-scheduler's SchedulingBasic shape at several cluster sizes.

500 and 5,000 nodes are the parity files kube-scheduler v1.34.1 was measured on
(data/bench_results.json); 15,000 nodes is generated in the same shape.
"""
import copy
import gzip
import json
from functools import lru_cache
from pathlib import Path

from kschedcore.sources.files import Workload, workload_from_documents

DATA = Path(__file__).parent / "data"


@lru_cache(maxsize=None)
def parity_bench(name: str) -> Workload:
    """A benchmark workload kube-scheduler v1.34.1 was measured on (data/bench_results.json)."""
    with gzip.open(DATA / f"{name}.json.gz", "rt") as f:
        return workload_from_documents([json.load(f)], name)


@lru_cache(maxsize=None)
def basic(nodes: int) -> Workload:
    if nodes in (500, 5000):
        return parity_bench(f"bench_basic_{nodes}")
    # same node and pod shapes as bench_basic_5000, scaled: 2 pending pods per node
    template = basic(5000)
    node, pod = template.nodes[0], template.pending[0]
    w = Workload()
    for i in range(nodes):
        n = copy.deepcopy(node)
        n["metadata"]["name"] = n["metadata"]["labels"]["kubernetes.io/hostname"] = f"node-{i:05d}"
        w.nodes.append(n)
    for i in range(2 * nodes):
        p = copy.deepcopy(pod)
        p["metadata"]["name"] = f"pod-{i:05d}"
        p["metadata"]["uid"] = f"uid-pod-{i:05d}"
        w.pending.append(p)
    return w


def kube_scheduler_pods_per_second():
    """kube-scheduler v1.34.1's measured medians on this kind of machine, by (workload, pct)."""
    results = json.loads((DATA / "bench_results.json").read_text())
    return {(b["workload"], b["percentageOfNodesToScore"]): b["median"] for b in results["bench"]
            if b.get("parallelism") == 2}


@lru_cache(maxsize=None)
def volumes(nodes: int = 5000, pods: int = 2000) -> Workload:
    """Cloud-style persistent volumes: bench_basic's nodes in three zones with a CSI volume limit;
    half the pods use an already bound zonal PV (VolumeZone, VolumeBinding's PV node affinity,
    NodeVolumeLimits), half a WaitForFirstConsumer claim provisioned in allowed zones."""
    template = basic(5000)
    driver, zones = "ebs.csi.aws.com", ("zone-a", "zone-b", "zone-c")
    w = Workload()
    docs = [{"kind": "StorageClass", "metadata": {"name": "gp3"}, "provisioner": driver,
             "volumeBindingMode": "WaitForFirstConsumer",
             "allowedTopologies": [{"matchLabelExpressions": [
                 {"key": "topology.kubernetes.io/zone", "values": list(zones[:2])}]}]}]
    for i in range(nodes):
        n = copy.deepcopy(template.nodes[i % len(template.nodes)])
        name = f"node-{i:05d}"
        n["metadata"]["name"] = name
        n["metadata"]["labels"].update({"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zones[i % 3]})
        w.nodes.append(n)
        docs.append({"kind": "CSINode", "metadata": {"name": name},
                     "spec": {"drivers": [{"name": driver, "nodeID": name, "allocatable": {"count": 25}}]}})
    for i in range(pods):
        p = copy.deepcopy(template.pending[i % len(template.pending)])
        p["metadata"].update(name=f"pod-{i:05d}", uid=f"uid-pod-{i:05d}")
        claim = f"data-{i:05d}"
        p["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
        w.pending.append(p)
        pvc = {"kind": "PersistentVolumeClaim", "metadata": {"name": claim, "namespace": p["metadata"].get("namespace", "default")},
               "spec": {"storageClassName": "gp3", "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "10Gi"}}}}
        if i % 2 == 0:     # bound to a zonal PV
            zone = zones[i % 3]
            pv = f"pv-{i:05d}"
            pvc["spec"]["volumeName"] = pv
            pvc["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
            docs.append({"kind": "PersistentVolume", "metadata": {"name": pv, "labels": {"topology.kubernetes.io/zone": zone}},
                         "spec": {"storageClassName": "gp3", "capacity": {"storage": "10Gi"},
                                  "accessModes": ["ReadWriteOnce"], "csi": {"driver": driver, "volumeHandle": f"vol-{i}"},
                                  "claimRef": {"namespace": pvc["metadata"]["namespace"], "name": claim},
                                  "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                                      {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}}}})
        docs.append(pvc)
    w.extend(workload_from_documents(docs, "volumes"))
    return w


def _zoned_nodes(nodes: int, zones: int = 3) -> list:
    """bench_basic's node shape with hostname and zone labels."""
    template = basic(5000).nodes[0]
    out = []
    for i in range(nodes):
        n = copy.deepcopy(template)
        name = f"node-{i:05d}"
        n["metadata"].update(name=name, uid=f"node-{name}")
        n["metadata"]["labels"].update({"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"zone-{i % zones}"})
        out.append(n)
    return out


def _pod(i: int, namespace="default", labels=None, affinity=None) -> dict:
    p = copy.deepcopy(basic(5000).pending[0])
    p["metadata"].update(name=f"pod-{i:05d}", namespace=namespace, uid=f"uid-{namespace}-pod-{i:05d}",
                         labels=dict(labels or {}))
    if affinity:
        p["spec"]["affinity"] = affinity
    return p


@lru_cache(maxsize=None)
def affinity(kind: str, nodes: int = 5000, pods: int = 2000) -> Workload:
    """scheduler_perf-like affinity workloads on `nodes` zoned nodes:

    - preferred-pod-affinity: every pod prefers (weight 1) nodes of its zone holding a pod of
      its color; also each pod is one of them (SchedulingPreferredPodAffinity);
    - preferred-pod-anti-affinity: the same with anti-affinity on hostname;
    - node-affinity: pods require zone-0 or zone-1 and prefer zone-1 (SchedulingNodeAffinity);
    - namespace-selector: pods in 10 namespaces labelled team=a repel pods of every team=a
      namespace on their hostname, selected by namespaceSelector
      (SchedulingRequiredPodAntiAffinityWithNSSelector).
    """
    w = Workload(nodes=_zoned_nodes(nodes))
    selector = {"matchLabels": {"color": "blue"}}
    for i in range(pods):
        if kind == "preferred-pod-affinity":
            term = {"weight": 1, "podAffinityTerm": {"labelSelector": selector,
                                                      "topologyKey": "topology.kubernetes.io/zone"}}
            w.pending.append(_pod(i, labels={"color": "blue"}, affinity={
                "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}))
        elif kind == "preferred-pod-anti-affinity":
            term = {"weight": 1, "podAffinityTerm": {"labelSelector": selector,
                                                      "topologyKey": "kubernetes.io/hostname"}}
            w.pending.append(_pod(i, labels={"color": "blue"}, affinity={
                "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}))
        elif kind == "node-affinity":
            expr = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-0", "zone-1"]}
            w.pending.append(_pod(i, affinity={"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [expr]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": {"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-1"]}]}}]}}))
        elif kind == "namespace-selector":
            term = {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname",
                    "namespaceSelector": {"matchLabels": {"team": "a"}}}
            w.pending.append(_pod(i, namespace=f"ns-{i % 10}", labels={"color": "blue"}, affinity={
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}))
        else:
            raise ValueError(kind)
    if kind == "namespace-selector":
        w.objects["Namespace"] = [{"kind": "Namespace", "metadata": {"name": f"ns-{k}", "labels": {"team": "a"}}}
                                  for k in range(10)]
    return w


@lru_cache(maxsize=None)
def preemption(nodes: int = 1000, pods: int = 500) -> Workload:
    """PreemptionBasic-like: every node full of low-priority pods (4 of 1 CPU on 4-CPU nodes),
    then high-priority pods of 1 CPU that can only run by preempting one of them."""
    w = Workload(nodes=_zoned_nodes(nodes))
    for n in w.nodes:
        n["status"]["allocatable"]["cpu"] = n["status"]["capacity"]["cpu"] = "4"
    k = 0
    for n in w.nodes:
        for _ in range(4):
            p = _pod(k)
            p["metadata"]["name"] = f"low-{k:06d}"
            p["spec"].update(nodeName=n["metadata"]["name"], priority=1)
            p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1"
            w.pods.append(p)
            k += 1
    for i in range(pods):
        p = _pod(i)
        p["metadata"]["name"] = f"high-{i:05d}"
        p["spec"]["priority"] = 100
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1"
        w.pending.append(p)
    return w


def dra_gpus(nodes: int, per_node: int) -> Workload:
    """`nodes` nodes (32 CPUs) with `per_node` devices each in a node-local ResourceSlice of
    gpu.example.com, the DeviceClass "gpu" and the ResourceClaimTemplate "one-gpu" (default
    namespace) asking one of them."""
    driver = "gpu.example.com"
    names = [f"node-{i:05d}" for i in range(nodes)]
    slices = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{n}-gpus"},
               "spec": {"driver": driver, "nodeName": n, "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                        "devices": [{"name": f"gpu-{k}"} for k in range(per_node)]}} for n in names]
    device_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-gpu", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}
    node_objs = [{"metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
                  "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}} for n in names]
    return Workload(nodes=node_objs, objects={"DeviceClass": [device_class], "ResourceSlice": slices,
                                              "ResourceClaimTemplate": [template]})
