"""The loop on real threads: pods scheduled and bound by the background threads, binder
failures retried, a clean stop."""
import threading
import time

from kschedcore import Scheduler
from kschedcore.scheduler.live import LiveScheduler


def node(name, cpu="4"):
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "50"}}}


def pod(name, cpu="500m"):
    return {"metadata": {"name": name, "uid": f"uid-{name}"},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}}


def test_live_scheduling_binds_from_several_threads():
    calls, lock = {}, threading.Lock()

    def slow_binder(p, node_name):
        time.sleep(0.005)                      # an API call
        with lock:
            calls[p.key] = calls.get(p.key, 0) + 1
            return "conflict" if calls[p.key] == 1 and p.name.endswith("3") else None   # one retry

    with LiveScheduler(Scheduler([node("a"), node("b")]), binder=slow_binder, binder_threads=3,
                       pod_initial_backoff=0.05, pod_max_backoff=0.1) as live:
        feeders = [threading.Thread(target=lambda i=i: [live.add_pod(pod(f"p{i}-{j}")) for j in range(5)])
                   for i in range(3)]
        for t in feeders:
            t.start()
        for t in feeders:
            t.join()
        keys = [f"default/p{i}-{j}" for i in range(3) for j in range(5)]
        assert live.wait_until_bound(keys, timeout=20)
    sim = live.sim
    assert sorted(sim.bound) == sorted(keys) and not sim.binding
    t = sim.sched.table
    cpu = t.resource_col("cpu")
    assert int(t.requested[:, cpu].sum()) == 500 * len(keys)
    assert all(calls[k] == (2 if k.endswith("3") else 1) for k in keys)


def test_stop_is_clean_with_nothing_to_do():
    live = LiveScheduler(Scheduler([node("a")])).start()
    live.add_pod(pod("big", cpu="8"))          # never fits
    time.sleep(0.1)
    live.stop(timeout=5)
    assert not live._thread.is_alive()
    assert live.outcome("default/big").node is None
