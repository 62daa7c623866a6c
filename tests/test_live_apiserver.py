"""kschedcore on a real kube-apiserver (tests/apiserver.py): snapshots, `run` (binding, the
PodScheduled condition, restarts, leader election, health and metrics), `record` and replay.
Skipped, saying why, where KSCHEDCORE_TEST_APISERVER does not name the binaries."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

pytest.importorskip("kubernetes")

import apiserver  # noqa: E402
from live_objects import condition, create_nodes, create_pods, node, pod, pods_by_name  # noqa: E402

from kschedcore import Scheduler  # noqa: E402
from kschedcore.live import Recorder, Reflector, Runner, connect, snapshot  # noqa: E402
from kschedcore.live.resources import resource  # noqa: E402
from kschedcore.live.extender_server import ExtenderServer  # noqa: E402
from kschedcore.replay import load_replay  # noqa: E402
from kschedcore.scheduler.loop import Simulation  # noqa: E402

pytestmark = pytest.mark.skipif(apiserver.binaries() is None, reason=apiserver.skip_reason())


@pytest.fixture
def server():
    s = apiserver.ApiServer(apiserver.binaries()).start()
    yield s
    s.stop()


@pytest.fixture
def client(server):
    return connect(server.kubeconfig, qps=0)


def _wait(pred, timeout, interval=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return pred()


def _kschedcore(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "kschedcore", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def test_snapshot_reads_every_kind_as_a_dump_would(client, server, tmp_path):
    create_nodes(client, [node(f"n{i}") for i in range(3)])
    create_pods(client, [pod("bound", node_name="n0"), pod("pending-a"), pod("pending-b", cpu="100")])
    client.request("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", body={
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}})
    w = snapshot(client)
    assert sorted(n["metadata"]["name"] for n in w.nodes) == ["n0", "n1", "n2"]
    assert [p["metadata"]["name"] for p in w.pods] == ["bound"]
    assert sorted(p["metadata"]["name"] for p in w.pending) == ["pending-a", "pending-b"]
    assert len(w.objects["PodDisruptionBudget"]) == 1
    assert {o["metadata"]["name"] for o in w.objects["PriorityClass"]} >= {"system-node-critical"}
    # the dump file, and --kubeconfig as the input, explain the same
    dump = tmp_path / "dump.yaml"
    out = subprocess.run([sys.executable, "-m", "kschedcore", "snapshot", "--kubeconfig", server.kubeconfig,
                          "-o", str(dump)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    a = subprocess.run([sys.executable, "-m", "kschedcore", "explain", str(dump), "-o", "jsonl", "--tie-break", "first"],
                       capture_output=True, text=True)
    b = subprocess.run([sys.executable, "-m", "kschedcore", "explain", "--kubeconfig", server.kubeconfig, "-o", "jsonl",
                        "--tie-break", "first"], capture_output=True, text=True)
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert a.stdout == b.stdout
    recs = [json.loads(line) for line in a.stdout.splitlines()]
    assert len(recs) == 2


def test_run_binds_every_pod_once_and_writes_the_unschedulable_message(client):
    create_nodes(client, [node(f"n{i}", cpu="8") for i in range(20)])
    fits = [pod(f"p{i}", cpu="500m") for i in range(300)]
    too_big = [pod(f"big{i}", cpu="64") for i in range(3)]
    create_pods(client, fits + too_big)
    offline = Simulation(Scheduler.from_workload(snapshot(client)))
    expected = {o.pod.split("/")[1]: o.message for o in offline.run_until_idle() if o.node is None}
    assert sorted(expected) == ["big0", "big1", "big2"]
    runner = Runner(client, Scheduler()).start()
    try:
        assert runner.wait(lambda: len(runner.live.sim.bound) == 300, 60)
        assert _wait(lambda: all(condition(p) and condition(p)["status"] == "False" or p["metadata"]["name"].startswith("p")
                                 for p in pods_by_name(client).values()), 30)
    finally:
        runner.stop()
    pods = pods_by_name(client)
    bound = {n: p["spec"].get("nodeName") for n, p in pods.items() if p["spec"].get("nodeName")}
    assert sorted(bound) == sorted(f"p{i}" for i in range(300))
    assert bound == {k.split("/")[1]: v for k, v in runner.live.sim.bound.items()}
    assert runner.bind_errors == 0
    for name, message in expected.items():
        cond = condition(pods[name])
        assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", message)
    per_node: dict = {}
    for n in bound.values():
        per_node[n] = per_node.get(n, 0) + 1
    assert max(per_node.values()) <= 16        # 8 cpu / 500m: nothing overcommitted


def test_a_thousand_nodes_and_ten_thousand_pending_pods(client, server, tmp_path):
    create_nodes(client, [node(f"n{i:04d}", cpu="16", memory="64Gi") for i in range(1000)])
    create_pods(client, [pod(f"p{i:05d}", cpu=f"{200 + 100 * (i % 7)}m", memory="256Mi") for i in range(10000)]
                + [pod(f"huge{i}", cpu="32") for i in range(5)])
    stream = tmp_path / "events.jsonl"
    with open(stream, "w") as out:
        rec = Recorder(client, out, kinds=("Pod", "Node")).start()
        proc = _kschedcore("run", "--kubeconfig", server.kubeconfig, "--kube-api-qps", "2000",
                           "--kube-api-burst", "2000", "--serve", "off", "--exit-when-idle", "3")
        _, err = proc.communicate(timeout=600)
        rec.stop()
    assert proc.returncode == 0, err
    assert "10000 pods bound, 0 bindings rejected, 0 status writes failed" in err
    pods = pods_by_name(client)
    assert sum(1 for p in pods.values() if p["spec"].get("nodeName")) == 10000
    for i in range(5):
        cond = condition(pods[f"huge{i}"])
        assert cond["reason"] == "Unschedulable"
        assert cond["message"].startswith("0/1000 nodes are available: 1000 Insufficient cpu.")
    # every pod was pending when `run` listed them: replaying the recorded stream with every event
    # at once decides as the live run did (the same seed, the same list order)
    replay = load_replay([str(stream)], Scheduler(), arrival="all")
    replay.run()
    offline = {k.split("/")[1]: r.node for k, r in replay.recorder.records.items() if r.node is not None}
    assert offline == {n: p["spec"]["nodeName"] for n, p in pods.items() if p["spec"].get("nodeName")}


def test_run_decides_as_replay_of_the_recorded_stream(client, tmp_path):
    create_nodes(client, [node(f"n{i}", cpu=str(2 + i % 3), memory=f"{4 + i % 5}Gi") for i in range(12)])
    stream = tmp_path / "events.jsonl"
    with open(stream, "w") as out:
        rec = Recorder(client, out, kinds=("Pod", "Node")).start()
        runner = Runner(client, Scheduler(tie_break="first"), kinds=("Pod", "Node"), events=False).start()
        try:
            for i in range(40):                 # one at a time, each once the previous settled
                create_pods(client, [pod(f"p{i}", cpu=f"{100 + 37 * i % 700}m", memory=f"{64 + i * 13 % 900}Mi")])
                assert runner.wait(lambda i=i: f"default/p{i}" in runner.live.sim.bound
                                   or runner.live.sim.outcomes.get(f"default/p{i}") is not None
                                   and runner.live.sim.outcomes[f"default/p{i}"].message, 10)
            time.sleep(1.0)
        finally:
            runner.stop()
            rec.stop()
    live = dict(runner.live.sim.bound)
    replay = load_replay([str(stream)], Scheduler(tie_break="first"), arrival="settle")
    replay.run()
    offline = {k: r.node for k, r in replay.recorder.records.items() if r.node is not None}
    assert len(live) >= 30
    assert offline == live


def test_preemption_evicts_the_victim_through_the_api(client):
    for name, value in (("low", 10), ("high", 1000)):
        client.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", body={
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value})
    create_nodes(client, [node("n0", cpu="2")])
    low = pod("low", cpu="1500m")
    low["spec"]["priorityClassName"] = "low"
    create_pods(client, [low])
    seen = []

    def watch(typ, obj):
        st = obj.get("status") or {}
        seen.append((typ, obj["metadata"]["name"], st.get("nominatedNodeName"),
                     {c["type"]: c.get("reason") for c in st.get("conditions") or ()}))
        if typ == "MODIFIED" and obj["metadata"].get("deletionTimestamp"):    # the kubelet's part
            threading.Thread(target=_finish_deleting, args=(client, obj)).start()
    watcher = Reflector(client, resource("Pod"), watch).start()
    runner = Runner(client, Scheduler(), kinds=("Pod", "Node", "PriorityClass", "PodDisruptionBudget")).start()
    try:
        assert runner.wait(lambda: "default/low" in runner.live.sim.bound, 20)
        high = pod("high", cpu="1500m")
        high["spec"]["priorityClassName"] = "high"
        create_pods(client, [high])
        assert runner.wait(lambda: runner.live.sim.bound.get("default/high") == "n0", 30)
    finally:
        runner.stop()
        watcher.stop()
    pods = pods_by_name(client)
    assert "low" not in pods, pods
    assert pods["high"]["spec"].get("nodeName") == "n0", pods["high"]
    # the victim was marked, then deleted; the preemptor nominated with its Unschedulable condition
    assert any(t == "MODIFIED" and n == "low" and c.get("DisruptionTarget") == "PreemptionByScheduler"
               for t, n, _, c in seen)
    assert ("DELETED", "low") in [(t, n) for t, n, _, _ in seen]
    assert any(n == "high" and nnn == "n0" and c.get("PodScheduled") == "Unschedulable" for _, n, nnn, c in seen)
    reasons = {e["reason"] for e in client.get("/apis/events.k8s.io/v1/namespaces/default/events")["items"]}
    assert {"Preempted", "FailedScheduling", "Scheduled"} <= reasons


def test_kill_and_restart_loses_no_pod(client, server):
    create_nodes(client, [node(f"n{i}", cpu="16") for i in range(10)])
    create_pods(client, [pod(f"p{i}", cpu="200m") for i in range(400)])
    args = ("run", "--kubeconfig", server.kubeconfig, "--kube-api-qps", "40", "--kube-api-burst", "10",
            "--serve", "off", "--no-events")
    first = _kschedcore(*args)
    assert _wait(lambda: sum(1 for p in pods_by_name(client).values() if p["spec"].get("nodeName")) >= 60, 60)
    first.send_signal(signal.SIGKILL)
    first.wait()
    partly = sum(1 for p in pods_by_name(client).values() if p["spec"].get("nodeName"))
    assert partly < 400
    second = _kschedcore(*args[:3], "--serve", "off", "--no-events", "--exit-when-idle", "2")
    out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    assert "0 bindings rejected" in err
    pods = pods_by_name(client)
    assert all(p["spec"].get("nodeName") for p in pods.values()), "a pod was left pending"
    assert len(pods) == 400


def test_leader_election_lets_one_instance_schedule(client, server):
    create_nodes(client, [node(f"n{i}", cpu="16") for i in range(4)])
    ports = (_free_port(), _free_port())
    procs = [_kschedcore("run", "--kubeconfig", server.kubeconfig, "--leader-elect", "--serve", f"127.0.0.1:{p}",
                         "--no-events") for p in ports]
    try:
        assert _wait(lambda: _lease_holder(client) is not None, 30)
        assert _wait(lambda: sorted(_status(p, "/readyz") for p in ports) == [200, 503], 30)
        leader = 0 if _status(ports[0], "/readyz") == 200 else 1
        create_pods(client, [pod(f"a{i}") for i in range(20)])
        assert _wait(lambda: all(p["spec"].get("nodeName") for p in pods_by_name(client).values()), 30)
        assert _metric(ports[leader], "scheduler_schedule_attempts_total") >= 20
        assert _metric(ports[1 - leader], "scheduler_schedule_attempts_total") == 0
        procs[leader].send_signal(signal.SIGKILL)             # no release: the lease runs out
        procs[leader].wait()
        create_pods(client, [pod(f"b{i}") for i in range(20)])
        assert _wait(lambda: _status(ports[1 - leader], "/readyz") == 200, 40)
        assert _wait(lambda: all(p["spec"].get("nodeName") for p in pods_by_name(client).values()), 30)
        assert _metric(ports[1 - leader], "scheduler_schedule_attempts_total") >= 20
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.communicate(timeout=30)


def test_the_configuration_s_client_connection_and_leader_election_are_read(client, server, tmp_path):
    create_nodes(client, [node("n0")])
    config = tmp_path / "config.yaml"
    config.write_text(f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {{kubeconfig: "{server.kubeconfig}", qps: 200, burst: 50}}
leaderElection: {{leaderElect: true, resourceName: from-config, resourceNamespace: default,
                 leaseDuration: 6s, renewDeadline: 4s, retryPeriod: 1s}}
""")
    proc = _kschedcore("run", "--config", str(config), "--serve", "off")
    try:
        assert _wait(lambda: _lease_holder(client, "default", "from-config"), 30)
        lease = client.get("/apis/coordination.k8s.io/v1/namespaces/default/leases/from-config")
        assert lease["spec"]["leaseDurationSeconds"] == 6
        create_pods(client, [pod("a")])
        assert _wait(lambda: pods_by_name(client)["a"]["spec"].get("nodeName") == "n0", 20)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


