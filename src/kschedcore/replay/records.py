"""What a replay records of each pod (docs/formats.md, `replay -o jsonl`): arrival, bindings,
nomination and victims, every unschedulable message, attempts, departure."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..scheduler.loop import SimulationListener


@dataclass(slots=True)
class PodRecord:
    """What happened to one pod during a replay: arrival, binding, nomination, victims, every
    distinct unschedulable message, attempts and departure (`as_dict()`: the `-o jsonl` line)."""
    pod: str                          # namespace/name
    event: int | None                 # position of its ADDED event in the replay's timeline
    arrival: float | None             # replay seconds (None: in the cluster from the start)
    node: str | None = None           # the node it was last bound to (kept after it left)
    nominated_node: str | None = None  # the last node preemption nominated it to
    victims: list = field(default_factory=list)      # pods deleted by preemption for it
    preempted_by: str | None = None   # the preemptor, for a victim
    messages: list = field(default_factory=list)     # distinct consecutive unschedulable messages
    attempts: int = 0                 # scheduling cycles (FailedScheduling + Scheduled)
    bound_at: float | None = None     # first binding (replay seconds)
    departed_at: float | None = None  # deleted, finished or preempted (replay seconds)
    bindings: int = 0                 # how many times it was bound
    bound_event: int | None = None    # timeline position of the event during which it was first bound
    withdrawn: bool = False           # settle mode gave up a pending pod that settled unplaced
    skipped: bool = False             # popped while being deleted: never attempted again
    #: its claims' allocations as PreBind wrote them (pods with resource claims, once bound)
    claims: dict | None = None
    written: str | None = field(default=None, repr=False)    # the condition's message in the API
    seen: str | None = field(default=None, repr=False)       # ... in the scheduler's copy of the pod

    def as_dict(self) -> dict:
        return {"pod": self.pod, "event": self.event, "arrival": self.arrival, "node": self.node,
                "nominatedNode": self.nominated_node, "victims": sorted(self.victims),
                "preemptedBy": self.preempted_by, "messages": self.messages, "attempts": self.attempts,
                "boundAt": self.bound_at, "departedAt": self.departed_at, "boundEvent": self.bound_event,
                "withdrawn": self.withdrawn, "skipped": self.skipped,
                **({"claims": self.claims} if self.claims is not None else {})}


class Recorder(SimulationListener):
    """Keeps the PodRecords from what the Simulation tells (and the replay's own arrivals and
    departures), and how many arrived pods are pending."""

    def __init__(self, clock: Any, on_bound: Callable[[str, Any], Any] | None = None, stale_copy: bool = True,
                 claims_of: Callable[[str], dict | None] | None = None) -> None:
        self.clock = clock
        #: pod key -> its claims' allocations, or None (Scheduler.claim_allocations)
        self.claims_of = claims_of
        #: the scheduler's copy of a pod is refreshed only when an attempt fails (client-go's
        #: fake API server: no resourceVersion, so the scheduler never hears its own status
        #: writes): a condition is written unless it equals the copy from the failure before
        self.stale_copy = stale_copy
        self.records: dict[str, PodRecord] = {}  # pod key -> PodRecord, in order of first appearance
        self.pending = 0              # arrived, not bound, not departed
        self.preemptions: list = []   # (time, preemptor, node, victims)
        self.event: int | None = None  # timeline position of the event being applied
        self._on_bound = on_bound

    def record(self, key: str, event: int | None = None, arrival: float | None = None) -> PodRecord:
        rec = self.records.get(key)
        if rec is None:
            rec = self.records[key] = PodRecord(key, event, arrival)
        return rec

    # ---- the replay's own events ---------------------------------------------------------------
    def arrived(self, key: str, event: int) -> None:
        rec = self.record(key, event, self.clock.now())
        rec.departed_at, rec.skipped = None, False
        self.pending += 1

    def departed(self, key: str, was_bound: bool) -> None:
        rec = self.records.get(key)
        if rec is None or rec.departed_at is not None:
            return
        rec.departed_at = self.clock.now()
        if not was_bound and not rec.skipped:
            self.pending -= 1

    def placed_at_once(self, key: str, event: int, node: str) -> None:
        """arrived, attempted and bound, now, of a new plain pod (no claims to record) bound by
        its first cycle (a replay's window, which makes what on_bound would: its departure):
        the pod has no record yet."""
        now = self.clock.now()
        self.records[key] = PodRecord(key, event, now, node, attempts=1, bound_at=now, bindings=1, bound_event=event)
        self.event = event

    # ---- SimulationListener --------------------------------------------------------------------
    def attempted(self, key: str) -> None:
        rec = self.records.get(key)
        if rec is not None:
            rec.attempts += 1

    def failed(self, key: str, message: str) -> bool:
        """Returns whether the condition was written (an update event of the pod follows)."""
        rec = self.records.get(key)
        if rec is None or not message:
            return False
        copy = rec.written
        written = message != (rec.seen if self.stale_copy else rec.written)
        if written:
            rec.written = message
            if not rec.messages or rec.messages[-1] != message:
                rec.messages.append(message)
        rec.seen = copy
        return written and not self.stale_copy

    def skipped(self, key: str) -> None:
        rec = self.records.get(key)
        if rec is not None and not rec.skipped and rec.departed_at is None:
            rec.skipped = True
            self.pending -= 1

    def bound(self, key: str, node: str) -> None:
        rec = self.records.get(key)
        if rec is None:
            return
        rec.node = node
        rec.seen = rec.written
        rec.bindings += 1
        if self.claims_of is not None:
            rec.claims = self.claims_of(key)
        if rec.bound_at is None:
            rec.bound_at = self.clock.now()
            rec.bound_event = self.event
        self.pending -= 1
        if self._on_bound is not None:
            self._on_bound(key, rec.bindings)

    def preempted(self, key: str, node: str, victims: list) -> None:
        now = self.clock.now()
        rec = self.records.get(key)
        if rec is not None:
            rec.nominated_node = node
            rec.victims += [v for v in victims if v not in rec.victims]
        for v in victims:
            vrec = self.records.get(v)
            if vrec is None:            # a pod of the starting cluster
                vrec = self.records[v] = PodRecord(v, None, None)
            vrec.preempted_by = key
            self.departed(v, True)
        self.preemptions.append((now, key, node, list(victims)))
