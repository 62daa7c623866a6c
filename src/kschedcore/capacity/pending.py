"""The cluster's own pending pods in a capacity question: scheduled before any copy, in
PrioritySort order (priority, then the API's list order), each assumed before the next, and
reported on their own -- not counted as copies (cluster-capacity's binder hook counts every
binding of the run, theirs included; kschedcore answers the question asked: how many copies)."""
from collections import defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

from .podspec import DEFAULT_SCHEDULER


class Bound(NamedTuple):
    """One pod bound in the run: `template` is its template's index, None for a cluster pod."""
    pod: str
    node: str
    template: int | None


@dataclass
class ClusterPending:
    """Where the cluster's pending pods (of the default scheduler) went: `placed` (Bound, in
    the order they were bound) and `unplaced` (pod key -> the PodScheduled message)."""
    placed: list = field(default_factory=list)
    unplaced: dict = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.placed) + len(self.unplaced)

    def reasons(self) -> list:
        """(message, pod keys) per distinct message, most pods first."""
        by_message = defaultdict(list)
        for key, message in self.unplaced.items():
            by_message[message].append(key)
        return sorted(by_message.items(), key=lambda kv: (-len(kv[1]), kv[0]))

    def as_dict(self) -> dict:
        """The `clusterPendingPods` field of the capacity documents (docs/formats.md)."""
        return {"pods": self.total, "placed": len(self.placed), "pending": len(self.unplaced),
                "reasons": [{"message": m, "count": len(keys), "pods": keys} for m, keys in self.reasons()]}


def schedule_cluster_pending(sched) -> ClusterPending:
    """Schedules the default scheduler's pending pods of `sched` (Scheduler.schedule_pending,
    in PrioritySort order); gated ones stay pending with SchedulingGates' message. Pods of
    other schedulers are left in `sched.pending`, untouched."""
    mine = [p for p in sched.pending if p.scheduler_name == DEFAULT_SCHEDULER]
    others = [p for p in sched.pending if p.scheduler_name != DEFAULT_SCHEDULER]
    out = ClusterPending()
    if not mine:
        return out
    sched.pending = sorted(mine, key=lambda p: -p.priority)     # stable: list order among equals
    for r in sched.schedule_pending(records=False):
        if r.node is not None:
            out.placed.append(Bound(r.pod, r.node, None))
        else:
            out.unplaced[r.pod] = r.message or ""
    sched.pending += others
    return out


def pending_lines(doc: dict, examples: int = 3) -> list:
    """A `clusterPendingPods` document as text lines: the counts, then each message with how
    many pods it holds back and the first `examples` of them."""
    lines = [f"The cluster's own pending pods (scheduled first, not counted as copies): {doc['pods']}; "
             f"{doc['placed']} placed, {doc['pending']} still pending."]
    for r in doc["reasons"]:
        more = f", ... ({r['count'] - examples} more)" if r["count"] > examples else ""
        lines.append(f"\t- {r['count']} pod(s) ({', '.join(r['pods'][:examples])}{more}): {r['message']}")
    return lines
