"""`kschedcore extender serve`'s verbs called by kschedcore's own HTTP extender (the calling
side of the protocol): a Scheduler whose score plugins are off and whose extender is the server
places every pod where kschedcore alone places it. The server's cluster is given here rather
than watched (tests/test_live_apiserver.py runs it with informers and a real kube-scheduler)."""
from __future__ import annotations

import json
import urllib.request

import pytest

from kschedcore import Scheduler
from kschedcore.framework.config import parse_config
from kschedcore.live.extender_server import ExtenderServer
from kschedcore.scheduler.loop import Simulation
from kschedcore.sources.files import workload_from_documents


def _node(i):
    cpu, mem = 2 + i % 4, 3 + i % 5
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i:02d}", "labels": {"zone": f"z{i % 3}"}},
            "status": {"allocatable": {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "110"}}}


def _pod(i):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i:02d}", "namespace": "default", "uid": f"u{i}"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {
                "cpu": f"{150 + 97 * i % 900}m", "memory": f"{100 + 61 * i % 1500}Mi"}}}]}}


NODES = [_node(i) for i in range(15)]
PODS = [_pod(i) for i in range(45)]


def _workload(pods):
    return workload_from_documents([{"apiVersion": "v1", "kind": "List", "items": NODES + pods}])


@pytest.fixture
def server():
    cluster = Scheduler.from_workload(_workload([]), tie_break="first", percentage_of_nodes_to_score=100)
    ext = ExtenderServer(None, cluster, kinds=()).start("127.0.0.1:0")
    yield ext
    ext.stop()


def _front(address, cache_capable=True):
    """A kschedcore Scheduler that scores nothing itself and asks the extender."""
    config = parse_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "percentageOfNodesToScore": 100,
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"score": {"disabled": [{"name": "*"}]}}}],
        "extenders": [{"urlPrefix": f"http://{address}", "filterVerb": "filter", "prioritizeVerb": "prioritize",
                       "weight": 1, "nodeCacheCapable": cache_capable}]})
    return Scheduler.from_workload(_workload(PODS), tie_break="first", config=config)


@pytest.mark.parametrize("cache_capable", [True, False])
def test_a_scheduler_with_the_served_profile_places_as_kschedcore(server, cache_capable):
    alone = Simulation(Scheduler.from_workload(_workload(PODS), tie_break="first", percentage_of_nodes_to_score=100))
    expected = {o.pod: o.node for o in alone.run_until_idle()}
    assert sum(n is not None for n in expected.values()) >= 30
    front = Simulation(_front(server.address, cache_capable))
    placed = {o.pod: o.node for o in front.run_until_idle()}
    assert placed == expected
    assert server.calls["filter"] >= len(PODS)
    # each placed pod is assumed where the profile chose it
    assert {k: node for k, (node, _) in server.assumed.items()} == {k: v for k, v in expected.items() if v}


def _post(address, verb, body):
    req = urllib.request.Request(f"http://{address}/{verb}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def test_filter_says_why_a_node_fails(server):
    big = _pod(99)
    big["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "4"
    big["spec"]["nodeSelector"] = {"zone": "z0"}
    names = [n["metadata"]["name"] for n in NODES]
    out = _post(server.address, "filter", {"Pod": big, "NodeNames": names})
    zone0 = [n["metadata"]["name"] for n in NODES if n["metadata"]["labels"]["zone"] == "z0"]
    fits = [n for n in zone0 if int(NODES[int(n[1:])]["status"]["allocatable"]["cpu"]) >= 4]
    assert out["NodeNames"] == fits
    # more cpu than a node has at all cannot be helped by preemption: unresolvable, as the selector
    assert out["FailedAndUnresolvableNodes"] == {
        **{n: "node(s) didn't match Pod's node affinity/selector" for n in names if n not in zone0},
        **{n: "Insufficient cpu" for n in zone0 if n not in fits}}
    assert out["FailedNodes"] == {}
    assert out["Error"] == "" and out["Nodes"] is None
    scores = _post(server.address, "prioritize", {"Pod": big, "NodeNames": fits})
    assert sorted(s["Score"] for s in scores) == [0] * (len(fits) - 1) + [10]


def test_scaled_priorities_follow_the_total_scores():
    cluster = Scheduler.from_workload(_workload([]), tie_break="first", percentage_of_nodes_to_score=100)
    ext = ExtenderServer(None, cluster, kinds=(), priorities="scaled").start("127.0.0.1:0")
    try:
        names = [n["metadata"]["name"] for n in NODES]
        rec = cluster.explain(cluster.parse_pod(_pod(1)))
        scores = {s["Host"]: s["Score"] for s in _post(ext.address, "prioritize", {"Pod": _pod(1), "NodeNames": names})}
    finally:
        ext.stop()
    best = max(r["total"] for r in rec["scores"].values())
    assert scores == {n: 10 * rec["scores"][n]["total"] // best for n in names}


ZONE_PLUGIN = '''
from kschedcore.custom import NativeFilter


def zone_allowed(row, node, pod, params):     # compiled with Numba
    zone = node.labels[row, params[0]]
    for i in range(1, params.shape[0]):
        if zone == params[i]:
            return 0
    return 2


PLUGINS = [NativeFilter("ZoneAllowed", zone_allowed, labels=["zone"], values=["z1"],
                        reason="node(s) are in a zone not allowed")]
'''


def test_custom_plugins_from_a_module_answer_the_filter(tmp_path, monkeypatch):
    pytest.importorskip("numba")
    from kschedcore.live.commands import custom_plugins
    (tmp_path / "zone_plugins.py").write_text(ZONE_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins = custom_plugins(["zone_plugins"])
    cluster = Scheduler.from_workload(_workload([]), tie_break="first", percentage_of_nodes_to_score=100,
                                      plugins=plugins)
    ext = ExtenderServer(None, cluster, kinds=()).start("127.0.0.1:0")
    try:
        names = [n["metadata"]["name"] for n in NODES]
        out = _post(ext.address, "filter", {"Pod": _pod(3), "NodeNames": names})
    finally:
        ext.stop()
    zone1 = [n["metadata"]["name"] for n in NODES if n["metadata"]["labels"]["zone"] == "z1"]
    assert out["NodeNames"] == zone1
    assert out["FailedAndUnresolvableNodes"] == {n: "node(s) are in a zone not allowed"
                                                 for n in names if n not in zone1}


def test_a_plugins_module_without_plugins_is_refused(tmp_path, monkeypatch):
    from kschedcore.errors import ValidationError
    from kschedcore.live.commands import custom_plugins
    (tmp_path / "empty_plugins.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValidationError, match="module empty_plugins has no PLUGINS list"):
        custom_plugins(["empty_plugins"])
    with pytest.raises(ValidationError, match="cannot import no_such_module_here"):
        custom_plugins(["no_such_module_here"])
