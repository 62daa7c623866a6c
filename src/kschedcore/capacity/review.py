"""cluster-capacity's report (pkg/framework/report.go): the ClusterCapacityReview document and
its three printings -- plain, `--verbose`, `-o json|yaml` -- field for field and line for line.
"""
from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any
from datetime import datetime, timezone

import yaml

from ..objects.quantity import DECIMAL_SI, BINARY_SI, Quantity, parse_quantity
from ..objects.resources import is_scalar
from .manifest import go_pod
from .pending import pending_lines

if TYPE_CHECKING:
    from .estimate import Estimate

#: report.go's ResourceNvidiaGPU, misspelt upstream; kept, since parsers of the report read it
NVIDIA_GPU_KEY = "nvdia.com/gpu"


def _go_add(q: Quantity, y: Quantity) -> Quantity:
    """resource.Quantity.Add: the receiver keeps its format unless it is zero."""
    return Quantity(q.nanos + y.nanos, y.format if q.nanos == 0 else q.format)


def resource_requirements(pod: dict) -> dict:
    """getResourceRequest: the app containers' requests summed (init containers and overhead
    are not), cpu and memory as quantities, other scalar resources as rounded-up integers."""
    cpu, mem = Quantity(0, DECIMAL_SI), Quantity(0, BINARY_SI)
    scalar: dict[str, int] | None = None
    for c in (pod.get("spec") or {}).get("containers") or []:
        for name, text in ((c.get("resources") or {}).get("requests") or {}).items():
            q = parse_quantity(text)
            if name == "memory":
                mem = _go_add(q, mem)
            elif name == "cpu":
                cpu = _go_add(q, cpu)
            elif is_scalar(name):
                scalar = scalar or {}
                scalar[name] = scalar.get(name, 0) + q.value()
    return {"primaryResources": {"cpu": str(cpu), "memory": str(mem), NVIDIA_GPU_KEY: "0"},
            "scalarResources": scalar}


