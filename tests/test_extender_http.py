"""HTTPExtender against the parity data's deterministic extender server: each verb in both
nodeCacheCapable shapes, the server's injected errors and delays, preemption answers, and the
call log the server writes for kschedcore's requests beside the real scheduler's."""
from __future__ import annotations

import json

import pytest

from extender_servers import PARITY, SERVER, free_port, log_lines, node, parity_server, pod
from kschedcore.extender import ExtenderConfig, ExtenderError, ManagedResource, Victims
from kschedcore.extender.http import HTTPExtender

pytestmark = pytest.mark.skipif(not SERVER.exists(), reason="the parity data's extender_server.py is not here")

SPEC = {
    "nodes": {"n1": {"score": "5"}, "n2": {"score": "m3", "deny": "draining"}, "n3": {"never": "1", "score": "12"},
              "n4": {"score": "7", "team": "blue"}},
    "pods": {"uid-v1": {"pod": "default/v1", "labels": {}}, "uid-v2": {"pod": "default/v2", "labels": {"keep": "1"}},
             "uid-v3": {"pod": "default/v3", "labels": {}},
             "uid-pf": {"pod": "default/pf", "labels": {"fault": "field"}}},
    "extenders": {
        "/ext1": {
            "filter": {"failed": [{"nodeLabel": "deny", "message": "node is {value}"}],
                       "unresolvable": [{"nodeLabel": "never", "message": "node is excluded"}],
                       "podMatch": [{"podLabel": "team", "nodeLabel": "team", "message": "not team {value}"}]},
            "prioritize": {"nodeLabel": "score", "default": 0, "negativePrefix": "m",
                           "bonus": [{"podLabel": "team", "nodeLabel": "team", "score": 3}]},
            "bind": {"errorPods": ["default/unlucky"], "errorMessage": "cannot bind {pod} to {node}"},
            "preempt": {"protectLabel": "keep", "mode": "dropVictims"},
            "faults": [{"verbs": ["filter", "prioritize", "bind", "preempt"], "podLabel": "fault", "value": "500",
                        "action": "http500"},
                       {"verbs": ["filter", "bind"], "podLabel": "fault", "value": "field", "action": "errorField",
                        "message": "extender says no"},
                       {"verbs": ["filter"], "podLabel": "fault", "value": "slow", "action": "sleep", "seconds": 1.0}],
        },
        "/ext2": {"preempt": {"protectLabel": "keep", "mode": "dropNode"}},
    },
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with parity_server(SPEC, tmp_path_factory.mktemp("ext")) as (port, log):
        yield port, log


@pytest.fixture
def nodes():
    return [node(name, labels) for name, labels in SPEC["nodes"].items()]


def ext(port, cache_capable=False, prefix="/ext1", **kw):
    return HTTPExtender(ExtenderConfig(url_prefix=f"http://127.0.0.1:{port}{prefix}", filter_verb="filter",
                                       prioritize_verb="prioritize", bind_verb="bind", preempt_verb="preempt",
                                       weight=2, node_cache_capable=cache_capable, **kw))


def last_call(log, verb):
    return [r for r in log_lines(log) if r.get("verb") == verb][-1]


@pytest.mark.parametrize("cache_capable", [False, True])
def test_filter_answers_both_shapes(server, nodes, cache_capable):
    port, log = server
    e = ext(port, cache_capable)
    r = e.filter(pod("p", {"team": "blue"}), nodes)
    assert r.node_names == ["n4"]
    assert r.failed == {"n1": "not team blue", "n2": "node is draining", "n3": "not team blue"}
    assert r.failed_and_unresolvable == {"n3": "node is excluded"}
    if cache_capable:
        assert r.returned_nodes is None
    else:   # the Node objects it sent came back: the cycle scores new NodeInfos made from them
        assert r.returned_nodes == [nodes[3].raw]
    call = last_call(log, "filter")
    assert call["shape"] == ("NodeNames" if cache_capable else "Nodes")
    assert call["nodes"] == ["n1", "n2", "n3", "n4"]
    assert (call["pod"], call["podUID"], call["extender"]) == ("default/p", "uid-p", "/ext1")


@pytest.mark.parametrize("cache_capable", [False, True])
def test_prioritize_scores_outside_0_to_10_kept(server, nodes, cache_capable):
    port, log = server
    e = ext(port, cache_capable)
    assert e.prioritize(pod("p", {"team": "blue"}), nodes) == [("n1", 5), ("n2", -3), ("n3", 12), ("n4", 10)]
    assert e.weight == 2 and e.is_prioritizer()
    assert last_call(log, "prioritize")["shape"] == ("NodeNames" if cache_capable else "Nodes")


def test_bind_and_its_error_field(server):
    port, log = server
    e = ext(port)
    e.bind(pod("lucky"), "n1")
    assert last_call(log, "bind")["nodes"] == ["n1"] and last_call(log, "bind")["podUID"] == "uid-lucky"
    with pytest.raises(ExtenderError) as err:
        e.bind(pod("unlucky"), "n4")
    assert str(err.value) == "cannot bind default/unlucky to n4"


def test_http_500_is_gos_status_error(server, nodes):
    port, _ = server
    with pytest.raises(ExtenderError) as err:
        ext(port).filter(pod("p", {"fault": "500"}), nodes)
    assert str(err.value) == f"failed filter with extender at URL http://127.0.0.1:{port}/ext1/filter, code 500"


def test_url_joined_as_go_does(server, nodes):
    """strings.TrimRight(urlPrefix, "/") + "/" + verb: trailing slashes of the prefix go."""
    port, _ = server
    with pytest.raises(ExtenderError) as err:
        ext(port, prefix="/ext1//").prioritize(pod("p", {"fault": "500"}), nodes)
    assert str(err.value).endswith(f"URL http://127.0.0.1:{port}/ext1/prioritize, code 500")


def test_error_field_fails_filter_and_bind(server, nodes):
    port, _ = server
    e = ext(port)
    for call in (lambda p: e.filter(p, nodes), lambda p: e.bind(p, "n1")):
        with pytest.raises(ExtenderError, match="^extender says no$"):
            call(pod("pf", {"fault": "field"}))   # bind: labels from the server's pod cache


def test_timeout_while_awaiting_headers(server, nodes):
    """The server sleeps before it answers: net/http's Client.Timeout error, with the URL."""
    port, log = server
    e = ext(port, http_timeout=0.3)
    with pytest.raises(ExtenderError) as err:
        e.filter(pod("p", {"fault": "slow"}), nodes)
    url = f"http://127.0.0.1:{port}/ext1/filter"
    assert str(err.value) == (f'Post "{url}": context deadline exceeded '
                              f"(Client.Timeout exceeded while awaiting headers)")
    assert last_call(log, "filter")["sleep"] == 1.0   # the call reached it


def test_connection_refused():
    port = free_port()
    with pytest.raises(ExtenderError) as err:
        ext(port).filter(pod("p"), [node("n1")])
    assert str(err.value) == (f'Post "http://127.0.0.1:{port}/ext1/filter": '
                              f"dial tcp 127.0.0.1:{port}: connect: connection refused")


def _placed():
    return {"n1": [pod("v1", node_name="n1"), pod("v2", {"keep": "1"}, node_name="n1")],
            "n4": [pod("v3", node_name="n4"), pod("other", node_name="n4")]}


@pytest.mark.parametrize("cache_capable", [False, True])
def test_preemption_victims_sent_and_mapped_back(server, cache_capable):
    port, log = server
    placed = _placed()
    victims = {"n1": Victims(placed["n1"], 1), "n4": Victims(placed["n4"][:1], 0)}
    out = ext(port, cache_capable).process_preemption(pod("hi"), victims, lambda n: placed.get(n))
    assert {n: ([p.name for p in v.pods], v.num_pdb_violations) for n, v in out.items()} == \
        {"n1": (["v1"], 1), "n4": (["v3"], 0)}
    assert out["n1"].pods[0] is placed["n1"][0]
    call = last_call(log, "preempt")
    assert call["shape"] == ("NodeNameToMetaVictims" if cache_capable else "NodeNameToVictims")
    assert call["victims"] == {"n1": ["default/v1", "default/v2"], "n4": ["default/v3"]}
    assert call["numPDBViolations"] == {"n1": 1, "n4": 0}


def test_preemption_drop_node(server):
    port, _ = server
    placed = _placed()
    victims = {"n1": Victims(placed["n1"], 0), "n4": Victims(placed["n4"][:1], 0)}
    out = ext(port, True, prefix="/ext2").process_preemption(pod("hi"), victims, lambda n: placed.get(n))
    assert list(out) == ["n4"]


def test_preemption_uid_not_on_node_is_gos_error(server):
    """convertPodUIDToPod looks among the node's pods: a victim the node no longer has fails."""
    port, _ = server
    placed = _placed()
    victims = {"n1": Victims(placed["n1"][:1], 0)}
    with pytest.raises(ExtenderError) as err:
        ext(port, True).process_preemption(pod("hi"), victims, lambda n: [])
    assert str(err.value) == (f"extender: http://127.0.0.1:{port}/ext1 claims to preempt pod (UID: &{{uid-v1}}) "
                              f"on node: n1, but the pod is not found on that node")
    with pytest.raises(ExtenderError, match='^nodeinfo not found for node name "n1"$'):
        ext(port, True).process_preemption(pod("hi"), victims, lambda n: None)


def test_verbs_not_configured():
    e = HTTPExtender(ExtenderConfig(url_prefix=f"http://127.0.0.1:{free_port()}/x"))
    assert not (e.is_filter() or e.is_prioritizer() or e.is_binder() or e.supports_preemption())
    ns = [node("a"), node("b")]
    assert e.filter(pod("p"), ns).node_names == ["a", "b"]
    assert e.prioritize(pod("p"), ns) == [("a", 0), ("b", 0)]
    with pytest.raises(ExtenderError, match="^unexpected empty bindVerb in extender$"):
        e.bind(pod("p"), "a")
    with pytest.raises(ExtenderError, match="^preempt verb is not defined for extender .*/x but run into"):
        e.process_preemption(pod("p"), {})


def test_is_interested_by_managed_resources():
    cfg = ExtenderConfig(url_prefix="http://127.0.0.1:1/x",
                         managed_resources=(ManagedResource("example.com/gpu"), ManagedResource("example.com/fpga")))
    e = HTTPExtender(cfg)
    assert not e.is_interested(pod("plain"))
    assert e.is_interested(pod("req", requests={"cpu": "1", "example.com/gpu": "1"},
                                limits={"example.com/gpu": "1"}))
    assert e.is_interested(pod("init", init_limits={"example.com/fpga": "1"}))
    assert HTTPExtender(ExtenderConfig(url_prefix="http://127.0.0.1:1/x")).is_interested(pod("plain"))


def test_call_log_has_the_real_schedulers_fields(server, nodes, tmp_path):
    """The server's record of kschedcore's filter and prioritize calls carries what its record
    of the real kube-scheduler's calls (extender_a.calls.jsonl) carries for the same request."""
    port, log = server
    truth = [json.loads(x) for x in (PARITY / "extender_a.calls.jsonl").read_text().splitlines()]
    e = ext(port)
    p = pod("p")
    e.filter(p, nodes)
    e.prioritize(p, nodes[:2])
    for verb in ("filter", "prioritize"):
        ours = last_call(log, verb)
        theirs = next(t for t in truth if t["verb"] == verb and t["shape"] == "Nodes")
        shared = {"pod", "verb", "extender", "shape", "nodes", "status", "response"}
        assert shared <= set(ours) and shared <= set(theirs)
        assert ours["status"] == 200 and ours["shape"] == theirs["shape"]
        if verb == "filter":
            assert set(ours["response"]) == set(theirs["response"])
            assert ours["response"]["Nodes"] == ["n1", "n4"]   # names in the order sent
        else:   # the truth file keeps a prioritize answer as host -> score
            assert {h["Host"]: h["Score"] for h in ours["response"]} == {"n1": 5, "n2": -3}
            assert all(isinstance(v, int) for v in theirs["response"].values())
