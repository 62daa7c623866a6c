"""The scheduling queue of kube-scheduler v1.34.1 (semantics §8; pkg/scheduler/backend/queue
scheduling_queue.go): activeQ, backoffQ, unschedulablePods, in-flight pods with the events
they saw, PreEnqueue gates, queueing hints, the periodic flushes and the nominator, with the
v1.34 defaults: SchedulerQueueingHints (GA, locked on) and SchedulerPopFromBackoffQ (beta, on;
switchable).

Time comes from a clock (kschedcore.util.clock). The periodic flushes -- backoffQ to
activeQ every whole second, the unschedulable leftover flush every 30 s -- are not threads:
every public method first runs, in time order and each at its own tick time, the ticks that
have come due and would move a pod. Observed through the API this is the same queue as one
flushed by timers, on a virtual clock as well as a real one.

Pods are any objects with `key` ("namespace/name") and `priority`; `uid` (else the key),
`scheduler_name` (profile), `nominated_node_name` and `raw` (for spec.schedulingGates) are used
when present. The queueing hints and PreEnqueue plugins come from the profiles (the in-tree
ones read kschedcore.objects Pods and Nodes): without them no plugin hears any event.
"""
import itertools
import threading

from ...framework.cluster_events import (ClusterEvent, EventResource, EventUnscheduledPodAdd, EventUnscheduledPodUpdate,
                                         pod_scheduling_properties_change)
from ...util.clock import RealClock
from .heaps import PrioritySortQueue
from .backoff import DEFAULT_POD_INITIAL_BACKOFF, DEFAULT_POD_MAX_BACKOFF, Backoff, FlushTicks
from .hints import PreEnqueue, QueueingHints
from .in_flight import InFlight
from .moves import Moves
from .nominator import Nominator
from .parts import QueueParts
from .queued_pod_info import ACTIVE_Q, BACKOFF_Q, IN_FLIGHT, NO_PLUGINS, BarePod, QueuedPodInfo, QueueError, pod_uid

DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0

_POD_ADD = EventUnscheduledPodAdd.label


