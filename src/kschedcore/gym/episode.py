"""One episode of batch scheduling as a sequence of decisions: the pending pods once each, in
`Scheduler.schedule_pending`'s order, each assumed before the next.

A pod becomes a decision only when its scheduling cycle found a feasible node. Pre-bound pods
join their node, gated pods and pods no node fits are recorded unschedulable -- as
`schedule_pending` does -- without a step. The cycle is kschedcore's own
(`ScheduleOne.schedule_pod`): the kernel's record of it gives the feasible nodes, its result
the node kube-scheduler chooses.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import StateError

if TYPE_CHECKING:
    from ..objects.pod import Pod
    from ..scheduler import ScheduleResult, Scheduler
    from .nodes import NodeIndex


class Decision:
    """The pod kube-scheduler is deciding now: its cycle's result, the feasible nodes as a mask
    over node indices and the index of the node kube-scheduler chooses."""
    __slots__ = ("pod", "result", "mask", "kube_action")

    def __init__(self, pod: Pod, result: ScheduleResult, mask: np.ndarray, kube_action: int) -> None:
        self.pod, self.result, self.mask, self.kube_action = pod, result, mask, kube_action


def decision(nodes: NodeIndex, pod: Pod, result: ScheduleResult) -> Decision:
    """The decision a cycle that found a node makes (read at once: the next cycle reuses the
    kernel's buffers)."""
    return Decision(pod, result, nodes.mask(result.cycle), nodes.index(result.node or ""))


class BatchEpisode:
    """Walks a Scheduler's pending pods (its state at the episode's start: the caller forks)."""

    def __init__(self, sched: Scheduler, nodes: NodeIndex) -> None:
        self.sched, self.nodes = sched, nodes
        self.pending = sched.pending
        sched.pending = []
        self.next = 0
        #: pod key -> node name, or None (unschedulable, gated, or an infeasible action)
        self.placements: dict[str, str | None] = {}
        self.decision: Decision | None = self.advance()

    def advance(self) -> Decision | None:
        """Runs cycles until one finds a feasible node (that pod is the next decision); None
        when no pod is left."""
        sched, pending = self.sched, self.pending
        while self.next < len(pending):
            pod = pending[self.next]
            self.next += 1
            if pod.node_name:       # pre-bound: joins its node without a cycle
                sched.cache.add_pod(pod)
                self.placements[pod.key] = pod.node_name
                continue
            if pod.gated:           # PreEnqueue (SchedulingGates) keeps it out of the cycle
                self.left_pending(pod)
                continue
            result = sched.cycles.schedule_pod(pod)
            if result.node is None:     # PostFilter runs as in schedule_pending (DRA may deallocate)
                sched.cycles.post_filter(pod, result, keep=False)
                self.left_pending(pod)
                continue
            return decision(self.nodes, pod, result)
        return None

    def left_pending(self, pod: Pod) -> None:
        self.placements[pod.key] = None
        self.sched.pending.append(pod)

    def place(self, index: int) -> str | None:
        """Assumes the decision's pod on node `index` if the cycle found it feasible (its node
        name), else records the pod unschedulable (None)."""
        d = self.decision
        if d is None:
            raise StateError("episode", "", "no decision is left: call reset()")
        node: str | None = None
        if d.mask[index]:
            node = self.nodes.names[index]
            d.result.node = node
            self.sched.assume_scheduled(d.pod, d.result)
            self.placements[d.pod.key] = node
        else:
            self.left_pending(d.pod)
        d.result.cycle = None       # the kernel's buffers are the next cycle's
        return node

    def step(self) -> None:
        self.decision = self.advance()

    def stop(self) -> None:
        """Nothing runs between steps in a batch."""
