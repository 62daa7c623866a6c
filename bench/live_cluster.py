"""kschedcore run on a real kube-apiserver (tests/apiserver.py; KSCHEDCORE_TEST_APISERVER names
its binaries): pods created as fast as 16 client threads can, while `kschedcore run` schedules
them. Prints the time from each pod's creation to its binding (p50, p99: the creating client's
clock, when its POST returned, to when a watch saw spec.nodeName), pods bound per second, and the
scheduler process's peak RSS.

    python bench/live_cluster.py --nodes 1000 --pods 10000 --qps 50
    python bench/live_cluster.py --nodes 1000 --pods 10000 --qps 1000
    python bench/live_cluster.py --nodes 1000 --watched 100000      # memory with 100,000 pods watched
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import apiserver  # noqa: E402
from live_objects import create_nodes, node, pod  # noqa: E402

from kschedcore.live import Reflector, connect  # noqa: E402
from kschedcore.live.resources import resource  # noqa: E402


def _rss_kib(pid: int, key: str = "VmHWM") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--qps", type=float, default=50)
    ap.add_argument("--burst", type=int, default=100)
    ap.add_argument("--watched", type=int, default=0, help="bound pods created first (the memory question)")
    args = ap.parse_args()
    binaries = apiserver.binaries()
    if binaries is None:
        sys.exit(apiserver.skip_reason())
    server = apiserver.ApiServer(binaries).start()
    try:
        run(server, args)
    finally:
        server.stop()


def run(server, args) -> None:
    client = connect(server.kubeconfig, qps=0)
    create_nodes(client, [node(f"n{i:04d}", cpu="64", memory="256Gi", pods="500") for i in range(args.nodes)])
    if args.watched:
        t0 = time.perf_counter()
        _create(client, [pod(f"w{i}", cpu="10m", memory="16Mi", node_name=f"n{i % args.nodes:04d}")
                         for i in range(args.watched)])
        print(f"{args.watched} bound pods created in {time.perf_counter() - t0:.1f} s", flush=True)
    created: dict = {}
    bound: dict = {}

    def seen(typ, obj):
        name = obj["metadata"]["name"]
        if obj["spec"].get("nodeName") and name not in bound and name.startswith("p"):
            bound[name] = time.perf_counter()
    watcher = Reflector(client, resource("Pod"), seen).start()
    watcher.synced.wait(300)
    proc = subprocess.Popen([sys.executable, "-m", "kschedcore", "run", "--kubeconfig", server.kubeconfig,
                             "--kube-api-qps", str(args.qps), "--kube-api-burst", str(args.burst), "--serve", "off"],
                            stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()          # "scheduling for ..." once the informers synced
    print(line.strip(), flush=True)
    rss_synced = _rss_kib(proc.pid, "VmRSS")
    t0 = time.perf_counter()

    def create(p):
        client.request("POST", "/api/v1/namespaces/default/pods", body=p)
        created[p["metadata"]["name"]] = time.perf_counter()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(create, (pod(f"p{i}", cpu="100m", memory="128Mi") for i in range(args.pods))))
    t_created = time.perf_counter()
    while len(bound) < args.pods and time.perf_counter() - t0 < 1800:
        time.sleep(0.2)
    t_end = max(bound.values()) if bound else time.perf_counter()
    peak = _rss_kib(proc.pid)
    proc.terminate()
    proc.communicate(timeout=60)
    watcher.stop()
    lat = sorted(bound[n] - created[n] for n in bound if n in created)
    pct = (lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]) if lat else (lambda q: float("nan"))
    print(json.dumps({
        "nodes": args.nodes, "pods": args.pods, "watched": args.watched, "qps": args.qps, "burst": args.burst,
        "bound": len(bound), "create_seconds": round(t_created - t0, 2), "pods_per_second_created": round(args.pods / (t_created - t0), 1),
        "pods_per_second_bound": round(len(bound) / (t_end - t0), 1),
        "latency_p50_s": round(pct(0.50), 3), "latency_p99_s": round(pct(0.99), 3),
        "rss_after_sync_mib": round(rss_synced / 1024, 1), "peak_rss_mib": round(peak / 1024, 1)}), flush=True)


def _create(client, pods) -> None:
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda p: client.request("POST", "/api/v1/namespaces/default/pods", body=p), pods))


if __name__ == "__main__":
    main()