class SchedulingQueue:
    """kube-scheduler's PriorityQueue.

    clock: a RealClock (default) or VirtualClock. QueueSort: `sort_key(QueuedPodInfo)` or
    `less(a, b)` (default PrioritySort). queueing_hints: a QueueingHintMap for every profile,
    or {schedulerName: QueueingHintMap}. pre_enqueue_plugins: objects with `name` and
    `pre_enqueue(pod)` returning None (Success) or a rejection, in order, for every profile,
    or {schedulerName: [...]}. pod_lister: key -> current pod, for the nominator's check.
    """

    def __init__(self, clock=None, *, sort_key=None, less=None,
                 pod_initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
                 pod_max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
                 pod_max_in_unschedulable_pods_duration: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
                 queueing_hints=None, pre_enqueue_plugins=None, pop_from_backoff_q: bool = True,
                 pod_lister=None, nominator=None):
        self._clock = clock or RealClock()
        self._virtual = getattr(self._clock, "virtual", False)   # never wait for virtual time
        self._backoff_of = Backoff(pod_initial_backoff, pod_max_backoff, pop_from_backoff_q)
        self._max_in_unschedulable = pod_max_in_unschedulable_pods_duration
        self._pop_from_backoff_q = pop_from_backoff_q
        self._hints = QueueingHints(queueing_hints)
        self._pre_enqueue = PreEnqueue(pre_enqueue_plugins, self._hints.plugin_events)
        self._parts = QueueParts(itertools.count(), self._backoff_of, pop_from_backoff_q, sort_key, less,
                                 self._ready)
        self._pool = self._parts.pool
        self._in_flight = InFlight()
        self.nominator = nominator if nominator is not None else Nominator(pod_lister)
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._waiters = 0
        self._closed = False
        start = self._clock.now()
        self._ticks = FlushTicks(start, self._backoff_of.align)
        self._moves = Moves(self._parts, self._in_flight, self._hints, self._pre_enqueue, self._backoff_of,
                            self.nominator, pop_from_backoff_q, pod_max_in_unschedulable_pods_duration, start,
                            _pod_update_events)
        self._begun_at: float | None = None

    # --- public API ------------------------------------------------------------------------

    def add(self, *pods) -> None:
        """Add: new pending pods enter activeQ, each in order, or the pool if a PreEnqueue plugin gates it."""
        with self._lock:
            self._begin()
            for pod in pods:
                self._moves.to_active_q(QueuedPodInfo(pod, self._moves.now), _POD_ADD)

    def pop(self, timeout: float | None = 0.0) -> QueuedPodInfo | None:
        """The next pod to schedule (it is in flight until `done`), or None.

        When activeQ is empty the head of the rejection backoffQ is taken even before its
        backoff ends (SchedulerPopFromBackoffQ). timeout 0 never waits (always so on a virtual
        clock); None waits until a pod comes or the queue is closed."""
        with self._lock:
            deadline = None if not timeout else self._clock.now() + timeout
            while True:
                self._begin()
                p = self._pop_one()
                if p is not None or self._closed or self._virtual or timeout == 0:
                    return p
                if not self._wait(deadline):
                    return None

    def add_and_pop(self, pod) -> QueuedPodInfo | None:
        """Add, then the Pop that follows it at once (nothing else queued: the pod's own), as
        one call: its QueuedPodInfo in flight, or None where a PreEnqueue plugin gates it."""
        with self._lock:
            self._begin()
            self._moves.to_active_q(QueuedPodInfo(pod, self._moves.now), _POD_ADD)
            return self._pop_one()

    def attempted_at_once(self, count: int = 1) -> None:
        """Add, Pop and Done of `count` pods, one after another, with nothing else queued or in
        flight and PreEnqueue passing them (the caller knows them plain), the last now: all
        they leave behind is the cycles counted and the flush ticks' time passed (a replay's
        arrivals in an idle loop, replay/quiet.py)."""
        with self._lock:
            self._begin()
            self._moves.cycle += count

    def done(self, pod_or_uid) -> None:
        """Done: the pod's scheduling attempt is over; forget the events it was waiting on."""
        uid = pod_or_uid if isinstance(pod_or_uid, str) else pod_uid(getattr(pod_or_uid, "pod", pod_or_uid))
        with self._lock:
            self._done(uid)

    def add_unschedulable_if_not_present(self, pinfo: QueuedPodInfo, scheduling_cycle: int | None = None, *,
                                         unschedulable_plugins=None, pending_plugins=None, pod=None) -> str:
        """AddUnschedulableIfNotPresent: a pod comes back after a failed attempt.

        unschedulable_plugins / pending_plugins: the rejector plugins of the attempt (none: an
        error). pod: the current version of the pod (the informer's). Events received while
        the pod was in flight are replayed through the rejectors' hints: any Queue sends it to
        backoffQ or activeQ, else it waits in the pool. scheduling_cycle is accepted for
        kube-scheduler's signature; with queueing hints on it decides nothing. Returns where
        the pod went; raises QueueError if it is already queued (after Done, as upstream)."""
        with self._lock:
            self._begin()
            try:
                return self._moves.add_unschedulable(pinfo, unschedulable_plugins, pending_plugins, pod)
            finally:
                self._done(pinfo.uid)

    def update(self, old_pod, new_pod) -> None:
        """Update: a pending pod changed. In flight: the change is remembered for its return.
        In activeQ/backoffQ: replaced in place. In the pool: its update events run through its
        rejectors' hints. Unknown: added to activeQ."""
        with self._lock:
            self._begin()
            self._moves.update(old_pod, new_pod)

    def delete(self, pod) -> None:
        """Delete: the pod leaves whichever sub-queue holds it, and the nominator."""
        with self._lock:
            self._begin()
            self.nominator.delete(pod)
            p = self._parts.get(pod.key)
            if p is not None:
                self._parts.detach(p)

    def activate(self, pods) -> None:
        """Activate: pods in the pool or backoffQ move to activeQ (PreEnqueue permitting); an
        in-flight pod gets a ForceActivate event for its return; others are ignored."""
        with self._lock:
            self._begin()
            for pod in pods:
                self._moves.activate(pod)

    def move_all_to_active_or_backoff_queue(self, event: ClusterEvent, old_obj=None, new_obj=None,
                                            precheck=None) -> None:
        """MoveAllToActiveOrBackoffQueue: a cluster event; pool pods whose rejector plugins'
        hints answer Queue move to backoffQ or activeQ. precheck(pod) -> bool narrows the pods."""
        with self._lock:
            if not self._parts.pool.pods and not self._in_flight:
                self._moves.move_request_cycle = self._moves.cycle   # nobody waits on events
                return
            self._begin()
            if not self._hints.interested(event):
                return
            pods = self._moves.candidates(event)
            if precheck is not None:
                pods = [p for p in pods if precheck(p.pod)]
            self._moves.move_pods(pods, event, old_obj, new_obj)

    def flush_backoff_q_completed(self) -> None:
        """flushBackoffQCompleted now (the queue also runs it every whole second by itself)."""
        with self._lock:
            self._begin()
            self._moves.flush_backoff_completed()

    def flush_unschedulable_pods_leftover(self) -> None:
        """flushUnschedulablePodsLeftover now (also run every 30 s by itself)."""
        with self._lock:
            self._begin()
            self._moves.flush_leftover()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for uid in self._in_flight.uids():
                self._done(uid)
            self._cond.notify_all()

    # --- nominated pods --------------------------------------------------------------------

    def add_nominated_pod(self, pod, node_name: str | None = None) -> None:
        """node_name None: the pod's status.nominatedNodeName; "" clears the nomination."""
        with self._lock:
            self.nominator.add(pod, node_name)

    def update_nominated_pod(self, old_pod, new_pod) -> None:
        with self._lock:
            self.nominator.update(old_pod, new_pod)

    def delete_nominated_pod_if_exists(self, pod) -> None:
        with self._lock:
            self.nominator.delete(pod)

    def nominated_pods_for_node(self, node_name: str) -> list:
        """The pods nominated to the node: their queued version, else a BarePod."""
        with self._lock:
            out = []
            for key, uid in self.nominator.refs_for_node(node_name):
                p = self._parts.get(key)
                out.append(p.pod if p is not None else BarePod(key, uid))
            return out

    # --- introspection ---------------------------------------------------------------------

    @property
    def scheduling_cycle(self) -> int:
        return self._moves.cycle

    @property
    def move_request_cycle(self) -> int:
        return self._moves.move_request_cycle

    def where(self, key: str) -> str | None:
        """Which sub-queue holds the pod with this key: activeQ, backoffQ, unschedulablePods,
        inFlight (popped, not yet Done) or None."""
        with self._lock:
            self._begin()
            where = self._parts.where(key)
            if where is not None:
                return where
            return IN_FLIGHT if any(q.key == key for q in self._in_flight.pods()) else None

    def get(self, key: str) -> QueuedPodInfo | None:
        with self._lock:
            self._begin()
            return self._parts.get(key)

    def pods_in_active_q(self) -> list:
        with self._lock:
            self._begin()
            return self._parts.active_pods()

    def pods_in_backoff_q(self) -> list:
        with self._lock:
            self._begin()
            return self._parts.backoff_pods()

    def unschedulable_pods(self) -> list:
        with self._lock:
            self._begin()
            return self._parts.pool_pods()

    def in_flight_events(self) -> list:
        """The cluster events kept for pods in flight (those they may still replay)."""
        with self._lock:
            return [e[1:] for e in self._in_flight.events_since(-1)]

    def in_flight_pods(self) -> list:
        with self._lock:
            return [p.pod for p in self._in_flight.pods()]

    def pending_pods(self) -> list:
        return self.pods_in_active_q() + self.pods_in_backoff_q() + self.unschedulable_pods()

    def __len__(self):
        return len(self._parts)

    def head_run(self, most: int) -> list:
        """The QueuedPodInfos the next pops would return, up to `most`, in order and not
        popped, as far as activeQ shows them at once (PrioritySort: the head's priority, in
        arrival order); the head alone for another QueueSort; none when activeQ is empty."""
        with self._lock:
            self._begin()
            active = self._parts.active
            if isinstance(active, PrioritySortQueue):
                return active.head_run(most)
            head = active.peek()
            return [] if head is None else [head]

    def backoff_run(self, most: int) -> list:
        """The QueuedPodInfos the next pops would take from the rejection backoffQ -- activeQ
        being empty (SchedulerPopFromBackoffQ) -- up to `most`, in order and not popped; none
        when activeQ holds a pod or pods are not popped from backoffQ."""
        with self._lock:
            self._begin()
            return self._parts.backoff.head(most) if self.next_pop_from_backoff() else []

    def next_pop_from_backoff(self) -> bool:
        """Whether the next pop would take backoffQ's head: activeQ empty, backoffQ not (as
        last seen: the flush ticks due by now are not run)."""
        parts = self._parts
        return self._pop_from_backoff_q and not len(parts.active) and bool(len(parts.backoff))

    def plugins_hearing(self, event: ClusterEvent) -> frozenset:
        """The plugins with a queueing hint for `event`, in any profile."""
        return self._hints.event_plugins(event)

    def pop_run(self, pinfos) -> None:
        """Pops `pinfos` -- the head of activeQ, as head_run showed it -- each attempt ending
        at once: a pop and its Done with nothing between (no pod in flight hears anything)."""
        with self._lock:
            self._begin()
            parts = self._parts
            try:
                at_once = parts.pop_run(pinfos)
            except LookupError as e:
                raise QueueError(f"{e} (a run of pops changed)") from None
            for want in pinfos:
                if not at_once and parts.pop(False) is not want:
                    raise QueueError(f"pod {want.key}: not at activeQ's head (a run of pops changed)")
                want.attempts += 1
                want.unschedulable_plugins = want.pending_plugins = NO_PLUGINS
                want.gating_plugin, want.gating_plugin_events = "", ()
            self._moves.cycle += len(pinfos)

    def hears_events(self) -> bool:
        """Whether a cluster event can change anything: pods wait in the unschedulable pool or
        are in flight (their events are replayed when they return)."""
        return bool(self._pool) or bool(self._in_flight)

    def hears(self, event: ClusterEvent) -> bool:
        """Whether `event` could move or be recorded for any pod: a pod is in flight, or some
        pool pod's rejector plugin (or none) hears it -- otherwise every hint would answer
        QueueSkip without being asked."""
        with self._lock:
            if self._in_flight:
                return True
            return bool(self._parts.pool.pods) and self._hints.interested(event) and bool(self._moves.candidates(event))

    def empty(self) -> bool:
        """No pod queued in any part (a pop would return None; no flush has a pod to move)."""
        return not self._parts.pods

    def next_wakeup(self) -> float | None:
        """When a periodic flush will next move a pod (a simulation advances its clock here
        when pop() returns None); None if no pod waits on time."""
        if not self._parts.pods:
            return None
        with self._lock:
            self._begin()
            ticks = [t for t in (self._next_backoff_flush(), self._next_leftover_flush()) if t is not None]
            return min(ticks) if ticks else None

    # --- time ------------------------------------------------------------------------------

    def _begin(self):
        """Reads the clock and runs the flush ticks that came due since the last call."""
        now = self._clock.now()
        self._moves.now = now
        if now == self._begun_at:
            return   # work queued at `now` is never due before now + something
        self._begun_at = now
        while self._parts.pods:         # (a flush moves queued pods only)
            tb, tl = self._next_backoff_flush(), self._next_leftover_flush()
            if tb is not None and tb <= now and (tl is None or tb <= tl):
                self._at(tb, self._moves.flush_backoff_completed)
                self._ticks.ticked_backoff(tb)
            elif tl is not None and tl <= now:
                self._at(tl, self._moves.flush_leftover)
                self._ticks.ticked_leftover(tl)
            else:
                break
        self._moves.now = now
        self._ticks.passed(now)

    def _at(self, t, flush):
        self._moves.now = t
        flush()

    def _next_backoff_flush(self):
        """The first backoff tick at which a backoffQ head has finished backing off."""
        heads = self._parts.backoff_heads()
        if not heads:
            return None
        return self._ticks.backoff_after(min(self._backoff_of.expiry(p) for p in heads))

    def _next_leftover_flush(self):
        """The first leftover tick at which the oldest pool pod is over the time limit."""
        p = self._pool.timeouts.peek()
        if p is None:
            return None
        return self._ticks.leftover_after(p.timestamp + self._max_in_unschedulable)

    def backoff_duration(self, count: int) -> float:
        """initial * 2^(count-1), capped at the maximum."""
        return self._backoff_of.duration(count)

    def _wait(self, deadline) -> bool:
        """Waits for a push or the next flush tick; False once the deadline passed."""
        now = self._clock.now()
        if deadline is not None and now >= deadline:
            return False
        wake = [t for t in (self._next_backoff_flush(), self._next_leftover_flush(), deadline) if t is not None]
        self._waiters += 1
        try:
            self._cond.wait(max(0.0, min(wake) - now) if wake else None)
        finally:
            self._waiters -= 1
        return True

    def _ready(self, where):
        """A pod entered a part pop takes from: wake the waiting pops."""
        if self._waiters and (where == ACTIVE_Q or (where == BACKOFF_Q and self._pop_from_backoff_q)):
            self._cond.notify_all()

    def _pop_one(self) -> QueuedPodInfo | None:
        while True:
            p = self._parts.pop(self._pop_from_backoff_q)
            if p is None:
                return None
            p.attempts += 1
            if p.uid in self._in_flight:
                continue   # the same pod twice: upstream discards it
            self._in_flight.start(p)
            self._moves.cycle += 1
            p.part = IN_FLIGHT
            p.unschedulable_plugins = p.pending_plugins = NO_PLUGINS
            p.gating_plugin, p.gating_plugin_events = "", ()
            return p

    def _done(self, uid: str):
        p = self._in_flight.done(uid)
        if p is not None and p.part == IN_FLIGHT:
            p.part = None



def _pod_update_events(new_pod, old_pod) -> list:
    """PodSchedulingPropertiesChange, or the general Update for pods it cannot read."""
    if old_pod is not None:
        try:
            return pod_scheduling_properties_change(new_pod, old_pod)
        except AttributeError:
            pass
    assigned = getattr(new_pod, "node_name", "")
    resource = EventResource.AssignedPod if assigned else EventResource.UnschedulablePod
    return [ClusterEvent(resource, EventUnscheduledPodUpdate.action)]
