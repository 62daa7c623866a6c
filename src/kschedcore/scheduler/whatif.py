"""The Scheduler's what-if operations: forks, cordon, drain, scale, and preemption acted on at
once -- what capacity and what-if questions change in a cluster (kschedcore.capacity.whatif)."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError, ValidationError
from ..objects.node import parse_node
from .fork import Fork

if TYPE_CHECKING:
    from ..backend.cache import Cache
    from ..objects.node import Node
    from ..objects.pod import Pod
    from .handle import Handle
    from .result import ScheduleResult
    from .schedule_one import ScheduleOne


class WhatIfOperations:
    """Mixed into Scheduler: every method works on the Scheduler's own state."""

    if TYPE_CHECKING:   # the Scheduler's state and operations these methods use
        cache: Cache
        handle: Handle
        cycles: ScheduleOne
        pending: list[Pod]

        def update_node(self, node: Node) -> Any: ...
        def queue(self, pod: Any) -> Pod | None: ...
        def remove_pod(self, key: str, missing_ok: bool = False) -> bool: ...
        def parse_pod(self, pod: Any, index_hint: str = "") -> Pod: ...
        def make_claims(self, pod: Pod) -> list: ...
        def release_claims(self, pod: Pod) -> list: ...
        def schedule(self, pod: Any) -> ScheduleResult: ...
        def assume_scheduled(self, pod: Pod, result: ScheduleResult) -> None: ...

    def fork(self, save_table: bool = False) -> Fork:
        """Opens a fork: changes from now on are undone by `revert()` or kept by `commit()`
        (scheduler/fork.py); `with sched.fork(): ...` reverts at the end of the block.
        save_table: save the whole node table at once (one O(nodes) copy) rather than each row
        before its first change -- cheaper for a fork that changes many rows (a Gymnasium
        episode places a pod per step); revert then writes the whole table back."""
        return Fork(self, save_table)

    def cordon(self, name: str) -> None:
        """kubectl cordon: the node becomes unschedulable (spec.unschedulable)."""
        node = self.cache.node(name)
        if node is None:
            raise NotFoundError(f"node {name}", "metadata.name", "no such node")
        raw = dict(node.raw, spec=dict(node.raw.get("spec") or {}, unschedulable=True))
        self.update_node(parse_node(raw))

    def drain(self, name: str) -> list[Pod]:
        """kubectl drain: cordons the node and evicts its pods, which return to `pending`
        (their nodeName cleared) to be scheduled elsewhere; DaemonSet pods stay, as drain
        leaves them. An evicted pod's devices are freed: its claims from templates are made
        anew (unallocated), its reservations of other claims dropped. Returns the evicted pods."""
        self.cordon(name)
        evicted = []
        for pod in self.cache.pods_on(name):
            if _owner_kind(pod) == "DaemonSet":
                continue
            self.cache.remove_pod(pod.key)
            self.release_claims(pod)
            moved = replace(pod, node_name="", compiled=None)
            moved.checked = True
            self.make_claims(moved)
            self.pending.append(moved)
            evicted.append(moved)
        return evicted

    def scale(self, owner: str, replicas: int) -> tuple[list[Pod | None], list[Pod]]:
        """The pods of a controller ("namespace/name": a ReplicaSet, StatefulSet, or a
        Deployment's ReplicaSets, by ownerReferences) set to `replicas`: copies of its first
        pod join `pending`, or pending then most recently placed pods go. Returns (added, removed)."""
        ns, _, name = owner.rpartition("/")
        ns = ns or "default"
        pods = [p for p in [*self.pending, *(pl.pod for pl in self.cache.placements())]
                if p.namespace == ns and _owned_by(p, name)]
        if not pods:
            raise NotFoundError(f"workload {ns}/{name}", "", "no pod of it in the cluster")
        if replicas < 0:
            raise ValidationError(f"workload {ns}/{name}", "replicas", f"must be non-negative, got {replicas}")
        added: list[Pod | None] = []
        removed: list[Pod] = []
        taken = {p.key for p in pods}
        i = 0
        while len(pods) + len(added) < replicas:
            new_name = f"{name}-whatif-{i}"
            i += 1
            if f"{ns}/{new_name}" in taken:
                continue
            raw = dict(pods[0].raw, metadata=dict(pods[0].raw.get("metadata") or {}, name=new_name, uid=new_name))
            raw["spec"] = dict(raw.get("spec") or {}, nodeName="")
            added.append(self.queue(raw))
        excess = len(pods) - replicas
        if excess > 0:
            pending = [p for p in pods if not p.node_name and p in self.pending]
            placed = [p for p in pods if p.key in self.cache][::-1]
            for p in (pending + placed)[:excess]:
                self.remove_pod(p.key)
                removed.append(p)
        return added, removed

    def preempt(self, pod: Pod | dict) -> tuple[ScheduleResult, tuple[str, ...]]:
        """Schedules `pod` with preemption acted on at once, as kube-scheduler's loop would with
        nothing else in the queue: a cycle; after a FitError, DefaultPreemption chooses a node
        and victims; the victims are deleted and the pod tries its nominated node first, then
        every node. Returns (ScheduleResult, victims' keys); the pod is assumed if placed."""
        pod = self.parse_pod(pod)
        acts, self.handle.preemption_acts = self.handle.preemption_acts, True
        try:
            result = self.cycles.attempt(pod)
        finally:
            self.handle.preemption_acts = acts
        if result.node is None and result.nomination is not None and result.nomination.nominated_node_name:
            victims = tuple(result.nomination.victims)
            for key in victims:
                self.remove_pod(key)
            result = self.cycles.evaluate_node(pod, self.cache.table.row_of[result.nomination.nominated_node_name])
            if result.node is None:
                result = self.schedule(pod)
        else:
            victims = ()
        if result.node is not None:
            self.assume_scheduled(pod, result)
        return result, victims


def _owner_kind(pod: Pod) -> str:
    refs = (pod.raw.get("metadata") or {}).get("ownerReferences") or []
    return refs[0].get("kind", "") if refs and isinstance(refs[0], dict) else ""


def _owned_by(pod: Pod, name: str) -> bool:
    """Its first owner is `name`, or a ReplicaSet of the Deployment `name` (name-<hash>)."""
    refs = (pod.raw.get("metadata") or {}).get("ownerReferences") or []
    if not refs or not isinstance(refs[0], dict):
        return False
    owner = refs[0].get("name", "")
    return owner == name or (refs[0].get("kind") == "ReplicaSet" and owner.rpartition("-")[0] == name)