def _go_time_now() -> str:
    """time.Now() as encoding/json writes it (RFC 3339, nanoseconds without trailing zeros)."""
    ns = time.time_ns()
    local = datetime.fromtimestamp(ns // 10**9, timezone.utc).astimezone()
    frac = f"{ns % 10**9:09d}".rstrip("0")
    off = local.strftime("%z")
    zone = "Z" if off in ("+0000", "") else f"{off[:3]}:{off[3:]}"
    return local.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + zone


def review(est: Estimate, max_limit: int) -> dict:
    """The ClusterCapacityReview of a run (GetReport + Report()), counting copies only; where
    the cluster had pending pods, `status.clusterPendingPods` (kschedcore's) says where they went."""
    templates = [t.pod for t in est.templates]
    pods = [{"podName": t["metadata"]["name"], "replicasOnNodes": [], "failSummary": None} for t in templates]
    index: list[dict] = [{} for _ in templates]
    for b in est.bound:     # copies are made template after template, in turn (parsePodsReview)
        j = b.template
        ron = index[j].get(b.node)
        if ron is None:
            ron = index[j][b.node] = {"nodeName": b.node, "replicas": 0}
            pods[j]["replicasOnNodes"].append(ron)
        ron["replicas"] += 1
    first_line = est.stop_reason.split("\n")[0]
    colon = first_line.index(":")
    doc = {
        "spec": {
            "templates": [go_pod(t) for t in templates],
            "replicas": max_limit,
            "podRequirements": [{"podName": t["metadata"]["name"], "resources": resource_requirements(t),
                                 "nodeSelectors": (t.get("spec") or {}).get("nodeSelector")} for t in templates],
        },
        "status": {
            "creationTimestamp": _go_time_now(),
            "replicas": len(est.bound),
            "failReason": {"failType": first_line[:colon], "failMessage": first_line[colon + 1:].strip(" ")},
            "pods": pods,
        },
    }
    if est.cluster.total:
        doc["status"]["clusterPendingPods"] = est.cluster.as_dict()
    return doc


def _go_map(d: dict) -> str:
    """fmt's %v of a map: map[k1:v1 k2:v2], keys sorted."""
    return "map[" + " ".join(f"{k}:{d[k]}" for k in sorted(d)) + "]"


def _selector(d: dict) -> str:
    """labels.SelectorFromSet(set).String(): k=v pairs sorted by key."""
    return ",".join(f"{k}={d[k]}" for k in sorted(d))


def plain(doc: dict, verbose: bool) -> str:
    """clusterCapacityReviewPrettyPrint."""
    out = []
    spec, status = doc["spec"], doc["status"]
    if verbose:
        for req in spec["podRequirements"]:
            res = req["resources"]
            out.append(f"{req['podName']} pod requirements:\n")
            out.append(f"\t- CPU: {res['primaryResources']['cpu']}\n")
            out.append(f"\t- Memory: {res['primaryResources']['memory']}\n")
            if res["scalarResources"] is not None:
                out.append(f"\t- ScalarResources: {_go_map(res['scalarResources'])}\n")
            if req["nodeSelectors"] is not None:
                out.append(f"\t- NodeSelector: {_selector(req['nodeSelectors'])}\n")
            out.append("\n")
    for pod in status["pods"]:
        n = sum(r["replicas"] for r in pod["replicasOnNodes"])
        out.append(f"The cluster can schedule {n} instance(s) of the pod {pod['podName']}.\n" if verbose else f"{n}\n")
    if verbose:
        fail = status["failReason"]
        out.append(f"\nTermination reason: {fail['failType']}: {fail['failMessage']}\n")
        if "clusterPendingPods" in status:
            out.append("\n" + "".join(line + "\n" for line in pending_lines(status["clusterPendingPods"])))
    if verbose and status["replicas"] > 0:
        out.append("\nPod distribution among nodes:\n")
        for pod in status["pods"]:
            out.append(f"{pod['podName']}\n")
            for ron in pod["replicasOnNodes"]:
                out.append(f"\t- {ron['nodeName']}: {ron['replicas']} instance(s)\n")
    return "".join(out)


def go_json(doc: Any) -> str:
    """encoding/json.Marshal: compact, with <, > and & escaped as \\u003c, \\u003e, \\u0026."""
    text = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


class _GoYamlDumper(yaml.SafeDumper):
    """go-yaml v2's choices where PyYAML's differ: a string that would read back as another type
    ("0", "true", "1.5") is double-quoted, not single-quoted."""


def _go_str(dumper: Any, value: str) -> yaml.Node:
    resolved = dumper.resolve(yaml.ScalarNode, value, (True, False))
    style = '"' if resolved != "tag:yaml.org,2002:str" else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_GoYamlDumper.add_representer(str, _go_str)


def go_yaml(doc: Any) -> str:
    """sigs.k8s.io/yaml.Marshal: the JSON document as YAML (go-yaml v2), keys sorted, lines
    folded at 80 columns."""
    return yaml.dump(json.loads(json.dumps(doc)), Dumper=_GoYamlDumper, default_flow_style=False,
                     sort_keys=True, allow_unicode=True)


def pending_note(doc: dict, verbose: bool, fmt: str) -> str:
    """What the plain printing leaves to stderr: its standard output stays one count per
    template, so the cluster's pending pods are told there (the other printings hold them)."""
    pending = doc["status"].get("clusterPendingPods")
    if pending is None or verbose or fmt in ("json", "yaml"):
        return ""
    return "".join(line + "\n" for line in pending_lines(pending))


def render(doc: dict, verbose: bool, fmt: str) -> str:
    """ClusterCapacityReviewPrint."""
    if fmt == "json":
        return go_json(doc) + "\n"
    if fmt == "yaml":
        return go_yaml(doc)
    return plain(doc, verbose)
