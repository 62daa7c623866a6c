"""The real kube-scheduler v1.34.1 run end to end on the parity workloads (one attempt per pod,
queue, cache and binding): replaying its decisions, every pod it could not schedule gets the
same full message from kschedcore -- the FitError plus the PostFilter part
(`no new claims to deallocate, preemption: ...`) -- and every node it chose is feasible, with
the best total when all nodes were scored (fewer than 100 nodes)."""
import gzip
import json

import pytest

from kschedcore import Scheduler
from kschedcore.sources.files import workload_from_documents

from parity import DATA, PARITY_WORKLOADS, load


def _trace(name):
    with gzip.open(DATA / f"{name}.realsched.trace.jsonl.gz", "rt") as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize("name", PARITY_WORKLOADS)
def test_real_scheduler_trace(name):
    workload, _ = load(name)
    sched = Scheduler.from_workload(workload_from_documents([workload], name),
                                    percentage_of_nodes_to_score=100, tie_break="first")
    pending, sched.pending = sched.pending, []
    trace = _trace(name)
    assert [p.key for p in pending] == [t["pod"] for t in trace]
    all_scored = len(sched.node_names) < 100
    unschedulable = 0
    for pod, t in zip(pending, trace):
        if pod.node_name:                  # pre-bound: joins its node without a cycle
            sched.add_pod(pod)
            continue
        if not t["node"]:
            result = sched.schedule(pod)
            assert result.node is None and result.fit_error.full_message == t["message"], pod.key
            unschedulable += 1
            continue
        rec = sched.explain(pod)
        feasible = rec["scores"] or {rec["node"]: {"total": 0}}
        assert t["node"] in feasible, pod.key
        if all_scored:
            assert feasible[t["node"]]["total"] == max(s["total"] for s in feasible.values()), pod.key
        sched.assume(pod, t["node"])
    assert unschedulable == sum(1 for t in trace if not t["node"] and "message" in t)


# ---- DefaultPreemption's dry run -------------------------------------------------------------
def _node(name, cpu="2"):
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "10"}}}


def _pod(name, cpu, priority=0, node=None, **spec):
    p = {"metadata": {"name": name}, "spec": {"priority": priority, "containers": [
        {"name": "c", "resources": {"requests": {"cpu": cpu}}}], **spec}}
    if node:
        p["spec"]["nodeName"] = node
    return p


def test_preemption_message_without_victims():
    sched = Scheduler([_node("a"), _node("b")], [_pod("x", "2", node="a"), _pod("y", "2", node="b")])
    err = sched.schedule(_pod("p", "1")).fit_error
    assert err.full_message == ("0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
                                "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.")


def test_preemption_candidates_are_found_not_acted_on():
    sched = Scheduler([_node("a"), _node("b", cpu="1")],
                      [_pod("low", "2", priority=1, node="a"), _pod("mid", "1", priority=5, node="b")])
    prefix = "no new claims to deallocate, preemption: 0/2 nodes are available: "
    # 1 CPU at priority 3: evicting `low` frees a; `mid` outranks the pod, so b has no victims
    result = sched.schedule(_pod("t", "1", priority=3))
    assert result.preemption_candidates == ("a",)
    # RunPostFilterPlugins returns DefaultPreemption's Success status: no PostFilter message
    # (DynamicResources' "no new claims to deallocate" is dropped with it)
    assert result.fit_error.post_filter_message == ""
    assert result.fit_error.full_message == "0/2 nodes are available: 2 Insufficient cpu."
    # priority 10 may evict either
    assert sched.schedule(_pod("v", "1", priority=10)).preemption_candidates == ("a", "b")
    # equal priority is never preempted
    err = sched.schedule(_pod("u", "1", priority=1)).fit_error
    assert err.post_filter_message == prefix + "2 No preemption victims found for incoming pod."
    # 2 CPUs exceed b's allocatable: NodeResourcesFit says UnschedulableAndUnresolvable there,
    # and preemption only looks at Unschedulable nodes
    assert sched.schedule(_pod("w", "2", priority=10)).preemption_candidates == ("a",)
    err = sched.schedule(_pod("x", "3", priority=10)).fit_error
    assert err.post_filter_message == prefix + "2 Preemption is not helpful for scheduling."
    # the dry runs left every pod where it was
    assert sorted(sched.cache.keys_on("a")) == ["default/low"] and sorted(sched.cache.keys_on("b")) == ["default/mid"]
    assert sched.schedule(_pod("u", "1", priority=1)).fit_error.full_message.startswith(
        "0/2 nodes are available: 2 Insufficient cpu.")


def test_preemption_policy_never_and_profiles_without_post_filters():
    sched = Scheduler([_node("a")], [_pod("low", "2", priority=1, node="a")])
    err = sched.schedule(_pod("p", "2", priority=10, preemptionPolicy="Never")).fit_error
    assert err.post_filter_message == "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never."
    from kschedcore import parse_config
    config = parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                           "profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "DynamicResources"}]},
                                                     "postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}}]})
    sched = Scheduler([_node("a")], [_pod("low", "2", node="a")], config=config)
    assert sched.schedule(_pod("p", "1")).fit_error.full_message == "0/1 nodes are available: 1 Insufficient cpu."


@pytest.mark.parametrize("args,message", [
    ({"minCandidateNodesPercentage": 101}, "minCandidateNodesPercentage: Invalid value: 101"),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}, "cannot be zero at the same time"),
])
def test_default_preemption_args(args, message):
    from kschedcore.errors import ValidationError
    with pytest.raises(ValidationError, match=message):
        Scheduler(plugin_args={"DefaultPreemption": args})


def test_simulate_reports_pods_that_preemption_would_place(tmp_path, capsys):
    import json
    from kschedcore.cli import main
    path = tmp_path / "w.yaml"
    path.write_text("""kind: List
items:
- {kind: Node, metadata: {name: a}, status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}}
- {kind: Pod, metadata: {name: low}, spec: {nodeName: a, priority: 1, containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
- {kind: Pod, metadata: {name: high}, spec: {priority: 10, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
""")
    assert main(["simulate", str(path), "-o", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert (rep["scheduled"], rep["preemptionPossible"]) == (0, 1)
    assert main(["simulate", str(path), "--queue", "-o", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert (rep["scheduled"], rep["preemptionPossible"]) == (1, 0)
