"""Fuzzing the readers. Two kinds of input:

- valid objects from the parity workloads, mutated at random (a field replaced by any JSON
  value, deleted, or a key added);
- objects drawn per reader from vocabularies of near misses and valid values
  (tests/fuzz_strategies.py): quantities, label selectors, node affinity, tolerations, topology
  spread, pod affinity, whole pods and nodes, volumes and storage objects, workload documents,
  KubeSchedulerConfigurations, watch-event streams.

Each is read and scheduled. Whatever the input, the only exception allowed is kschedcore's own
(KSchedCoreError: ValidationError and its kinds); a ValidationError names an object, and its
field, when it names one, leads into the input (fuzz_strategies.field_named). Valid values
drawn on purpose are accepted (quantities). The short run is part of the test suite; the long
one (`pytest -m fuzz`, FUZZ_EXAMPLES=10000 by default) runs each reader on that many inputs.
"""
import copy
import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fuzz_strategies as fs
from kschedcore import Scheduler
from kschedcore.errors import KSchedCoreError, QuantityError, ValidationError
from kschedcore.framework.config import parse_config
from kschedcore.objects.quantity import parse_quantity
from kschedcore.replay import load_replay
from kschedcore.sources.files import load_workload, workload_from_documents
from volume_strategies import volume_workloads

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


def _allowed(call, *inputs):
    """Runs `call`; a ValidationError must name an object, and a field of one of `inputs`
    (the raw objects it was given) when it names one and names an object among them."""
    try:
        call()
    except ValidationError as e:
        assert e.obj or e.field, f"a ValidationError naming nothing: {e}"
        raw = _raw_of(e.obj, inputs)
        if raw is not None and e.field:
            assert fs.field_named(raw, e.field), f"{e.field!r} is not a field of the input: {e}"
    except KSchedCoreError:
        pass


def _raw_of(obj: str, inputs):
    """The raw object an error's object name ("pod default/web-1", "node a") refers to."""
    kind, _, name = obj.partition(" ")
    matches = []
    for raw in _objects(inputs):
        meta = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        ns = meta.get("namespace") or ("default" if kind == "pod" else "")
        full = f"{ns}/{meta.get('name')}" if "/" in name else str(meta.get("name"))
        if str(raw.get("kind", "")).lower() in (kind, "") and full == name:
            matches.append(raw)
    return matches[0] if len(matches) == 1 else None


def _objects(inputs):
    for x in inputs:
        if isinstance(x, dict) and isinstance(x.get("metadata"), dict):
            yield x
        elif isinstance(x, dict):
            yield from _objects(v for v in x.values() if isinstance(v, (list, dict)))
        elif isinstance(x, list):
            yield from _objects(x)


def check_pod(pod):
    sched = Scheduler(NODES, PODS[:20])
    _allowed(lambda: (sched.schedule(pod), sched.queue(pod) and sched.schedule_pending()), pod)


def check_node(node):
    def run():
        sched = Scheduler(NODES[:3] + [node], PODS[:10])
        sched.schedule(PODS[50])
    _allowed(run, node)


def check_config(doc):
    _allowed(lambda: Scheduler(NODES[:3], config=parse_config(doc)).schedule(PODS[60]), doc)


def check_document(doc):
    def run():
        w = workload_from_documents([doc], "fuzz")
        sched = Scheduler.from_workload(w)
        sched.schedule_pending()
    _allowed(run, doc)


def check_quantity(text):
    try:
        q = parse_quantity(text)
    except QuantityError as e:
        assert text not in fs.GOOD_QUANTITIES, f"a valid quantity refused: {e}"
        return
    except KSchedCoreError:
        assert not isinstance(text, str), text
        return
    assert text not in fs.BAD_QUANTITIES, f"{text!r} read as {q}"
    check_pod(_with(PODS[0], ("spec", "containers", 0, "resources", "requests", "cpu"), text))


def _with(base, path, value):
    obj = copy.deepcopy(base)
    parent = obj
    for k in path[:-1]:
        parent = parent.setdefault(k, {}) if isinstance(k, str) else parent[k]
    parent[path[-1]] = value
    return obj


def check_in_pod(path, value):
    check_pod(_with(PODS[0], path, value))


