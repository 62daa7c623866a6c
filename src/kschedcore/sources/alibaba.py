"""The Alibaba GPU cluster trace 2023 (alibaba/clusterdata, cluster-trace-gpu-v2023: the ATC'23
"Beware of Fragmentation" paper's) as nodes and timed pods.

openb_node_list_*.csv (sn, cpu_milli, memory_mib, gpu, model) -> Nodes: allocatable cpu,
memory, `nvidia.com/gpu` and 110 pods (the kubelet default); labels kubernetes.io/hostname and,
on GPU nodes, `alibaba.com/gpu-model`.
openb_pod_list_*.csv (name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos,
pod_phase, creation_time, deletion_time, scheduled_time; the multigpu lists have only the first
five) -> Pods arriving at creation_time (in file order without it) and deleted at deletion_time
(seconds from the trace's start, as metadata timestamps from 2023-01-01T00:00:00Z): requests cpu, memory and `nvidia.com/gpu: num_gpu` (whole GPUs);
gpu_spec ("V100M16|V100M32") as required node affinity on `alibaba.com/gpu-model`.

Left out: fractional GPU sharing (gpu_milli of a one-GPU pod is kept only as the annotation
`alibaba.com/gpu-milli`: a one-GPU pod asks for a whole GPU; sharing needs a custom plugin), qos
(no priority or preemption), pod_phase and scheduled_time (what the original scheduler did).
"""
import csv
import io
from datetime import datetime, timedelta, timezone
from typing import Any

from ..errors import WorkloadError
from .files import Workload, read_text

GPU = "nvidia.com/gpu"
MODEL_LABEL = "alibaba.com/gpu-model"
EPOCH = datetime(2023, 1, 1, tzinfo=timezone.utc)
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
#: the columns every pod list has (the multigpu lists have only these: no times, no GPU models)
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
MAX_PODS = "110"


def is_alibaba_csv(path) -> bool:
    return str(path).endswith((".csv", ".csv.gz"))


def load_alibaba(*paths) -> Workload:
    """Node-list and pod-list CSV files (told apart by their header) into one Workload: the
    nodes, and every pod as pending with creation and deletion timestamps, by creation time."""
    w = Workload()
    for path in paths:
        rows, header = _rows(path)
        if set(NODE_COLUMNS) <= set(header):
            w.nodes += [_node(row, f"{path}: line {i + 2}") for i, row in enumerate(rows)]
        elif set(POD_COLUMNS) <= set(header):
            pods = [_pod(row, f"{path}: line {i + 2}") for i, row in enumerate(rows)]
            w.pending += sorted(pods, key=lambda p: p["metadata"].get("creationTimestamp", ""))   # stable
        else:
            raise WorkloadError(str(path), "header", "neither an openb node list (" + ", ".join(NODE_COLUMNS)
                                + ") nor an openb pod list (" + ", ".join(POD_COLUMNS) + ")")
    return w


def _rows(path):
    from pathlib import Path
    text = read_text(Path(path))
    reader = csv.DictReader(io.StringIO(text))
    return list(reader), reader.fieldnames or []


def _int(row, column, where, minimum=0) -> int:
    text = (row.get(column) or "").strip()
    try:
        value = int(float(text))
    except ValueError:
        raise WorkloadError(where, column, f"expected a number, got {text!r}") from None
    if value < minimum:
        raise WorkloadError(where, column, f"must be at least {minimum}, got {value}")
    return value


def _node(row, where) -> dict:
    name = (row.get("sn") or "").strip()
    if not name:
        raise WorkloadError(where, "sn", "missing")
    alloc = {"cpu": f"{_int(row, 'cpu_milli', where)}m", "memory": f"{_int(row, 'memory_mib', where)}Mi",
             "pods": MAX_PODS}
    labels = {"kubernetes.io/hostname": name}
    gpus = _int(row, "gpu", where)
    if gpus:
        alloc[GPU] = str(gpus)
        model = (row.get("model") or "").strip()
        if model and model != "nan":
            labels[MODEL_LABEL] = model
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"allocatable": alloc, "capacity": dict(alloc)}}


def _stamp(seconds: int) -> str:
    return (EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod(row, where) -> dict:
    name = (row.get("name") or "").strip()
    if not name:
        raise WorkloadError(where, "name", "missing")
    created = _int(row, "creation_time", where) if "creation_time" in row else None
    deleted = _int(row, "deletion_time", where) if (row.get("deletion_time") or "").strip() else None
    if deleted is not None and created is not None and deleted < created:
        raise WorkloadError(where, "deletion_time", f"{deleted} is before creation_time {created}")
    requests = {"cpu": f"{_int(row, 'cpu_milli', where)}m", "memory": f"{_int(row, 'memory_mib', where)}Mi"}
    gpus = _int(row, "num_gpu", where)
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if created is not None:
        meta["creationTimestamp"] = _stamp(created)
    if deleted is not None:
        meta["deletionTimestamp"] = _stamp(deleted)
    spec: dict[str, Any] = {"schedulerName": "default-scheduler",
            "containers": [{"name": "main", "image": "trace", "resources": {"requests": requests}}]}
    if gpus:
        requests[GPU] = str(gpus)
        spec["containers"][0]["resources"]["limits"] = {GPU: str(gpus)}   # the API server wants both
        meta["annotations"] = {"alibaba.com/gpu-milli": str(_int(row, "gpu_milli", where))}
    models = [m for m in (row.get("gpu_spec") or "").strip().split("|") if m and m != "nan"]
    if models:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": MODEL_LABEL, "operator": "In", "values": models}]}]}}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
