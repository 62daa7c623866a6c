"""Recording extender calls and answering them again: every verb and error recorded as one JSON
line and replayed identically with no server; a call the recording lacks is refused by name;
and the command line: extender_a replayed against the real HTTP extender server as the parity
check runs it (`--record-extenders`), then again offline (`--replay-extenders`)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from extender_servers import node, parity_server, pod
from kschedcore.errors import ValidationError
from kschedcore.extender import ExtenderConfig, ExtenderError, Victims
from kschedcore.extender.http import HTTPExtender
from kschedcore.extender.recording import (CallSink, Recording, RecordingExtender, ReplayingExtender,
                                           extender_factory, wrap_extenders)

DATA = Path(__file__).parent / "data" / "extender"

SPEC = {
    "nodes": {"n1": {"score": "4"}, "n2": {"deny": "x", "score": "9"}, "n3": {"score": "m2"}},
    "pods": {"uid-v1": {"pod": "default/v1", "labels": {}}, "uid-bad": {"pod": "default/bad", "labels": {}}},
    "extenders": {"/e": {"filter": {"failed": [{"nodeLabel": "deny", "message": "denied"}]},
                         "prioritize": {"nodeLabel": "score", "negativePrefix": "m"},
                         "bind": {"errorPods": ["default/bad"], "errorMessage": "no bind for {pod}"},
                         "preempt": {"mode": "dropNode"},
                         "faults": [{"verbs": ["filter"], "podLabel": "fail", "value": "1", "action": "http500"}]}},
}


def calls(e, nodes):
    """Every verb once, answers and errors as comparable values."""
    out = []
    for p in (pod("p"), pod("f", {"fail": "1"})):
        try:
            r = e.filter(p, nodes)
            out.append((r.node_names, r.failed, r.failed_and_unresolvable, r.returned_nodes))
        except ExtenderError as err:
            out.append(("error", str(err)))
    out.append(e.prioritize(pod("p"), nodes))
    for name in ("p", "bad"):
        try:
            out.append(e.bind(pod(name), "n1"))
        except ExtenderError as err:
            out.append(("error", str(err)))
    v1 = pod("v1", node_name="n1")
    got = e.process_preemption(pod("hi"), {"n1": Victims([v1], 2)}, lambda n: [v1] if n == "n1" else None)
    out.append({n: ([p.key for p in v.pods], v.num_pdb_violations) for n, v in got.items()})
    return out


@pytest.mark.parametrize("cache_capable", [False, True])
def test_record_then_replay_gives_the_same_answers(tmp_path, cache_capable):
    nodes = [node(n, labels) for n, labels in SPEC["nodes"].items()]
    rec = tmp_path / "rec.jsonl"
    with parity_server(SPEC, tmp_path) as (port, _):
        config = ExtenderConfig(url_prefix=f"http://127.0.0.1:{port}/e", filter_verb="filter",
                                prioritize_verb="prioritize", bind_verb="bind", preempt_verb="preempt",
                                weight=3, node_cache_capable=cache_capable)
        sink = CallSink(rec)
        live = calls(RecordingExtender(HTTPExtender(config), sink), nodes)
        sink.close()
    lines = [json.loads(x) for x in rec.read_text().splitlines()]
    assert [x["verb"] for x in lines] == ["filter", "filter", "prioritize", "bind", "bind", "preempt"]
    assert {"extender", "verb", "pod", "uid", "nodes", "answer", "error", "latency"} <= set(lines[0])
    assert lines[1]["error"].endswith("/e/filter, code 500") and lines[1]["answer"] is None
    assert lines[5]["victims"] == {"n1": ["uid-v1"]}
    if not cache_capable:    # the returned Node objects are the ones sent: kept as names
        assert lines[0]["answer"]["Nodes"] == ["n1", "n3"]
    replaying = ReplayingExtender(HTTPExtender(config, offline=True), Recording(rec))
    assert replaying.weight == 3 and replaying.is_binder()
    assert calls(replaying, nodes) == live    # the server is gone: answered from the file


def test_a_call_not_recorded_is_refused_by_name(tmp_path):
    rec = tmp_path / "rec.jsonl"
    rec.write_text("")
    e = ReplayingExtender(HTTPExtender(ExtenderConfig(url_prefix="http://x/e", filter_verb="f"), offline=True),
                          Recording(rec))
    with pytest.raises(ValidationError) as err:
        e.filter(pod("p"), [node("n1"), node("n2")])
    assert str(err.value) == (f"extender recording {rec}: no recorded filter call of extender http://x/e "
                              f"for pod default/p (uid uid-p) with these 2 nodes")


def test_bad_recordings_and_flags_are_one_line_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"extender": "e"}\n')
    with pytest.raises(ValidationError, match=r"bad.jsonl: line 1: not a recorded extender call"):
        Recording(bad)
    with pytest.raises(ValidationError, match="No such file"):
        Recording(tmp_path / "missing.jsonl")
    with pytest.raises(ValidationError, match="cannot be used with --replay-extenders"):
        extender_factory(record=tmp_path / "a", replay=bad)
    assert extender_factory() is None
    assert wrap_extenders([]) == []


def _events(tmp_path):
    work = json.loads((DATA / "extender_a.json").read_text())
    pending = work.pop("pending")
    cluster, events = tmp_path / "cluster.json", tmp_path / "events.jsonl"
    cluster.write_text(json.dumps(work))
    events.write_text("".join(json.dumps({"type": "ADDED", "object": p}) + "\n" for p in pending))
    return cluster, events


def _replay(tmp_path, config, *flags):
    cluster, events = _events(tmp_path)
    cmd = [sys.executable, "-m", "kschedcore", "replay", str(cluster), str(events), "--config", str(config),
           "--arrival", "settle", "--api-server", "real", "-o", "jsonl", *flags]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))   # the kschedcore under test
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.skipif(not (DATA / "extender_a.json").exists(), reason="the extender_a ground truth is not here")
def test_cli_records_the_http_extender_and_replays_it_offline(tmp_path):
    """The parity check's command against the real extender server matches the real
    kube-scheduler's outcome per pod; the recorded run, replayed with the server gone, prints
    the same bytes (the server has stopped: nothing listens at its URL any more)."""
    spec = json.loads((DATA / "extender_a.spec.json").read_text())
    rec = tmp_path / "rec.jsonl"
    with parity_server(spec, tmp_path) as (port, log):
        config = tmp_path / "config.yaml"
        config.write_text((DATA / "extender_a.config.yaml").read_text().replace("PORT", str(port)))
        live = _replay(tmp_path, config, "--record-extenders", str(rec))
        server_calls = len(log.read_text().splitlines())
    truth = {t["pod"]: t for t in map(json.loads, (DATA / "extender_a.trace.jsonl").read_text().splitlines())}
    got = {r["pod"]: r for r in map(json.loads, live.splitlines())}
    assert len(truth) == 30 and set(truth) <= set(got)
    for key, t in truth.items():
        r = got[key]
        assert (r["node"], (r["messages"] or [None])[-1]) == (t["node"], t["message"]), key
    assert len(rec.read_text().splitlines()) == server_calls
    assert _replay(tmp_path, config, "--replay-extenders", str(rec)) == live


def test_replay_matches_the_node_set_not_its_order(tmp_path):
    rec = tmp_path / "rec.jsonl"
    rec.write_text(json.dumps({"extender": "http://x/e", "verb": "prioritize", "pod": "default/p", "uid": "uid-p",
                               "nodes": ["n1", "n2", "n3"], "answer": [["n1", 1], ["n2", 2], ["n3", 3]],
                               "error": None, "latency": 0.001}) + "\n")
    e = ReplayingExtender(HTTPExtender(ExtenderConfig(url_prefix="http://x/e", prioritize_verb="p"), offline=True),
                          Recording(rec))
    assert e.prioritize(pod("p"), [node("n3"), node("n1"), node("n2")]) == [("n1", 1), ("n2", 2), ("n3", 3)]
    with pytest.raises(ValidationError, match="no recorded prioritize call"):
        e.prioritize(pod("p"), [node("n1"), node("n2")])
    with pytest.raises(ValidationError, match="no recorded prioritize call"):
        e.prioritize(pod("q"), [node("n1"), node("n2"), node("n3")])
