"""The README's Python examples for capacity and forks run as written (on small files made here)."""
import os
import re
from pathlib import Path

import pytest
import yaml

from kschedcore import Scheduler

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def block_after(heading: str) -> str:
    section = README.split(heading + "\n", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def node(i):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}", "labels": {}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def pod(name, cpu, node_name=None, owner=None):
    meta = {"name": name, "namespace": "shop"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": owner}]
    spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


@pytest.fixture
def in_tmp(tmp_path):
    old = os.getcwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)


def test_capacity_example(in_tmp):
    docs = [node(i) for i in range(4)] + [pod(f"web-5d8f-{i}", "1", f"node-{i % 4}", "web-5d8f") for i in range(8)]
    (in_tmp / "dump.yaml").write_text(yaml.safe_dump_all(docs))
    for name, cpu in (("pod", "500m"), ("web", "1"), ("db", "2")):
        (in_tmp / f"{name}.yaml").write_text(yaml.safe_dump(pod(name, cpu)))
    scope = {"node_dict": node("new")}
    exec(block_after("### Capacity"), scope)
    assert scope["est"].instances() == 48 and scope["est"].stop_reason.startswith("Unschedulable: 0/4 nodes")
    assert scope["need"].nodes is not None and scope["need"].tried[scope["need"].nodes]


def test_fork_example():
    sched = Scheduler([node(i) for i in range(10)], [pod(f"web-5d8f-{i}", "1", f"node-{7 if i < 3 else i}", "web-5d8f")
                                                   for i in range(6)])
    exec(block_after("### What-if forks"), {"sched": sched})
    web = [pl for pl in sched.cache.placements() if pl.pod.name.startswith("web")]
    assert len(web) == 40          # committed: scaled to 40 and scheduled


def _default_pod(name, gated=False, node_name=None):
    p = pod(name, "500m", node_name)
    p["metadata"]["namespace"] = "default"
    if gated:
        p["spec"]["schedulingGates"] = [{"name": "wait"}]
    return p


def test_python_api_example(in_tmp):
    nodes = [node(i) for i in range(8)]
    (in_tmp / "dump.yaml").write_text(yaml.safe_dump_all(nodes))
    scope = {"nodes": nodes, "bound_pods": [_default_pod("db-0", node_name="node-0")],
             "pod": _default_pod("web-0"), "other_pod": _default_pod("web-2"), "node": node(9),
             "bound_pod": _default_pod("web-1", node_name="node-1")}
    exec("import kschedcore\n" + block_after("## Python API").split("import kschedcore\n", 1)[1], scope)
    assert scope["results"][0].node and scope["sched"].cache.table.row_of.keys() == {f"node-{i}" for i in range(8)}


def test_loop_example():
    import kschedcore
    scope = {"kschedcore": kschedcore, "nodes": [node(i) for i in range(3)], "node": node(3),
             "pod": _default_pod("web-1", gated=True), "ungated_pod": _default_pod("web-1")}
    code = block_after("### The scheduling loop")
    exec(code, scope)
    assert scope["outcomes"] == [] and scope["sim"].pods == {}   # its one pod was deleted
    code = code.replace('sim.delete_pod("default/web-1")', "pass")
    exec(code, scope)
    [outcome] = scope["outcomes"]
    assert outcome.pod == "default/web-1" and outcome.node in {f"node-{i}" for i in range(4)}
