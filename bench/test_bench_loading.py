"""Reading cluster dumps through `kschedcore.load_workload` (objects/s and MB in extra_info): a
100,000-node `kind: List` of the generated cluster's nodes as block YAML and as JSON, and 20,000
nodes as a managed cloud's `kubectl get nodes -o yaml` lists them (addresses, conditions, 25
images, node info: ~10 KB a node)."""
import json
import re

import pytest

import kschedcore
from kschedcore.sources.generator import generate

NODES = 100_000
FULL_NODES = 20_000


PLAIN = re.compile(r"[A-Za-z][\w./-]*")
YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


def _scalar(v) -> str:
    """A plain scalar where YAML reads it back as that string (as kubectl writes), else quoted."""
    if isinstance(v, str) and PLAIN.fullmatch(v) and v.lower() not in YAML_WORDS:
        return v
    return json.dumps(v)


def _block_yaml(value, indent=0) -> list:
    """Block-style YAML lines, as kubectl writes them."""
    pad = " " * indent
    if isinstance(value, dict):
        lines = []
        for k, v in value.items():
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{pad}{_scalar(k)}:")
                lines += _block_yaml(v, indent + 2)
            else:
                lines.append(f"{pad}{_scalar(k)}: {_scalar(v)}")
        return lines
    lines = []
    for item in value:
        inner = _block_yaml(item, indent + 2) if isinstance(item, (dict, list)) and item else \
            [f"{pad}  {_scalar(item)}"]
        lines.append(f"{pad}- {inner[0].lstrip()}")
        lines += inner[1:]
    return lines


def _full_node(i) -> dict:
    """A node as a managed cloud's API server returns it."""
    name, zone = f"ip-10-0-{i // 250}-{i % 250}.ec2.internal", f"us-east-1{'abc'[i % 3]}"
    labels = {"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": name,
              "node.kubernetes.io/instance-type": "m5.2xlarge", "topology.kubernetes.io/region": "us-east-1",
              "topology.kubernetes.io/zone": zone, "eks.amazonaws.com/nodegroup": "ng-1",
              "eks.amazonaws.com/capacityType": "ON_DEMAND", "topology.ebs.csi.aws.com/zone": zone}
    resources = {"cpu": "7910m", "ephemeral-storage": "95491281146", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                 "memory": "31482140Ki", "pods": "58"}
    conditions = [{"lastHeartbeatTime": "2026-12-01T10:00:00Z", "lastTransitionTime": "2026-11-01T10:00:00Z",
                   "message": f"kubelet reports {kind}", "reason": f"Kubelet{kind}", "status": status, "type": kind}
                  for kind, status in (("MemoryPressure", "False"), ("DiskPressure", "False"),
                                       ("PIDPressure", "False"), ("Ready", "True"))]
    images = [{"names": [f"602401143452.dkr.ecr.us-east-1.amazonaws.com/image-{j}@sha256:{'ab' * 32}",
                         f"602401143452.dkr.ecr.us-east-1.amazonaws.com/image-{j}:v1.{j}.0"],
               "sizeBytes": 10_000_000 + j} for j in range(25)]
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels, "uid": f"{i:08x}-aaaa-bbbb-cccc-dddddddddddd",
                         "resourceVersion": str(1_000_000 + i), "creationTimestamp": "2026-11-01T10:00:00Z",
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                         "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
            "spec": {"providerID": f"aws:///{zone}/i-0{i:016x}"},
            "status": {"addresses": [{"address": f"10.0.{i // 250}.{i % 250}", "type": "InternalIP"},
                                     {"address": name, "type": "Hostname"}],
                       "allocatable": resources, "capacity": dict(resources), "conditions": conditions,
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}, "images": images,
                       "nodeInfo": {"architecture": "amd64", "containerRuntimeVersion": "containerd://1.7.11",
                                    "kernelVersion": "5.10.205", "kubeletVersion": "v1.34.1",
                                    "operatingSystem": "linux", "osImage": "Amazon Linux 2"}}}


@pytest.fixture(scope="module")
def node_dumps(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dumps")
    paths = {}
    for name, nodes in (("yaml", generate(nodes=NODES, pods=0).nodes), ("yaml-full", None)):
        doc = {"apiVersion": "v1", "kind": "List", "items": nodes or [_full_node(i) for i in range(FULL_NODES)]}
        paths[name] = folder / f"{name}.yaml"
        paths[name].write_text("\n".join(_block_yaml(doc)) + "\n")
        if name == "yaml":
            paths["json"] = folder / "nodes.json"
            paths["json"].write_text(json.dumps(doc))
    return paths


@pytest.mark.parametrize("fmt", ["yaml", "json", "yaml-full"])
def test_load_node_dump(benchmark, node_dumps, fmt):
    path = node_dumps[fmt]
    count = FULL_NODES if fmt == "yaml-full" else NODES
    kept = []

    def load():
        kept.append(kschedcore.load_workload(path))

    # the previous round's workload is freed in the setup, outside the timed load
    benchmark.pedantic(load, setup=kept.clear, rounds=3, iterations=1)
    assert len(kept[0].nodes) == count
    benchmark.extra_info["objectsPerSecond"] = round(count / benchmark.stats.stats.median)
    benchmark.extra_info["megabytes"] = round(path.stat().st_size / 2**20, 1)
