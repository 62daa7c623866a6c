"""The live client against sessions recorded from a real kube-apiserver (tests/data/live, made by
tests/record_live_sessions.py), replayed on a loopback socket: paged lists at one
resourceVersion, a watch's 410 Gone and bookmark, bindings with a conflict, the PodScheduled
message, leader election's conflict. Each session's `*.expected.json` is what the client made of
it live."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest.importorskip("kubernetes")

from live_recording import HookedClient, ReplayServer, candidate, kubeconfig, try_once  # noqa: E402

from kschedcore import Scheduler  # noqa: E402
from kschedcore.live import Reflector, Runner, connect, snapshot, snapshot_document  # noqa: E402
from kschedcore.live.resources import resource  # noqa: E402

DATA = Path(__file__).parent / "data" / "live"


@pytest.fixture
def session(tmp_path):
    servers = []

    def start(name):
        server = ReplayServer(DATA / f"{name}.jsonl.gz")
        servers.append(server)
        client = connect(kubeconfig(server.url, tmp_path / f"{name}.kubeconfig"), qps=0)
        return server, client, json.loads((DATA / f"{name}.expected.json").read_text())
    yield start
    for s in servers:
        s.close()


def _names(doc):
    return sorted(f"{o['kind']} {o['metadata'].get('namespace', '')}/{o['metadata']['name']}" for o in doc["items"])


def test_snapshot_pages_every_kind_at_the_pods_resource_version(session):
    server, client, expected = session("snapshot")
    doc = snapshot_document(client)
    assert _names(doc) == expected["items"]
    assert doc["metadata"]["resourceVersion"] == expected["resourceVersion"]
    pod_lists = [path for method, path, _ in server.received if path.startswith("/api/v1/pods?")]
    assert len(pod_lists) == 2 and "continue=" in pod_lists[1]       # 601 pods: two pages
    others = [path for method, path, _ in server.received if not path.startswith("/api/v1/pods?")]
    assert all(f"resourceVersion={expected['resourceVersion']}" in p and "resourceVersionMatch=Exact" in p
               for p in others if "continue=" not in p)
    assert not server.unrecorded


def test_snapshot_as_a_workload(session):
    server, client, expected = session("snapshot")
    w = snapshot(client)
    assert len(w.nodes) == 3 and len(w.pods) == 1 and len(w.pending) == 600
    assert [p["metadata"]["name"] for p in w.pods] == ["bound"]
    assert all(p["kind"] == "Pod" and p["apiVersion"] == "v1" for p in w.pending)   # set on list items


def test_reflector_lists_again_after_410_and_follows_bookmarks(session):
    server, client, expected = session("watch")
    seen = []
    first_watch = next(r for r in server.answers.values() for r in r if r["kind"] == "watch")
    start_rv = first_watch["path"].split("resourceVersion=")[1].split("&")[0]
    r = Reflector(client, resource("Pod"), lambda t, o: seen.append([t, o["metadata"]["name"]]), resume=start_rv)
    r.start()
    assert r.synced.wait(10)
    assert server.wait_before(10 ** 9, timeout=10)        # every recorded line sent
    deadline_rv = expected["resourceVersion"]
    t0 = time.monotonic()
    while r.resource_version != deadline_rv and time.monotonic() - t0 < 10:
        time.sleep(0.02)
    r.stop()
    assert seen == expected["events"]
    assert r.lists == expected["lists"] == 1
    assert sorted(r.store) == expected["store"]
    assert r.resource_version == deadline_rv              # moved on by the closing bookmark


def test_runner_binds_as_it_did_live_and_reports_the_conflict(session):
    server, client, expected = session("run")
    runner = Runner(client, Scheduler(tie_break="first"), kinds=("Pod", "Node"), binders=1).start()
    try:
        assert runner.wait(lambda: len(runner.live.sim.bound) == len(expected["bound"]), 20)
        p00 = runner.live.sim.pods["default/p00"]
        node = "n4" if runner.live.sim.bound["default/p00"] != "n4" else "n3"
        conflict = runner.bind(p00, node)
    finally:
        runner.stop()
    assert dict(sorted(runner.live.sim.bound.items())) == expected["bound"]
    assert conflict == expected["conflict"]
    assert runner.bind_errors == expected["bind_errors"] == 1
    messages = {k: o.message for k, o in sorted(runner.live.sim.outcomes.items()) if o.node is None}
    assert messages == expected["messages"]
    patches = {path.split("/")[6]: body for method, path, body in server.received if method == "PATCH"}
    for key, message in expected["messages"].items():
        cond = patches[key.split("/")[1]]["status"]["conditions"][0]
        assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == \
            ("PodScheduled", "False", "Unschedulable", message)
    bindings = {path.split("/")[6]: body["target"]["name"] for method, path, body in server.received
                if path.endswith("/binding")}
    assert bindings == {**{k.split("/")[1]: v for k, v in expected["bound"].items()}, "p00": node}
    assert not server.unrecorded


def test_leader_election_refused_stale_write(session):
    server, client, expected = session("leader")
    hooked = HookedClient(client)
    a, b = candidate(client, "a"), candidate(hooked, "b")
    steps = [["a", try_once(a)], ["b", try_once(b)]]
    b._observed_at -= 3.5                  # b saw a's record a lease duration ago (the session slept)
    hooked.after_get = lambda: steps.append(["a-renews", try_once(a)])
    steps.append(["b-stale", try_once(b)])
    hooked.after_get = None
    steps.append(["b", try_once(b)])
    a.leading.set()
    a.release()
    steps.append(["b-after-release", try_once(b)])
    assert steps == expected["steps"]
    assert not server.unrecorded
