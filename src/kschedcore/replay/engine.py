"""Replay: kube-scheduler's loop (scheduler/loop.py: queue, cycles, preemption, binding) driven
by timed watch events on the virtual clock -- pods arriving and departing, nodes added, changed
and removed -- with a record of every pod.

Arrival modes:
  settle      every event in order, each once the loop has settled after the one before (active
              and backoff queues empty, no binding in flight), no time passing between them: how
              kube-scheduler's integration tests, and the parity data, drive the real scheduler.
  all         every event at time 0, in order, then the loop runs (departures after durations).
  timestamps  each event at its time (the stream's "time", else the object's creation or
              deletion timestamp); the loop runs in between, timers firing as they come due.

A pod departs at its DELETED event, at its deletionTimestamp (timestamps mode), or once it has
run for its `kschedcore.io/duration` annotation (or, in `all` mode, deletion minus creation).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import StateError, UnsupportedError, WorkloadError
from ..objects.node import parse_node
from ..objects.resource import RESOURCE_KINDS
from ..scheduler.dra_events import resource_object
from ..scheduler.loop import Simulation
from ..scheduler.runs import COPIES_AT_ONCE, copies
from ..util.collector import gc_frozen
from ..util.gomath import parse_go_duration
from . import arrivals, quiet
from .departures import Departure, Departures
from .events import DURATION_ANNOTATION, WatchEvent, deletion_time, object_time
from .records import Recorder
from .summary import Sampler

if TYPE_CHECKING:
    from ..scheduler import Scheduler

ARRIVALS = ("settle", "all", "timestamps")
"""The arrival modes: one event at a time once the loop has settled, all at time 0, at their times."""
NS = 1_000_000_000
#: run()'s progress is told after this many steps or more
PROGRESS_EVERY = 1000


@dataclass(frozen=True, slots=True)
class ParsedTimeline:
    """A replay's timeline as it parsed it (Replay.parsed_timeline), for another replay of it."""
    timeline: list
    arrival: str
    sched: Any
    parsed: dict
    lifetimes: dict
    deletions: dict
    t0: int
    times: list


@dataclass(slots=True)
class Step:
    """What the replay just applied: its position in the timeline (None for a departure the
    replay made), replay seconds, and the event or Departure."""
    index: int | None
    time: float
    event: object