def test_sigterm_stops_cleanly_and_releases_the_lease(client, server):
    create_nodes(client, [node("n0")])
    proc = _kschedcore("run", "--kubeconfig", server.kubeconfig, "--leader-elect", "--serve", "off")
    assert _wait(lambda: _lease_holder(client), 30)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert _lease_holder(client) == ""


SCHEDULER_WITH_EXTENDER = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: KUBECONFIG, qps: 1000, burst: 1000}
leaderElection: {leaderElect: false}
percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled: [{name: "*"}]
extenders:
- urlPrefix: http://ADDRESS
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 1
  nodeCacheCapable: true
"""


@pytest.mark.skipif(not apiserver.has_kube_scheduler(),
                    reason="needs kube-scheduler beside kube-apiserver in the folder KSCHEDCORE_TEST_APISERVER names")
def test_a_real_kube_scheduler_with_the_extender_places_as_kschedcore(client, server):
    nodes = [node(f"n{i}", cpu=str(2 + i % 4), memory=f"{3 + i % 5}Gi", labels={"zone": f"z{i % 3}"})
             for i in range(15)]
    create_nodes(client, nodes)
    ext = ExtenderServer(client, Scheduler(tie_break="first", percentage_of_nodes_to_score=100)).start("127.0.0.1:0")
    apiserver.start_kube_scheduler(server, SCHEDULER_WITH_EXTENDER.replace("ADDRESS", ext.address))
    pods = [pod(f"p{i:02d}", cpu=f"{150 + 97 * i % 900}m", memory=f"{100 + 61 * i % 1500}Mi") for i in range(40)]
    try:
        for p in pods:                  # one at a time, each once bound
            create_pods(client, [p])
            name = p["metadata"]["name"]
            assert _wait(lambda: pods_by_name(client)[name]["spec"].get("nodeName"), 30, 0.05), \
                server.dir.joinpath("scheduler.log").read_text()[-3000:]
    finally:
        ext.stop()
    placed = {n: p["spec"]["nodeName"] for n, p in pods_by_name(client).items()}
    # the nodes in the informers' order (etcd's, by name), as both schedulers list them
    by_name = sorted(nodes, key=lambda n: n["metadata"]["name"])
    offline = Simulation(Scheduler.from_workload(_workload(by_name, pods), tie_break="first",
                                                 percentage_of_nodes_to_score=100))
    expected = {o.pod.split("/")[1]: o.node for o in offline.run_until_idle()}
    assert placed == expected
    assert ext.calls["filter"] == 40 and ext.calls["prioritize"] > 0


def _workload(nodes, pods):
    from kschedcore.sources.files import workload_from_documents
    return workload_from_documents([{"apiVersion": "v1", "kind": "List", "items": nodes + pods}])


# ---- helpers ------------------------------------------------------------------------------------
def _finish_deleting(client, obj):
    """What the node's kubelet does for a pod being deleted, a moment later: the final delete."""
    time.sleep(0.5)
    meta = obj["metadata"]
    try:
        client.request("DELETE", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                       body={"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})
    except Exception:       # deleted already
        pass


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


def _metric(port, name):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
        text = r.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + "{") or
               line.startswith(name + " "))


def _lease_holder(client, namespace="kube-system", name="kschedcore"):
    from kschedcore.live import ApiError
    try:
        lease = client.get(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}")
    except ApiError:
        return None
    return (lease.get("spec") or {}).get("holderIdentity", "")


if os.environ.get("KSCHEDCORE_TEST_APISERVER_LOG"):      # the server's log on failure, for debugging
    @pytest.fixture(autouse=True)
    def _log_on_failure(request, server):
        yield
        if request.node.rep_call.failed if hasattr(request.node, "rep_call") else False:
            print(server.log_tail(4000))