def check_stream(tmp_path_factory, text):
    folder = tmp_path_factory.mktemp("fuzz")
    path, cluster = folder / "events.jsonl", folder / "cluster.json"
    path.write_text(text)
    cluster.write_text(json.dumps(STREAM_CLUSTER))

    def run():
        replay = load_replay([cluster, path])
        replay.run()
    try:
        run()
    except ValidationError as e:
        assert e.obj or e.field, f"a ValidationError naming nothing: {e}"
        line = _line_of(e.obj)
        if line is not None and e.field:
            event = _event_at(text, line)
            if event is not None:
                assert fs.field_named(event, e.field), f"{e.field!r} is not a field of line {line}: {e}"
    except KSchedCoreError:
        pass


def _line_of(where: str):
    m = re.search(r"events\.jsonl: line (\d+)$", where)
    return int(m.group(1)) if m else None


def _event_at(text, line):
    try:
        return json.loads(text.split("\n")[line - 1])
    except (ValueError, IndexError):
        return None


SHORT = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
FULL = settings(max_examples=LONG, deadline=None, suppress_health_check=list(HealthCheck))
WORKLOAD_DOC = {"nodes": NODES[:4], "pods": _W.pods[:6], "pending": _W.pending[:6]}
STREAM_CLUSTER = {"nodes": NODES[:4], "pods": [p for p in _W.pods if p["spec"].get("nodeName") in
                                                {n["metadata"]["name"] for n in NODES[:4]}][:6]}

#: reader -> strategy of (check, its arguments): every reader runs short and long
READERS = {
    "quantities": fs.quantities().map(lambda q: (check_quantity, q)),
    "label_selectors": fs.label_selectors().map(lambda sel: (check_in_pod, (
        "spec", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"),
        [{"topologyKey": "kubernetes.io/hostname", "labelSelector": sel}])),
    "node_affinity": fs.node_affinities().map(lambda na: (check_in_pod, ("spec", "affinity"), {"nodeAffinity": na})),
    "tolerations": fs.tolerations().map(lambda t: (check_in_pod, ("spec", "tolerations"), t)),
    "topology_spread": fs.spread_constraints().map(lambda c: (check_in_pod, ("spec", "topologySpreadConstraints"), c)),
    "pod_affinity": fs.pod_affinities().map(lambda a: (check_in_pod, ("spec", "affinity"), a)),
    "pods": fs.pods().map(lambda p: (check_pod, p)),
    "nodes": fs.nodes().map(lambda n: (check_node, n)),
    "configurations": fs.configurations().map(lambda c: (check_config, c)),
    "volumes": volume_workloads(max_nodes=4, max_pending=3).flatmap(
        lambda w: mutated([w]).map(lambda d: (check_document, d))),
    "workload_documents": mutated([WORKLOAD_DOC]).map(lambda d: (check_document, d)),
    "mutated_pods": mutated(PODS).map(lambda p: (check_pod, p)),
    "mutated_nodes": mutated(NODES).map(lambda n: (check_node, n)),
    "mutated_configs": mutated([CONFIG]).map(lambda c: (check_config, c)),
}
STREAMS = fs.watch_streams(PODS[:30], NODES[:4])


def _run(case):
    check, *args = case
    check(*args)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_reader(reader):
    SHORT(given(READERS[reader])(_run))()


@pytest.mark.fuzz
@pytest.mark.parametrize("reader", sorted(READERS))
def test_reader_long(reader):
    FULL(given(READERS[reader])(_run))()


def test_watch_streams(tmp_path_factory):
    settings(SHORT, max_examples=60)(given(STREAMS)(lambda text: check_stream(tmp_path_factory, text)))()


@pytest.mark.fuzz
def test_watch_streams_long(tmp_path_factory):
    FULL(given(STREAMS)(lambda text: check_stream(tmp_path_factory, text)))()


def test_field_named():
    raw = {"spec": {"containers": [{"resources": {"requests": {"example.com/gpu": "1"}}}], "affinity": None}}
    assert fs.field_named(raw, "spec.containers[0].resources.requests.example.com/gpu")
    assert fs.field_named(raw, "spec.containers[*].resources.requests")
    assert fs.field_named(raw, "spec.containers[0].resources.requests[example.com/gpu]")
    assert fs.field_named(raw, "spec.containers[0].name")          # a missing last field
    assert fs.field_named(raw, "spec.affinity.nodeAffinity")
    assert not fs.field_named(raw, "spec.containers[1].name")
    assert not fs.field_named(raw, "spec.initContainers[0].name")
    assert not fs.field_named(raw, "metadata.taints[0].key")


def test_json_roundtrip_of_the_seeds():
    """The seeds are valid: every mutation starts from an input that reads."""
    for p in PODS[:5]:
        Scheduler(NODES).schedule(json.loads(json.dumps(p)))
    Scheduler(NODES, config=parse_config(CONFIG))
