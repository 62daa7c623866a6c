"""Records the sessions tests/test_live_recorded.py replays, from a real kube-apiserver
(KSCHEDCORE_TEST_APISERVER): `python tests/record_live_sessions.py [tests/data/live [SESSION...]]`.

Each session is the live client's exchanges with the server (tests/live_recording.py) and what
the client made of them live (`*.expected.json`), which the replayed client must make again.
`python tests/record_live_sessions.py tests/data/live run` records the run session alone. About
three minutes in all: the watch session waits for the watch cache to let old events go (a 410
Gone) and for a periodic bookmark."""
from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import apiserver  # noqa: E402
from live_objects import create_nodes, create_pods, node, pod  # noqa: E402
from live_recording import HookedClient, RecordingProxy, candidate, kubeconfig, try_once  # noqa: E402

from kschedcore import Scheduler  # noqa: E402
from kschedcore.live import Reflector, Runner, connect, snapshot_document  # noqa: E402
from kschedcore.live.resources import resource  # noqa: E402

# ---- what the sessions make (the replay tests build the same) ----------------------------------------
SNAPSHOT_NODES, SNAPSHOT_PENDING = 3, 600          # more pods than a list page: continue tokens
RUN_NODES, RUN_FITS, RUN_TOO_BIG = 5, 20, 2


def snapshot_objects():
    nodes = [node(f"n{i}") for i in range(SNAPSHOT_NODES)]
    pods = [pod("bound", node_name="n0")] + [pod(f"p{i:03d}", cpu="100m" if i % 2 else "250m")
                                             for i in range(SNAPSHOT_PENDING)]
    return nodes, pods


def run_objects():
    return ([node(f"n{i}", cpu="2") for i in range(RUN_NODES)],
            [pod(f"p{i:02d}", cpu="500m") for i in range(RUN_FITS)] + [pod(f"big{i}", cpu="64") for i in range(RUN_TOO_BIG)])


def _session(out: Path, name: str, fn) -> None:
    server = apiserver.ApiServer(apiserver.binaries()).start()
    proxy = RecordingProxy(server)
    try:
        direct = connect(server.kubeconfig, qps=0)
        via = connect(kubeconfig(proxy.url, out / f"{name}.kubeconfig"), qps=0)
        expected = fn(direct, via)
        time.sleep(0.5)
        proxy.save(out / f"{name}.jsonl.gz")
        (out / f"{name}.expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    finally:
        proxy.close()
        server.stop()
        (out / f"{name}.kubeconfig").unlink(missing_ok=True)


def snapshot_session(direct, via):
    nodes, pods = snapshot_objects()
    create_nodes(direct, nodes)
    create_pods(direct, pods)
    direct.request("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", body={
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}}})
    doc = snapshot_document(via)
    return {"items": sorted(f"{o['kind']} {o['metadata'].get('namespace', '')}/{o['metadata']['name']}"
                            for o in doc["items"]), "resourceVersion": doc["metadata"]["resourceVersion"]}


def run_session(direct, via):
    nodes, pods = run_objects()
    create_nodes(direct, nodes)
    runner = Runner(via, Scheduler(tie_break="first"), kinds=("Pod", "Node"), binders=1).start()
    create_pods(direct, pods)
    assert runner.wait(lambda: len(runner.live.sim.bound) == RUN_FITS, 30)
    time.sleep(2.0)        # the status writes and events go out
    bound_pod = runner.live.sim.pods["default/p00"]
    conflict = runner.bind(bound_pod, "n4" if runner.live.sim.bound["default/p00"] != "n4" else "n3")
    runner.stop()
    return {"bound": dict(sorted(runner.live.sim.bound.items())), "conflict": conflict,
            "bind_errors": runner.bind_errors,
            "messages": {k: o.message for k, o in sorted(runner.live.sim.outcomes.items()) if o.node is None}}


def watch_session(direct, via):
    """A reflector resumed from an old resourceVersion: a 410 (the watch cache has let those
    events go), a list, then changes and a bookmark while it watches."""
    direct.request("POST", "/api/v1/namespaces/default/pods", body=pod("first"))
    start_rv = direct.get("/api/v1/namespaces/default/pods/first")["metadata"]["resourceVersion"]
    for i in range(150):
        direct.request("POST", "/api/v1/namespaces/default/pods", body=pod(f"old{i}"))
    time.sleep(80)        # older than the watch cache's 75 s: let go once it is full
    for i in range(150):
        direct.request("DELETE", f"/api/v1/namespaces/default/pods/old{i}")
    seen = []
    r = Reflector(via, resource("Pod"), lambda t, o: seen.append((t, o["metadata"]["name"])), resume=start_rv,
                  min_watch_seconds=100)
    r.start()
    assert r.synced.wait(60)
    direct.request("POST", "/api/v1/namespaces/default/pods", body=pod("late"))
    patch = {"metadata": {"labels": {"changed": "yes"}}}
    direct.request("PATCH", "/api/v1/namespaces/default/pods/late", body=patch,
                   content_type="application/merge-patch+json")
    direct.request("DELETE", "/api/v1/namespaces/default/pods/first")
    time.sleep(75)        # a periodic bookmark (about every minute)
    r.stop()
    return {"events": seen, "lists": r.lists, "store": sorted(r.store), "resourceVersion": r.resource_version}


def leader_session(direct, via):
    """Two candidates: one leads; the other reads, the leader renews in between, and the
    other's write of the stale lease is refused (409)."""
    hooked = HookedClient(via)
    a, b = candidate(via, "a"), candidate(hooked, "b")
    steps = [("a", try_once(a)), ("b", try_once(b))]
    time.sleep(3.5)                      # b has seen a's record unchanged for a lease duration
    hooked.after_get = lambda: steps.append(("a-renews", try_once(a)))
    steps.append(("b-stale", try_once(b)))
    hooked.after_get = None
    steps.append(("b", try_once(b)))
    a.leading.set()
    a.release()
    steps.append(("b-after-release", try_once(b)))
    return {"steps": steps}


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "data" / "live")
    out.mkdir(parents=True, exist_ok=True)
    if apiserver.binaries() is None:
        sys.exit(apiserver.skip_reason())
    only = set(sys.argv[2:])              # session names: only those
    for name, fn in (("snapshot", snapshot_session), ("run", run_session), ("leader", leader_session),
                     ("watch", watch_session)):
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        _session(out, name, fn)
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    threading.excepthook = lambda args: print("thread:", args.exc_value, file=sys.stderr)
    main()
