"""kschedcore whatif: drains, node removals and additions, scaling -- on a fork of the cluster."""
import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import yaml

from kschedcore import Scheduler
from kschedcore.capacity.whatif import Change, whatif
from kschedcore.cli import main

DATA = Path(__file__).parent / "data" / "capacity" / "clusters"
CLUSTER = DATA / "resources.yaml.gz"


def cli(*argv):
    out = io.StringIO()
    with redirect_stdout(out):
        code = main([str(a) for a in argv])
    return code, out.getvalue()


def test_drain_answers_per_node_and_moves_pods_off_it():
    code, out = cli("whatif", CLUSTER, "--drain", "node-000,node-001", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["changes"] == ["drain node-000", "drain node-001"]
    by_node = {d["node"]: d for d in doc["drain"]}
    assert set(by_node) == {"node-000", "node-001"}
    for d in doc["drain"]:
        assert d["removable"] == all(p["to"] for p in d["pods"])
        assert all(p["to"] not in ("node-000", "node-001") for p in d["pods"] if p["to"])
    assert all(m["to"] not in ("node-000", "node-001") for m in doc["moved"])
    assert all(p["message"].startswith("0/40 nodes are available:") for p in doc["pending"])
    assert doc["fits"] == (not doc["pending"])


def test_whatif_leaves_the_cluster_as_it_was():
    from kschedcore.sources.files import load_workload
    sched = Scheduler.from_workload(load_workload(CLUSTER))
    sched.schedule_pending()
    placed = sorted((pl.pod.key, pl.node) for pl in sched.cache.placements())
    util = sched.utilization()
    doc = whatif(sched, Change(drain=["node-003"], remove_nodes=["node-004"]))
    assert doc["moved"] or doc["pending"]
    assert sorted((pl.pod.key, pl.node) for pl in sched.cache.placements()) == placed
    assert sched.utilization() == util and "node-004" in sched.cache.table.row_of


def test_added_nodes_take_the_removed_nodes_pods(tmp_path):
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "spare", "labels": {}},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "ephemeral-storage": "1Ti", "pods": "110"}}}
    (tmp_path / "node.yaml").write_text(yaml.safe_dump(node))
    code, out = cli("whatif", CLUSTER, "--remove-nodes", "node-005,node-006", "--add-nodes",
                    f"2:{tmp_path / 'node.yaml'}", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["moved"] and doc["fits"]
    assert {m["from"] for m in doc["moved"]} <= {"node-005", "node-006"}


def test_scale_adds_and_removes_a_workloads_pods():
    nodes = [{"metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}}}
             for i in range(2)]
    pods = [{"metadata": {"name": f"web-abc-{i}", "namespace": "shop",
                          "ownerReferences": [{"kind": "ReplicaSet", "name": "web-abc"}]},
             "spec": {"nodeName": f"n{i % 2}", "containers": [{"name": "c", "image": "x",
                                                                 "resources": {"requests": {"cpu": "500m"}}}]}}
            for i in range(2)]
    sched = Scheduler(nodes, pods)
    doc = whatif(sched, Change(scale=[("shop/web", 6)]))
    assert len(doc["added"]) == 4 and [a["node"] is not None for a in doc["added"]].count(True) == 4
    doc = whatif(sched, Change(scale=[("shop/web", 10)]))
    assert [a["node"] for a in doc["added"]].count(None) == 2 and not doc["fits"]
    doc = whatif(sched, Change(scale=[("shop/web", 1)]))
    assert len(doc["removed"]) == 1 and doc["utilizationAfter"]["cpu"] < doc["utilizationBefore"]["cpu"]


def test_bad_whatif_input_is_one_error_line(capsys):
    for argv in (["--drain", "no-such-node"], ["--scale", "web"], ["--add-nodes", "x.yaml"], []):
        code, _ = cli("whatif", CLUSTER, *argv)
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("kschedcore: error: ") and err.count("\n") == 1, (argv, err)
