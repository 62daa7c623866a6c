"""The plain-Python reference (kschedcore.reference) against kube-scheduler v1.34.1.

The parity data (tests/data/parity, copied from /work/shared/parity) is what the real
kube-scheduler decided: one explain record per pending pod, with percentageOfNodesToScore
100 and ties broken by the first node in node-list order.

* ``test_exact``: node-local workloads, run end to end with ``explain_workload``; every record
  must match field by field.
* ``test_follow``: workloads that also use the cross-pod plugins (which the reference does not
  implement).  The reference follows the real scheduler's choices (each pod is assumed onto
  the node kube-scheduler chose) and only the node-local parts are compared: the whole Filter
  outcome when kube-scheduler skipped every cross-pod Filter for that pod, the node-local
  plugins' scores always, and totals / choice when every cross-pod Score was skipped too.
"""
from __future__ import annotations

import gzip
import importlib
import importlib.util
import json
import sys
import types
from pathlib import Path

import pytest


def _import_reference():
    """kschedcore.reference is pure Python.  If the package's __init__ cannot be imported
    because the compiled kernels are not built, load the package as a bare namespace so that
    the reference can still be tested."""
    try:
        return importlib.import_module("kschedcore.reference")
    except ImportError as exc:
        if "_kernels" not in str(exc):
            raise
    spec = importlib.util.find_spec("kschedcore")
    pkg = types.ModuleType("kschedcore")
    pkg.__path__ = list(spec.submodule_search_locations)
    sys.modules["kschedcore"] = pkg
    return importlib.import_module("kschedcore.reference")


_reference = _import_reference()
ReferenceScheduler = _reference.ReferenceScheduler
explain_workload = _reference.explain_workload

DATA = Path(__file__).parent / "data" / "parity"

EXACT_WORKLOADS = ["resources", "taints", "node_affinity", "host_ports"]
FOLLOW_WORKLOADS = ["images_default_spread", "mixed_small", "interpod_affinity", "topology_spread"]

COMPARED_FIELDS = ["node", "numFeasible", "filter", "scores", "fitError", "preFilterStatus",
                   "skippedFilterPlugins", "skippedScorePlugins", "preFilterNodeNames", "preBound"]

CROSS_POD_FILTER = {"InterPodAffinity", "PodTopologySpread", "VolumeRestrictions", "NodeVolumeLimits",
                    "VolumeBinding", "VolumeZone", "DynamicResources"}
CROSS_POD_SCORE = {"InterPodAffinity", "PodTopologySpread", "VolumeBinding"}
NODE_LOCAL_SCORE = ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "NodeResourcesBalancedAllocation",
                    "ImageLocality"]


def load_workload(name: str) -> dict:
    plain = DATA / f"{name}.json"
    if plain.exists():
        with open(plain) as f:
            return json.load(f)
    with gzip.open(DATA / f"{name}.json.gz", "rt") as f:
        return json.load(f)


def load_explain(name: str) -> list[dict]:
    with gzip.open(DATA / f"{name}.explain.jsonl.gz", "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def describe_diff(got, want) -> str:
    """A short description of where two JSON values differ."""
    if isinstance(got, dict) and isinstance(want, dict):
        for key in sorted(set(got) | set(want), key=str):
            if key not in got:
                return f"[{key!r}] missing, want {json.dumps(want[key], sort_keys=True)[:300]}"
            if key not in want:
                return f"[{key!r}] unexpected: {json.dumps(got[key], sort_keys=True)[:300]}"
            if got[key] != want[key]:
                return f"[{key!r}]" + describe_diff(got[key], want[key])
        return ""
    return f": got {json.dumps(got, sort_keys=True)[:300]}, want {json.dumps(want, sort_keys=True)[:300]}"


def assert_field(workload: str, pod: str, field: str, got, want) -> None:
    if got != want:
        pytest.fail(f"{workload}: pod {pod}: field {field!r} differs{describe_diff(got, want)}", pytrace=False)


@pytest.mark.parametrize("workload", EXACT_WORKLOADS)
def test_exact(workload):
    data = load_workload(workload)
    expected = load_explain(workload)
    got = explain_workload(data["nodes"], data["pods"], data["pending"],
                           percentage_of_nodes_to_score=100, tie_break="first")
    assert len(got) == len(expected), f"{workload}: {len(got)} records, want {len(expected)}"
    for mine, want in zip(got, expected):
        assert_field(workload, want["pod"], "pod", mine["pod"], want["pod"])
        for field in COMPARED_FIELDS:
            assert_field(workload, want["pod"], field, mine.get(field), want.get(field))


@pytest.mark.parametrize("workload", FOLLOW_WORKLOADS)
def test_follow(workload):
    data = load_workload(workload)
    expected = load_explain(workload)
    sched = ReferenceScheduler(data["nodes"], data["pods"], percentage_of_nodes_to_score=100, tie_break="first")
    compared_filter = compared_total = 0
    for pod, want in zip(data["pending"], expected):
        name = want["pod"]
        mine = sched.explain(pod)
        assert_field(workload, name, "pod", mine["pod"], name)

        filter_local = CROSS_POD_FILTER <= set(want.get("skippedFilterPlugins") or ()) or "preFilterStatus" in want
        if filter_local:
            compared_filter += 1
            for field in ("numFeasible", "filter", "fitError", "preFilterStatus", "preFilterNodeNames"):
                assert_field(workload, name, field, mine.get(field), want.get(field))

        if want["scores"] and mine["scores"]:
            # Node-local plugin scores on the nodes both consider feasible.
            for node in sorted(set(want["scores"]) & set(mine["scores"])):
                for plugin in NODE_LOCAL_SCORE:
                    for key in (plugin, "raw:" + plugin):
                        assert_field(workload, name, f"scores[{node}][{key}]",
                                     mine["scores"][node].get(key), want["scores"][node].get(key))
            score_local = CROSS_POD_SCORE <= set(want.get("skippedScorePlugins") or ())
            if filter_local and score_local:
                compared_total += 1
                assert_field(workload, name, "scores", mine["scores"], want["scores"])
                assert_field(workload, name, "node", mine["node"], want["node"])

        # Follow kube-scheduler: each pod joins the node it chose (a pre-bound pod its own node
        # when it passed the filters there, as ReferenceScheduler.schedule does).
        if want["node"] is not None:
            sched.assume(pod, want["node"])
    assert compared_filter > 0 or workload in ("interpod_affinity", "topology_spread")


def test_tie_break_first_is_input_order():
    """Two identical nodes: the first in the *input* list wins, whatever the node-tree order."""
    def node(name, zone):
        return {"metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
                "spec": {}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    nodes = [node("b", "z1"), node("c", "z1"), node("a", "z2")]
    pod = {"metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
    (rec,) = explain_workload(nodes, [], [pod])
    assert rec["numFeasible"] == 3
    assert rec["node"] == "b"


def test_go_arithmetic():
    from kschedcore.reference.goarith import go_div, go_parse_int64, go_round
    assert go_div(-7, 2) == -3 and go_div(7, -2) == -3 and go_div(7, 2) == 3
    assert go_round(2.5) == 3.0 and go_round(-2.5) == -3.0 and go_round(0.49999999999999994) == 0.0
    assert go_parse_int64("+12") == 12 and go_parse_int64("-3") == -3
    assert go_parse_int64("1_0") is None and go_parse_int64(" 1") is None and go_parse_int64("9223372036854775808") is None
