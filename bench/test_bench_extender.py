"""What an HTTP extender costs kschedcore: basic 5,000 nodes with a local filter + prioritize
extender that answers at once (a keep-alive server in its own process that echoes the nodes it
was sent, node names or the Node objects' bytes, without decoding them; prioritize scores from
the names), nodeCacheCapable true and false.

test_extender_call: one filter or prioritize call of 5,000 nodes through HTTPExtender, with
kschedcore's own parts beside it in extra_info (encoding the request with the node bytes kept,
decoding the answer) and the server's time per call. test_extender_pods_per_second: pods/s of
schedule_pending with the extender configured (kube-scheduler's adaptive sampling: 500 of the
5,000 nodes per cycle, or 100%)."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from kschedcore import Scheduler, parse_config
from kschedcore.extender import ExtenderConfig
from kschedcore.extender import wire
from kschedcore.extender.http import HTTPExtender
from kschedcore.objects.node import parse_node
from kschedcore.objects.pod import parse_pod

from timing import prepared, time_schedule_pending
from workloads import basic

PODS = 20

SERVER = r'''
import re, socket, sys, threading, time, json
TAIL = b',"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":""}'
NAME = re.compile(rb'"kind":"Node","metadata":\{"name":"([^"]+)"')
stats = {"calls": 0, "seconds": 0.0}

def answer(path, body):
    i = body.find(b'"NodeNames":[')
    if path.endswith(b"/stats"):
        out = json.dumps(stats).encode(); stats.update(calls=0, seconds=0.0); return out
    if path.endswith(b"/filter"):
        if i >= 0:
            return b'{"Nodes":null,"NodeNames":' + body[i + 12:body.rindex(b"]") + 1] + TAIL
        j, k = body.index(b'"Nodes":'), body.rindex(b',"NodeNames":null}')
        return b'{"Nodes":' + body[j + 8:k] + b',"NodeNames":null' + TAIL
    names = json.loads(body[i + 12:body.rindex(b"]") + 1]) if i >= 0 else [n.decode() for n in NAME.findall(body)]
    return json.dumps([{"Host": n, "Score": int(n[-1:]) if n[-1:].isdigit() else 0} for n in names]).encode()

def serve(c):
    f = c.makefile("rb")
    while True:
        line = f.readline()
        if not line:
            return
        length = 0
        while True:
            h = f.readline()
            if h in (b"\r\n", b""):
                break
            if h.lower().startswith(b"content-length:"):
                length = int(h.split(b":")[1])
        body = f.read(length)
        t0 = time.perf_counter()
        out = answer(line.split()[1], body)
        if not line.split()[1].endswith(b"/stats"):
            stats["calls"] += 1; stats["seconds"] += time.perf_counter() - t0
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(out) + out)

s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threading.Thread(target=serve, args=(c,), daemon=True).start()
'''


@pytest.fixture(scope="module")
def port():
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        yield int(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.wait()


@pytest.fixture(scope="module")
def cluster():
    w = basic(5000)
    return [parse_node(n) for n in w.nodes], parse_pod(w.pending[0])


def _server_seconds(port) -> dict:
    e = HTTPExtender(ExtenderConfig(url_prefix=f"http://127.0.0.1:{port}"))
    status, body = e.transport.post("stats", b"{}")
    return json.loads(body)


@pytest.mark.parametrize("verb", ["filter", "prioritize"])
@pytest.mark.parametrize("cache_capable", [True, False], ids=["nodeCacheCapable", "NodeObjects"])
def test_extender_call(benchmark, port, cluster, verb, cache_capable):
    nodes, pod = cluster
    e = HTTPExtender(ExtenderConfig(url_prefix=f"http://127.0.0.1:{port}/x", filter_verb="filter",
                                    prioritize_verb="prioritize", weight=1, node_cache_capable=cache_capable))
    call = getattr(e, verb)
    first = call(pod, nodes)
    assert len(first.node_names if verb == "filter" else first) == len(nodes)
    _server_seconds(port)
    benchmark.pedantic(call, args=(pod, nodes), rounds=10, iterations=1, warmup_rounds=1)
    served = _server_seconds(port)
    pod_bytes = wire.encode_value(pod.raw)
    t0 = time.perf_counter()
    body = wire.extender_args(pod_bytes, nodes, cache_capable, e.node_bytes)
    encode = time.perf_counter() - t0
    status, answer = e.transport.post(verb, body)
    decoder = wire.decode_filter_result if verb == "filter" else wire.decode_host_priority_list
    t0 = time.perf_counter()
    decoder(answer)
    decode = time.perf_counter() - t0
    cold = wire.NodeBytes()
    t0 = time.perf_counter()
    wire.extender_args(pod_bytes, nodes, cache_capable, cold)
    benchmark.extra_info.update(
        nodes=len(nodes), requestBytes=len(body), answerBytes=len(answer),
        encodeSeconds=round(encode, 6), encodeColdSeconds=round(time.perf_counter() - t0, 6),
        decodeSeconds=round(decode, 6),
        serverSecondsPerCall=round(served["seconds"] / max(served["calls"], 1), 6))


def _config(port, cache_capable, pct):
    return parse_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         **({"percentageOfNodesToScore": pct} if pct else {}),
                         "extenders": [{"urlPrefix": f"http://127.0.0.1:{port}/x", "filterVerb": "filter",
                                        "prioritizeVerb": "prioritize", "weight": 1,
                                        "nodeCacheCapable": cache_capable}]})


@pytest.mark.parametrize("pct", [0, 100], ids=["adaptive", "all-nodes"])
@pytest.mark.parametrize("cache_capable", [True, False], ids=["nodeCacheCapable", "NodeObjects"])
def test_extender_pods_per_second(benchmark, port, cache_capable, pct):
    def make():
        sched = Scheduler.from_workload(basic(5000), config=_config(port, cache_capable, pct))
        sched.pending = sched.pending[:PODS]
        return prepared(sched)

    results, _ = time_schedule_pending(benchmark, make, rounds=2)
    assert all(r.node for r in results)
