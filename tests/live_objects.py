"""Objects the live-cluster tests create through the API server."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", labels: dict | None = None) -> dict:
    res = {"cpu": cpu, "memory": memory, "pods": pods}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "status": {"capacity": res, "allocatable": res, "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name: str, cpu: str = "100m", memory: str = "64Mi", ns: str = "default", node_name: str | None = None,
        labels: dict | None = None, priority: int | None = None, scheduler: str | None = None) -> dict:
    spec: dict = {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                  "resources": {"requests": {"cpu": cpu, "memory": memory}}}]}
    if node_name:
        spec["nodeName"] = node_name
    if priority is not None:
        spec["priority"] = priority
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": spec}


def create_nodes(client, nodes) -> None:
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda n: client.request("POST", "/api/v1/nodes", body=n), nodes))


def create_pods(client, pods) -> None:
    def one(p):
        ns = p["metadata"]["namespace"]
        client.request("POST", f"/api/v1/namespaces/{ns}/pods", body=p)
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(one, pods))


def pods_by_name(client, ns: str = "default") -> dict:
    """The namespace's pods by name (listed through the namespace's path: this API server's
    second page of a cluster-wide list with a metadata.namespace field selector comes back empty)."""
    out, query = {}, {"limit": 500}
    while True:
        doc = client.get(f"/api/v1/namespaces/{ns}/pods", query)
        out.update((p["metadata"]["name"], p) for p in doc["items"])
        token = doc["metadata"].get("continue")
        if not token:
            return out
        query = {"limit": 500, "continue": token}


def condition(obj: dict, kind: str = "PodScheduled") -> dict | None:
    for c in (obj.get("status") or {}).get("conditions") or ():
        if c.get("type") == kind:
            return c
    return None
