"""`arrival="all"`: the pods every event brings in at time 0, before any cycle, added to the
loop together (loop.add_pending_at_once: the queue's Add in one call) instead of one event at a
time. Only new pending pods without claims are taken so; the batch ends before any other event
(a node, a bound pod, a pod seen before, one with claims) and before a step that samples, which
then goes the replay's own way."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..scheduler.loop import add_pending_at_once

if TYPE_CHECKING:
    from .engine import Replay


def at_once(replay: Replay, order: list, pos: int) -> int:
    """Applies the plain arrivals from timeline position order[pos] on; returns the position
    after them (pos itself when the first is not one)."""
    timeline, parsed, sim, recorder = replay.timeline, replay.parsed, replay.sim, replay.recorder
    records, known = recorder.records, sim.pods
    end = min(len(order), pos + replay.sampler.unsampled(replay.applied))
    pods: list = []
    indices: list = []
    keys: set = set()
    while pos < end:
        i = order[pos]
        ev = timeline[i]
        pod = parsed.get(i) if ev.kind == "Pod" and ev.type != "DELETED" else None
        if (pod is None or pod.node_name or pod.terminal or pod.resource_claims or pod.key in known
                or pod.key in records or pod.key in keys):
            break
        keys.add(pod.key)
        pods.append(sim.sched.parse_pod(pod))
        indices.append(i)
        pos += 1
    if pods:
        replay._changed_at = replay.clock.now()
        for i, pod in zip(indices, pods):
            recorder.arrived(pod.key, i)
        recorder.event = indices[-1]
        add_pending_at_once(sim, pods)
        replay.applied += len(pods)     # (steps that do not sample: the batch ends before one)
    return pos
