"""Fuzzing the readers: valid objects from the parity workloads, mutated at random (a field
replaced by any JSON value, deleted, or a key added), read and scheduled. Whatever the input,
the only exception allowed is kschedcore's own (KSchedCoreError: ValidationError and its
kinds), and a ValidationError names an object.

The short run is part of the test suite; the long one (`pytest -m fuzz`, FUZZ_EXAMPLES=10000
by default) runs each reader on that many inputs.
"""
import copy
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedcore import Scheduler
from kschedcore.errors import KSchedCoreError, ValidationError
from kschedcore.framework.config import parse_config
from kschedcore.sources.files import load_workload, workload_from_documents

from parity import DATA as PARITY

LONG = int(os.environ.get("FUZZ_EXAMPLES", "10000"))
_W = load_workload(PARITY / "mixed_small.json.gz")
NODES = _W.nodes[:12]
PODS = (_W.pods + _W.pending)[:200]
CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "percentageOfNodesToScore": 50,
          "profiles": [{"schedulerName": "default-scheduler",
                        "plugins": {"score": {"disabled": [{"name": "ImageLocality"}],
                                              "enabled": [{"name": "NodeResourcesFit", "weight": 2}]}},
                        "pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                            "type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 1}],
                            "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                                   {"utilization": 100, "score": 10}]}}}},
                                         {"name": "PodTopologySpread", "args": {"defaultingType": "List",
                                          "defaultConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                                                  "whenUnsatisfiable": "ScheduleAnyway"}]}}]}]}

JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True)
                    | st.text(max_size=12) | st.sampled_from(["", "1", "-1", "1.5", "1Gi", "100m", "In", "Exists",
                                                             "NoSchedule", "a/b", "kubernetes.io/hostname"]),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=6)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


@st.composite
def mutated(draw, objects):
    obj = copy.deepcopy(draw(st.sampled_from(objects)))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(obj) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = obj
        for k in path[:-1]:
            parent = parent[k]
        how = draw(st.sampled_from(["replace", "delete", "add"]))
        if how == "replace":
            parent[path[-1]] = draw(JSON)
        elif how == "delete":
            del parent[path[-1]]
        elif isinstance(parent[path[-1]], dict):
            parent[path[-1]][draw(st.text(max_size=8))] = draw(JSON)
    return obj


def _allowed(call):
    try:
        call()
    except ValidationError as e:
        assert e.obj or e.field, f"a ValidationError naming nothing: {e}"
    except KSchedCoreError:
        pass


def check_pod(pod):
    sched = Scheduler(NODES, PODS[:20])
    _allowed(lambda: (sched.schedule(pod), sched.queue(pod) and sched.schedule_pending()))


def check_node(node):
    def run():
        sched = Scheduler(NODES[:3] + [node], PODS[:10])
        sched.schedule(PODS[50])
    _allowed(run)


def check_config(doc):
    _allowed(lambda: Scheduler(NODES[:3], config=parse_config(doc)).schedule(PODS[60]))


def check_document(doc):
    def run():
        w = workload_from_documents([doc], "fuzz")
        sched = Scheduler.from_workload(w)
        sched.schedule_pending()
    _allowed(run)


SHORT = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
FULL = settings(max_examples=LONG, deadline=None, suppress_health_check=list(HealthCheck))
WORKLOAD_DOC = {"nodes": NODES[:4], "pods": _W.pods[:6], "pending": _W.pending[:6]}


@SHORT
@given(mutated(PODS))
def test_pods(pod):
    check_pod(pod)


@SHORT
@given(mutated(NODES))
def test_nodes(node):
    check_node(node)


@SHORT
@given(mutated([CONFIG]))
def test_configs(doc):
    check_config(doc)


@SHORT
@given(mutated([WORKLOAD_DOC]))
def test_workload_documents(doc):
    check_document(doc)


@pytest.mark.fuzz
@FULL
@given(mutated(PODS))
def test_pods_long(pod):
    check_pod(pod)


@pytest.mark.fuzz
@FULL
@given(mutated(NODES))
def test_nodes_long(node):
    check_node(node)


@pytest.mark.fuzz
@FULL
@given(mutated([CONFIG]))
def test_configs_long(doc):
    check_config(doc)


@pytest.mark.fuzz
@FULL
@given(mutated([WORKLOAD_DOC]))
def test_workload_documents_long(doc):
    check_document(doc)


def test_json_roundtrip_of_the_seeds():
    """The seeds are valid: every mutation starts from an input that reads."""
    for p in PODS[:5]:
        Scheduler(NODES).schedule(json.loads(json.dumps(p)))
    Scheduler(NODES, config=parse_config(CONFIG))
