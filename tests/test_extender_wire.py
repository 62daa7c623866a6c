"""The extender protocol's JSON against Go's: the bytes json.Marshal writes for ExtenderArgs,
ExtenderBindingArgs and ExtenderPreemptionArgs (both shapes, empty lists, sorted maps, HTML
escaping), and the answers json.Decoder reads, with its error text.

The expectations in tests/data/extender_wire were written by Go 1.24's encoding/json: the
encoding ones from structs of extender/v1's shapes holding the same Pod and Node objects as
raw JSON, the decoding ones from structs of the result types (the type names written `v1.`)."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from kschedcore.extender import wire

DATA = Path(__file__).parent / "data" / "extender_wire"
ENC = json.loads((DATA / "go_encode.json").read_text(encoding="utf-8"))
GO = {k: v.encode("utf-8") for k, v in ENC["go"].items()}
INPUTS = ENC["inputs"]


def obj(raw):
    md = raw["metadata"]
    return SimpleNamespace(raw=raw, name=md["name"], namespace=md.get("namespace", ""),
                           key=f'{md.get("namespace", "")}/{md["name"]}')


POD = obj(INPUTS["Pod"])
NODES = [obj(n) for n in INPUTS["Nodes"]]
VICTIMS = [obj(v) for v in INPUTS["Victims"]]


def pod_bytes():
    return wire.encode_value(POD.raw)


@pytest.mark.parametrize("case,cache_capable,nodes", [
    ("args_nodes", False, NODES), ("args_names", True, NODES),
    ("args_nodes_empty", False, []), ("args_names_empty", True, []),
])
def test_extender_args_bytes_are_gos(case, cache_capable, nodes):
    assert wire.extender_args(pod_bytes(), nodes, cache_capable, wire.NodeBytes()) == GO[case]


def test_binding_args_bytes_are_gos():
    assert wire.binding_args("p<1>", "default", "u-1", "n1") == GO["binding"]


def test_preemption_args_bytes_are_gos():
    full = {"n2": (VICTIMS, 1), "n1": (VICTIMS[:1], 0)}   # Go writes map keys sorted
    assert wire.preemption_args(pod_bytes(), full, False) == GO["preempt_full"]
    assert wire.preemption_args(pod_bytes(), full, True) == GO["preempt_meta"]
    assert wire.preemption_args(pod_bytes(), {"n1": ([], 0)}, True) == GO["preempt_meta_novictims"]


def test_node_bytes_kept_until_the_node_changes(monkeypatch):
    calls = []
    real = wire.encode_value
    monkeypatch.setattr(wire, "encode_value", lambda v: calls.append(v) or real(v))
    cache = wire.NodeBytes()
    first = cache.node_list(NODES)
    assert cache.node_list(NODES) == first and len(calls) == 2          # encoded once per node
    changed = obj({**NODES[0].raw, "spec": {"unschedulable": True}})   # an update: a new object
    again = cache.node_list([changed, NODES[1]])
    assert len(calls) == 3 and b'"unschedulable":true' in again and b'"unschedulable"' not in first


DECODERS = {"filter": wire.decode_filter_result, "prio": wire.decode_host_priority_list,
            "preempt": wire.decode_preemption_result, "bind": wire.decode_binding_result}
CASES = [json.loads(x) for x in (DATA / "go_decode.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("case", CASES, ids=[f'{c["verb"]}:{c["body"][:30]}' for c in CASES])
def test_decoding_fails_where_go_fails_with_its_words(case):
    body = case["body"].encode("utf-8")
    if case["go"] is None:
        DECODERS[case["verb"]](body)
    else:
        with pytest.raises(wire.WireError) as err:
            DECODERS[case["verb"]](body)
        assert str(err.value) == case["go"]


def test_decoding_reads_as_go_reads():
    r = wire.decode_filter_result(b'{"nodenames":["a"],"FAILEDNODES":{"b":"x"},"Other":1} trailing')
    assert r["NodeNames"] == ["a"] and r["FailedNodes"] == {"b": "x"} and r["Nodes"] is None
    assert wire.decode_filter_result(b'{"Nodes":{"items":null}}')["Nodes"] == []
    assert wire.decode_host_priority_list(b'[{"host":"a","SCORE":-4},{"Host":"b","Score":12}]') == \
        [("a", -4), ("b", 12)]
    plain = [{"Host": f"n{i}", "Score": i - 3} for i in range(20)]   # every entry plain: read at once
    assert wire.decode_host_priority_list(json.dumps(plain).encode()) == [(f"n{i}", i - 3) for i in range(20)]
    assert wire.decode_preemption_result(b'{"NodeNameToMetaVictims":{"n":{"Pods":[{"UID":"u"}],'
                                         b'"NumPDBViolations":2}}}') == {"n": (["u"], 2)}
    assert wire.decode_binding_result(b'{"Error":"x","error":"y"}') == "y"   # the last key wins
