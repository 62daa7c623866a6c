"""Coscheduling (scheduler-plugins' pkg/coscheduling): gang scheduling with PodGroups. Out of
tree upstream, so not in the in-tree registry: give it to the Scheduler (`plugins=[...]`), or
register it and enable it in a profile."""
from dataclasses import dataclass

import numpy as np

from ...framework.custom import CustomPreFilter
from ...framework.interface import Allow, Reject, Unschedulable, UnschedulableAndUnresolvable, Wait

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
"""The label naming a pod's PodGroup (scheduler-plugins' coscheduling)."""


@dataclass(frozen=True, slots=True)
class PodGroup:
    """A PodGroup (scheduling.x-k8s.io): its pods bind together once `min_member` are reserved,
    or are released after `timeout` seconds (`scheduleTimeoutSeconds`)."""
    name: str
    namespace: str
    min_member: int
    timeout: float             # scheduleTimeoutSeconds


class Coscheduling(CustomPreFilter):
    """Gang scheduling (scheduler-plugins' coscheduling): pods labelled
    `scheduling.x-k8s.io/pod-group: <name>` wait at Permit until `minMember` pods of their group
    are assumed or bound; then all of them bind. A group that does not reach it within
    `scheduleTimeoutSeconds` releases every pod it holds.

    - QueueSort (`less`): priority, then the group's creation time (a pod outside any group:
      its first attempt), then namespace/name -- so a gang's pods leave the queue together. A
      PodGroup's creation time is the virtual time its first pod was queued.
    - PreFilter: a pod whose group has fewer than `minMember` pods in the cluster is rejected
      (UnschedulableAndUnresolvable) with scheduler-plugins' message.
    - PostFilter: when a gang's pod fails and the gang is more than 10% short of `minMember`
      assumed or bound pods, its waiting pods are rejected at once instead of holding their
      nodes until the timeout.

    Give it to the Scheduler (`plugins=[Coscheduling(groups)]`) and every point runs, or
    register it and enable it in a profile. groups: PodGroup objects
    (`scheduling.x-k8s.io/v1alpha1`, spec.minMember, spec.scheduleTimeoutSeconds, default 60 s)
    as dicts. A pod naming a group that does not exist is rejected at Permit.
    """
    name = "Coscheduling"

    def __init__(self, groups=()):
        self.groups = {}
        for g in groups:
            meta, spec = g.get("metadata") or {}, g.get("spec") or {}
            ns = meta.get("namespace") or "default"
            self.groups[(ns, meta["name"])] = PodGroup(meta["name"], ns, int(spec.get("minMember", 1)),
                                                       float(spec.get("scheduleTimeoutSeconds", 60)))
        self.handle = None
        self._created = {}       # group -> virtual time its first pod was queued
        self._members = {}       # group -> keys of the pods seen in it (deleted ones dropped lazily)

    def set_handle(self, handle):
        """The loop, for the clock and the cluster's pods; pods it holds already are members."""
        self.handle = handle
        for key, pod in handle.pods.items():
            group = _group_of(pod)
            if group is not None:
                self._members.setdefault(group, set()).add(key)

    def pre_enqueue(self, pod):
        group = _group_of(pod)
        if group is not None:
            self._members.setdefault(group, set()).add(pod.key)
            if group not in self._created:
                self._created[group] = self.handle.clock.now() if self.handle is not None else 0.0
        return None

    def less(self, a, b) -> bool:
        if a.pod.priority != b.pod.priority:
            return a.pod.priority > b.pod.priority
        ta, tb = self._creation(a), self._creation(b)
        if ta != tb:
            return ta < tb
        return a.key < b.key

    def _creation(self, pinfo):
        group = _group_of(pinfo.pod)
        if group is not None and group in self.groups and group in self._created:
            return self._created[group]
        ts = pinfo.initial_attempt_timestamp
        return pinfo.timestamp if ts is None else ts

    def _pod_group(self, pod):
        """(the pod's group key or None, its PodGroup or None)."""
        group = _group_of(pod)
        return group, self.groups.get(group) if group is not None else None

    def pre_filter(self, state, pod, nodes):
        group, pg = self._pod_group(pod)
        if pg is None or self.handle is None:
            return None
        members = self._members.get(group, set())
        members.intersection_update(self.handle.pods)
        count = len(members | {pod.key})
        if count < pg.min_member:
            return UnschedulableAndUnresolvable(
                f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods number: {count}, "
                f"minMember of group: {pg.min_member}")
        return None

    def post_filter(self, state, pod, statuses):
        group, pg = self._pod_group(pod)
        if pg is None:
            return Unschedulable("can not find pod group")
        handle = self.handle
        assigned = 0 if handle is None else _assigned(handle, group)
        # float32, as scheduler-plugins computes the gap
        if assigned >= pg.min_member or np.float32(pg.min_member - assigned) / np.float32(pg.min_member) <= \
                np.float32(0.1):
            return Unschedulable()
        if handle is not None:
            for key in _waiting(handle, group):
                handle.reject(key, "optimistic rejection in PostFilter")
        return Unschedulable(f"PodGroup {pod.namespace}/{pg.name} gets rejected due to Pod {pod.name} is "
                             f"unschedulable even after PostFilter")

    def permit(self, state, pod, node_name, handle):
        group, pg = self._pod_group(pod)
        if group is None:
            return Allow()
        if pg is None:
            return Reject(f'PodGroup "{group[0]}/{group[1]}" not found')
        if _assigned(handle, group) >= pg.min_member:
            for key in _waiting(handle, group):
                handle.allow(key)
            return Allow()
        return Wait(pg.timeout)

    def on_timeout(self, key, handle):
        """The gang did not assemble: every pod of it still waiting is rejected too."""
        return [k for k in _waiting(handle, _group_of(handle.pod(key))) if k != key]


def _group_of(pod):
    name = pod.labels.get(POD_GROUP_LABEL)
    return None if name is None else (pod.namespace, name)


def _assigned(handle, group) -> int:
    """How many pods of the group are assumed or bound (CalculateAssignedPods)."""
    return sum(1 for k in handle.assumed_or_bound() if _group_of(handle.pod(k)) == group)


def _waiting(handle, group) -> list:
    """The keys of the group's pods waiting at Permit."""
    return [k for k in handle.waiting_pods() if _group_of(handle.pod(k)) == group]