class Replay:
    """Replays `events` (WatchEvents: the cluster's first, then the timeline) on `scheduler`.

    cluster: events applied before anything else, untimed (nodes, bound pods, other objects).
    events: the timeline, in file order. arrival: a mode of ARRIVALS. until: stop at this many
    replay seconds (not in settle mode). api_server: "fake" (client-go's fake clientset, as the
    parity data's harness: the scheduler never hears its own status writes, so a condition
    message equal to the one its copy of the pod holds -- from the failure before last -- is not
    written again) or "real" (every changed message is written). parsed: the ParsedTimeline of
    an earlier replay of the very same `events` and arrival mode on this Scheduler (reverted
    since, as a fork's episodes are), taken instead of parsing the timeline again. runs: the
    pods queued at once are decided in runs (scheduler/runs.py), as each cycle would; False: a
    cycle per pod (for a caller that takes each cycle's place, as the Gymnasium environment, or
    that adds events between the loop's own pops while the replay's steps are suspended).
    Other keywords go to Simulation (bind_latency, ...).
    Bad input (an unknown kind, a pod that does not parse) raises before anything runs.
    """

    def __init__(self, scheduler: Scheduler, cluster: list[WatchEvent], events: list[WatchEvent], *,
                 arrival: str = "settle", until: float | None = None, samples: int = 500, api_server: str = "fake",
                 parsed: ParsedTimeline | None = None, runs: bool = True, **sim_options: Any) -> None:
        if arrival not in ARRIVALS:
            raise WorkloadError("replay", "arrival", f"must be one of {', '.join(ARRIVALS)}, got {arrival!r}")
        if until is not None and arrival == "settle":
            raise WorkloadError("replay", "until", "needs --arrival timestamps or all (no time passes in settle mode)")
        self.sched, self.arrival, self.until, self.runs = scheduler, arrival, until, runs
        for ev in cluster:
            self._apply_setup(ev)
        self.sim = Simulation(scheduler, **sim_options)
        self.clock = self.sim.clock
        if api_server not in ("fake", "real"):
            raise WorkloadError("replay", "api_server", f'must be "fake" or "real", got {api_server!r}')
        self.recorder = Recorder(self.clock, on_bound=self._bound, stale_copy=api_server == "fake",
                                 claims_of=self.sim.sched.claim_allocations)
        self.sim.listener = self.recorder
        self.timeline = list(events)
        self.parsed: dict = {}              # timeline index -> its parsed Pod or Node
        self.lifetimes: dict[str, float] = {}  # pod key -> seconds it runs once bound
        self.deletions: dict[int, int] = {}  # timeline index -> an arriving pod's deletionTimestamp (ns)
        self.t0 = 0
        if parsed is None:
            self._prepare()
        else:
            self._prepared_as(parsed)
        #: about how many steps the replay takes (its events and the departures it makes)
        self.expected_steps = len(self.timeline) + len(self.deletions) + len(self.lifetimes)
        self.sampler = Sampler(self, max(1, self.expected_steps // max(1, samples)))
        self._departures = Departures()
        self.applied = 0
        self._with_steps = True
        self._changed_at = 0.0              # replay time the cluster last changed

    # ---- before the run: times, parsed pods ----------------------------------------------------
    def _prepare(self):
        times = [self._time_of(ev) for ev in self.timeline] if self.arrival == "timestamps" else []
        absolute = [t for t, ev in zip(times, self.timeline) if not ev.relative]
        self.t0 = (min(absolute) // NS * NS) if absolute else 0
        for i, ev in enumerate(self.timeline):
            if ev.kind == "Pod" and ev.type != "DELETED":
                self.parsed[i] = self._parse_arrival(ev)
                deleted = deletion_time(ev)
                if deleted is not None:
                    self.deletions[i] = deleted
            elif ev.kind == "Node" and ev.type != "DELETED":
                self.parsed[i] = parse_node(ev.obj, ev.where)
            elif ev.kind not in ("Pod", "Node") and ev.kind not in OBJECT_KINDS:
                raise UnsupportedError(ev.where, "object.kind", f"a replay does not apply {ev.kind} objects "
                                       f"(known: Pod, Node, {', '.join(OBJECT_KINDS)})")
        self.times = [(t - (0 if ev.relative else self.t0)) / NS for t, ev in zip(times, self.timeline)]

    def _prepared_as(self, other: ParsedTimeline) -> None:
        """What _prepare found, taken from an earlier replay of the same timeline."""
        same = len(other.timeline) == len(self.timeline) and all(
            a is b for a, b in zip(other.timeline, self.timeline))
        if not same or other.arrival != self.arrival or other.sched is not self.sched:
            raise StateError("replay", "parsed", "the timeline of other events, arrival mode or Scheduler")
        self.parsed, self.lifetimes, self.deletions = other.parsed, other.lifetimes, other.deletions
        self.t0, self.times = other.t0, other.times

    def parsed_timeline(self) -> ParsedTimeline:
        """The timeline as this replay parsed it, for another replay of it (`parsed`): a replay
        changes none of its parsed Pods and Nodes but their compile caches, which the
        Framework checks before use."""
        return ParsedTimeline(self.timeline, self.arrival, self.sched, self.parsed, self.lifetimes, self.deletions,
                              self.t0, self.times)

    def _time_of(self, ev: WatchEvent) -> int:
        t = ev.time if ev.time is not None else object_time(ev)
        if t is None:
            raise WorkloadError(ev.where, "time", f"a {ev.type} event needs a time with --arrival timestamps "
                                "(the event's \"time\", or the object's creation / deletion timestamp)")
        return t

    def _parse_arrival(self, ev: WatchEvent):
        """The pod as the scheduler sees it: a deletionTimestamp in an arriving object is when it
        departs, not a pod being deleted (an update of a known pending pod that sets it is read
        as it is, when applied). Its lifetime is noted for departures."""
        obj, meta = ev.obj, ev.obj.get("metadata") or {}
        if meta.get("deletionTimestamp") and ev.type != "DELETED":
            meta = {k: v for k, v in meta.items() if k not in ("deletionTimestamp", "deletionGracePeriodSeconds")}
            obj = {**obj, "metadata": meta}
        pod = self.sched.parse_pod(obj, ev.where)
        self.sched.prepare(pod)
        duration = (meta.get("annotations") or {}).get(DURATION_ANNOTATION)
        if duration is not None:
            seconds = parse_go_duration(duration) if isinstance(duration, str) else None
            if seconds is None or seconds < 0:
                raise WorkloadError(ev.where, f"metadata.annotations[{DURATION_ANNOTATION}]",
                                    f'invalid duration {duration!r} (a Go duration, e.g. "90s", "1h30m")')
            self.lifetimes[pod.key] = seconds
        elif self.arrival == "all" and pod.created is not None and meta is not ev.obj["metadata"]:
            self.lifetimes[pod.key] = max(0, deletion_time(ev) - pod.created) / NS  # type: ignore[operator]  # it had one
        return pod

    def _apply_setup(self, ev: WatchEvent) -> None:
        """The starting cluster, onto the Scheduler before the loop exists."""
        if ev.kind == "Node":
            self.sched.add_node(parse_node(ev.obj, ev.where))
        elif ev.kind == "Pod":
            self.sched.add_pod(self.sched.parse_pod(ev.obj, ev.where))
        elif ev.kind == "Namespace":
            self.sched.add_namespace(ev.obj)
        else:
            self.sched.add_object(ev.obj, ev.where)

    # ---- running -------------------------------------------------------------------------------
    def run(self, callback: Callable[[Step], Any] | None = None, *, freeze_gc: bool = True,
            progress: Callable[[int], Any] | None = None) -> Recorder:
        """Runs to the end; callback(Step) after each event. Returns the Recorder. freeze_gc:
        see `steps`. progress(steps): how many steps are done, told now and then (at least at
        each sampled step) -- unlike a callback, it leaves the quiet stretches on."""
        if callback is None:
            told = 0
            for _ in self.steps(with_steps=False, freeze_gc=freeze_gc):
                if progress is not None and self.applied - told >= PROGRESS_EVERY:
                    told = self.applied
                    progress(told)
            if progress is not None:
                progress(self.applied)
        else:
            for step in self.steps(freeze_gc=freeze_gc):
                callback(step)
        return self.recorder

    def steps(self, with_steps: bool = True, *, freeze_gc: bool = True) -> Iterator[Step]:
        """The replay as an iterator: a Step after each event is applied and the loop has run
        (with_steps False: None now and then instead -- a quiet stretch's steps yield one --, for
        a caller that only drives it and reads `applied`). freeze_gc: the
        objects alive at the start are out of the cyclic collector's sight until the replay ends
        (util/collector.py gc_frozen); False for a replay that may be left suspended for good
        (the frozen objects -- the replay among them -- could then never be collected)."""
        self._with_steps = with_steps
        # (runs: the driver adds no event between two pops of the loop's inner `while`)
        with gc_frozen() if freeze_gc else nullcontext(), copies(self.sim, COPIES_AT_ONCE if self.runs else 0):
            if self.arrival == "settle":
                yield from self._run_settled()
            else:
                yield from self._run_timed()
            self.sampler.sample(final=True)

    def _run_settled(self):
        self._settle()
        for i, ev in enumerate(self.timeline):
            self._apply(i, ev)
            self._settle()
            if ev.pending:
                self._withdraw_if_unplaced(ev.key)
            yield self._step(i, ev)

    def _withdraw_if_unplaced(self, key) -> None:
        """A workload's pending pod that settled neither bound nor nominated is withdrawn before
        the next one arrives, as the parity harness (and kube-scheduler's integration tests)
        give up a pod once they have seen it fail: it is never retried on later events."""
        sim = self.sim
        if key in sim.pods and key not in sim.bound and key not in sim.binding and key not in sim.nominated:
            self._delete(key)
            self.recorder.records[key].withdrawn = True

    def _settle(self) -> None:
        sim = self.sim
        while True:
            while sim.schedule_one():
                pass
            wake = sim.bindings.next_wakeup()
            if wake is None:
                return
            self.clock.advance_to(max(wake, self.clock.now()))
            sim.bindings.complete_due()

    def _run_timed(self):
        """The timeline in time order (file order at equal times), merged with the departures
        the replay makes (a heap); at equal times the timeline's event goes first."""
        together = self.arrival == "all"
        times = [0.0] * len(self.timeline) if together else self.times
        order = sorted(range(len(self.timeline)), key=times.__getitem__)
        timeline, departures, until = self.timeline, self._departures, self.until
        heap = departures.times             # the departures' times, soonest first
        n, pos = len(order), 0
        # (quiet stretches: only where no caller looks between two steps)
        stretches = self.runs and not self._with_steps and not together and quiet.may_run(self)
        tried = -1                              # the step count a stretch last began at
        while True:
            if stretches and quiet.quiet(self.sim):
                tried = self.applied
                pos = quiet.run(self, order, pos, times)
                if self.applied != tried:
                    yield None                   # (a stretch returns now and then: progress)
                    continue
            ahead = times[order[pos]] if pos < n else None
            if ahead is None and not heap:
                self._advance(None)              # until it settles, or a departure comes due
                if not heap:
                    break
                continue
            from_heap = ahead is None or (len(heap) > 0 and heap[0] < ahead)
            t = heap[0] if from_heap or ahead is None else ahead
            if until is not None and t > until:
                break
            if not (together and t == 0.0):     # `all`: the events at 0 go in before any cycle
                self._advance(t)                 # the loop runs (first at t, after the last event)
                if heap and heap[0] < t:
                    continue                     # a departure it made came due first
                if stretches and tried != self.applied and quiet.quiet(self.sim):
                    continue                     # quiet again (an arrival's cycle done): a stretch from t
            if from_heap:
                item = departures.pop()
                self._depart(item)
                yield self._step(None, item)
            else:
                if together and t == 0.0 and not self._with_steps:
                    done = arrivals.at_once(self, order, pos)
                    if done > pos:
                        pos = done
                        continue
                i = order[pos]
                pos += 1
                self._apply(i, timeline[i])
                yield self._step(i, timeline[i])
        while until is not None:            # the loop up to `until`, and the departures it makes by then
            self._advance(until)
            if not heap or heap[0] > until:
                if until > self.clock.now():
                    self.clock.advance_to(until)
                break
            item = departures.pop()
            self._depart(item)
            yield self._step(None, item)

    def _push(self, t, item) -> None:
        self._departures.push(t, item)

    def _advance(self, t) -> None:
        """Runs the loop up to replay second `t` (None: until it settles, or until the next
        departure the loop itself scheduled comes due), timers firing on the way."""
        sim, clock, heap = self.sim, self.clock, self._departures.times
        if sim.idle():                  # (most events of a churning replay: the loop waits for the next)
            if t is not None and t > clock.now():
                clock.advance_to(t)
            return
        schedule_one = sim.schedule_one
        while True:
            while schedule_one():
                pass
            q_wake, b_wake = sim.queue.next_wakeup(), sim.bindings.next_wakeup()
            if q_wake is None and b_wake is None:
                break
            wake = min(w for w in (q_wake, b_wake) if w is not None)
            limit = t if not heap else (heap[0] if t is None else min(t, heap[0]))
            if limit is not None and wake >= limit:
                break
            if limit is None and self._settled():
                break
            clock.advance_to(max(wake, clock.now()))
            sim.bindings.complete_due()
        if t is not None and heap and heap[0] < t:
            t = heap[0]                     # a departure the loop made comes due first: its time
        if t is not None and t > clock.now():
            clock.advance_to(t)

    def _settled(self) -> bool:
        """Nothing left that could change the outcome: no binding in flight, and every pod still
        backing off has failed since the cluster last changed (another retry would see the
        same cluster; only the unschedulable pods' 5-minute flush and error retries are left)."""
        sim = self.sim
        if sim.bindings.pending():
            return False
        for pod in sim.queue.pods_in_backoff_q():
            pinfo = sim.queue.get(pod.key)
            if pinfo is not None and pinfo.timestamp <= self._changed_at:
                return False
        return True

    def _step(self, index, event) -> Step | None:
        sample = self.sampler.unsampled(self.applied) == 0
        self.applied += 1
        if sample:
            self.sampler.sample()
        return Step(index, self.clock.now(), event) if self._with_steps else None

    # ---- applying one event --------------------------------------------------------------------
    def _apply(self, i: int, ev: WatchEvent) -> None:
        self.recorder.event = i
        self._changed_at = self.clock.now()
        if ev.kind == "Pod":
            self._apply_pod(i, ev)
        elif ev.kind == "Node":
            self._apply_node(i, ev)
        else:
            self._apply_object(ev)

    def _apply_pod(self, i, ev):
        sim = self.sim
        if ev.type == "DELETED":
            self._delete(ev.key)
            return
        pod = self.parsed[i]
        key = pod.key
        known = sim.pods.get(key)
        if known is None:
            if pod.terminal or self._evicted(key, ev.obj):
                return
            if not pod.node_name:
                self.recorder.arrived(key, i)
            sim.add_pod(pod)
            deleted = self.deletions.get(i)
            if self.arrival == "timestamps" and deleted is not None:
                self._push(max((deleted - self.t0) / NS, self.clock.now()), Departure(key))
        elif pod.terminal:
            self._delete(key)           # Succeeded / Failed: it leaves the node
        elif key in sim.bound or key in sim.binding:
            if pod.labels != known.labels:
                raise UnsupportedError(ev.where, "object.metadata.labels",
                                       "relabelling a bound pod is not replayed yet")
        elif not pod.node_name:         # a pending pod changed (its binding by a recorded scheduler is ignored)
            if i in self.deletions:     # now being deleted: the loop passes it over when it pops it
                pod = self.sched.parse_pod(ev.obj, ev.where)
            sim.update_pod(pod)

    def _evicted(self, key, raw: dict) -> bool:
        """A victim this replay's preemptions deleted at once: a recorded stream's later events of
        it -- its DisruptionTarget condition, its graceful deletion -- do not bring it back (a pod
        made again under its name has neither)."""
        rec = self.recorder.records.get(key)
        if rec is None or rec.preempted_by is None:
            return False
        conditions = (raw.get("status") or {}).get("conditions") or ()
        return bool((raw.get("metadata") or {}).get("deletionTimestamp")) or any(
            isinstance(c, dict) and c.get("type") == "DisruptionTarget" for c in conditions)

    def _apply_node(self, i, ev) -> None:
        sim = self.sim
        name = ev.obj["metadata"]["name"]
        known = name in sim.sched.cache.table.row_of
        if ev.type == "DELETED":
            if known:
                sim.remove_node(name)
        elif known:
            sim.update_node(self.parsed[i])
        else:
            sim.add_node(self.parsed[i])

    def _apply_object(self, ev):
        if ev.kind in RESOURCE_KINDS:
            resource_object(self.sim, ev.type, ev.kind, ev.obj, ev.where)
        elif ev.kind == "Namespace":
            self.sched.add_namespace(ev.obj)
        elif ev.type == "DELETED":
            if ev.kind != "PodDisruptionBudget":
                raise UnsupportedError(ev.where, "type", f"deleting a {ev.kind} is not replayed yet")
            self.sched.cache.pdbs.pop(ev.key, None)
        else:
            self.sched.add_object(ev.obj, ev.where)

    def _delete(self, key) -> None:
        sim = self.sim
        if key not in sim.pods:
            return
        was_bound = key in sim.bound
        self._changed_at = self.clock.now()
        sim.delete_pod(key)
        self.recorder.departed(key, was_bound)

    # ---- departures ----------------------------------------------------------------------------
    def _bound(self, key, binding) -> None:
        self._changed_at = now = self.clock.now()
        seconds = self.lifetimes.get(key)
        if seconds is not None and self.arrival != "settle":
            self._push(now + seconds, Departure(key, binding))

    def _depart(self, dep: Departure) -> None:
        rec = self.recorder.records.get(dep.key)
        if dep.binding is not None and (rec is None or rec.bindings != dep.binding or dep.key not in self.sim.bound):
            return                          # preempted or deleted before its time ran out
        self._delete(dep.key)


#: other kinds a replay applies (ADDED / MODIFIED: added or replaced; DELETED: PDBs and
#: resource.k8s.io objects only)
OBJECT_KINDS = ("Namespace", "PodDisruptionBudget", "PriorityClass", "Service", "ReplicaSet", "StatefulSet",
                "ReplicationController", "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode",
                "CSIDriver", "CSIStorageCapacity", *RESOURCE_KINDS)
