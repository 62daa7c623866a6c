"""The machine reference: a fixed amount of scheduling-like work that uses nothing of
kschedcore, timed in the same run as what it normalises. A benchmark's time divided by the
reference's (or pods/s times it) changes when kschedcore changes, not when the machine is
busier or slower: both slow down together.

Never change `reference_work`: saved ratios are only comparable while it stays the same
(REFERENCE_VERSION says which one a figure was measured against)."""
import statistics
import time

import numpy as np

REFERENCE_VERSION = 1


def reference_work(nodes: int = 2000, pods: int = 200, seed: int = 0) -> int:
    """A plain NumPy scheduler: per pod, a fit filter and a least-allocated score over every
    node, the best node taken. Python work per pod and a memory-bound pass over the nodes, as
    the real cycle has; ~10-30 ms on a laptop core. Returns a checksum of the placements."""
    rng = np.random.default_rng(seed)
    alloc = rng.integers(4_000, 64_000, size=(nodes, 2))
    used = np.zeros_like(alloc)
    requests = rng.integers(100, 2_000, size=(pods, 2))
    placed = {}
    for i in range(pods):
        req = requests[i]
        free = alloc - used
        score = ((free - req) * 100 // alloc).sum(axis=1)
        score[~(free >= req).all(axis=1)] = -1
        row = int(score.argmax())
        used[row] += req
        placed[f"pod-{i}"] = row
    return sum(placed.values())


def reference_seconds(rounds: int = 5) -> float:
    """The median time of `reference_work` over `rounds` runs (one untimed warm-up first)."""
    reference_work()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        reference_work()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
