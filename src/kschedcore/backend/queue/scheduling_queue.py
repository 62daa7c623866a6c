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

from ...framework.cluster_events import (BACKOFF_COMPLETE, FORCE_ACTIVATE, SCHEDULE_ATTEMPT_FAILURE, ClusterEvent,
                                         EventForceActivate, EventResource, EventUnschedulableTimeout,
                                         EventUnscheduledPodAdd, EventUnscheduledPodUpdate, match_any_cluster_event,
                                         pod_scheduling_properties_change)
from ...util.clock import RealClock
from .backoff import DEFAULT_POD_INITIAL_BACKOFF, DEFAULT_POD_MAX_BACKOFF, Backoff, FlushTicks
from .heaps import Heap, LessKey, PrioritySortQueue, as_tuple, priority_sort_key
from .hints import QUEUE_AFTER_BACKOFF, QUEUE_IMMEDIATELY, QUEUE_SKIP, PreEnqueue, QueueingHints
from .in_flight import InFlight
from .nominator import Nominator, nominated_node_name
from .queued_pod_info import (ACTIVE_Q, BACKOFF_Q, ERROR_BACKOFF_Q, IN_FLIGHT, NO_PLUGINS, UNSCHEDULABLE_PODS,
                              BarePod, QueuedPodInfo, QueueError, pod_uid)
from .unschedulable_pods import UnschedulablePods

DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0

_POD_ADD, _POD_UPDATE = EventUnscheduledPodAdd.label, EventUnscheduledPodUpdate.label
_NOMINATING_EVENTS = (_POD_ADD, _POD_UPDATE)


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
        seq = itertools.count()
        self._init_sorting(sort_key, less, seq)
        self._init_plugins(queueing_hints, pre_enqueue_plugins)
        self._pods = {}                    # key -> QueuedPodInfo in activeQ, backoffQ or the pool
        self._pool = UnschedulablePods(seq)
        self._in_flight = InFlight()
        self._cycle = 0
        self._move_request_cycle = -1
        self.nominator = nominator if nominator is not None else Nominator(pod_lister)
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._waiters = 0
        self._closed = False
        start = self._clock.now()
        self._ticks = FlushTicks(start, self._backoff_of.align)
        self._now = start
        self._begun_at = None

    # --- construction ----------------------------------------------------------------------

    def _init_sorting(self, sort_key, less, seq):
        if less is not None:
            sort_key = lambda p: (LessKey(p, less),)
        elif sort_key is not None:
            sort_key = as_tuple(sort_key)
        if sort_key is None:
            sort_key = priority_sort_key
            self._active = PrioritySortQueue(seq)
        else:
            self._active = Heap(sort_key, seq)
        if self._pop_from_backoff_q:   # lessBackoffCompletedWithPriority
            backoff_key = lambda p: (self._backoff_of.expiry(p), *sort_key(p))
        else:
            backoff_key = lambda p: (self._backoff_of.expiry(p),)
        self._backoff = Heap(backoff_key, seq)
        self._error_backoff = Heap(lambda p: (self._backoff_of.expiry(p),), seq)
        self._heaps = {ACTIVE_Q: self._active, BACKOFF_Q: self._backoff, ERROR_BACKOFF_Q: self._error_backoff}

    def _init_plugins(self, queueing_hints, pre_enqueue_plugins):
        self._hints = QueueingHints(queueing_hints)
        self._pre_enqueue = PreEnqueue(pre_enqueue_plugins, self._hints.plugin_events)

    # --- public API ------------------------------------------------------------------------

    def add(self, pod) -> None:
        """Add: a new pending pod enters activeQ, or the pool if a PreEnqueue plugin gates it."""
        with self._lock:
            self._begin()
            self._move_to_active_q(QueuedPodInfo(pod, self._now), _POD_ADD)

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
                return self._add_unschedulable(pinfo, unschedulable_plugins, pending_plugins, pod)
            finally:
                self._done(pinfo.uid)

    def update(self, old_pod, new_pod) -> None:
        """Update: a pending pod changed. In flight: the change is remembered for its return.
        In activeQ/backoffQ: replaced in place. In the pool: its update events run through its
        rejectors' hints. Unknown: added to activeQ."""
        with self._lock:
            self._begin()
            self._update(old_pod, new_pod)

    def delete(self, pod) -> None:
        """Delete: the pod leaves whichever sub-queue holds it, and the nominator."""
        with self._lock:
            self._begin()
            self.nominator.delete(pod)
            p = self._pods.get(pod.key)
            if p is not None:
                self._detach(p)

    def activate(self, pods) -> None:
        """Activate: pods in the pool or backoffQ move to activeQ (PreEnqueue permitting); an
        in-flight pod gets a ForceActivate event for its return; others are ignored."""
        with self._lock:
            self._begin()
            for pod in pods:
                self._activate(pod)

    def move_all_to_active_or_backoff_queue(self, event: ClusterEvent, old_obj=None, new_obj=None,
                                            precheck=None) -> None:
        """MoveAllToActiveOrBackoffQueue: a cluster event; pool pods whose rejector plugins'
        hints answer Queue move to backoffQ or activeQ. precheck(pod) -> bool narrows the pods."""
        with self._lock:
            self._begin()
            if not self._hints.interested(event):
                return
            pods = self._candidates(event)
            if precheck is not None:
                pods = [p for p in pods if precheck(p.pod)]
            self._move_pods(pods, event, old_obj, new_obj)

    def flush_backoff_q_completed(self) -> None:
        """flushBackoffQCompleted now (the queue also runs it every whole second by itself)."""
        with self._lock:
            self._begin()
            self._flush_backoff_completed()

    def flush_unschedulable_pods_leftover(self) -> None:
        """flushUnschedulablePodsLeftover now (also run every 30 s by itself)."""
        with self._lock:
            self._begin()
            self._flush_leftover()

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
                p = self._pods.get(key)
                out.append(p.pod if p is not None else BarePod(key, uid))
            return out

    # --- introspection ---------------------------------------------------------------------

    @property
    def scheduling_cycle(self) -> int:
        return self._cycle

    @property
    def move_request_cycle(self) -> int:
        return self._move_request_cycle

    def where(self, key: str) -> str | None:
        """Which sub-queue holds the pod with this key: activeQ, backoffQ, unschedulablePods,
        inFlight (popped, not yet Done) or None."""
        with self._lock:
            self._begin()
            p = self._pods.get(key)
            if p is not None:
                return BACKOFF_Q if p.part == ERROR_BACKOFF_Q else p.part
            return IN_FLIGHT if any(q.key == key for q in self._in_flight.pods()) else None

    def get(self, key: str) -> QueuedPodInfo | None:
        with self._lock:
            self._begin()
            return self._pods.get(key)

    def pods_in_active_q(self) -> list:
        with self._lock:
            self._begin()
            return [p.pod for p in self._active.items()]

    def pods_in_backoff_q(self) -> list:
        with self._lock:
            self._begin()
            return [p.pod for p in self._backoff.items() + self._error_backoff.items()]

    def unschedulable_pods(self) -> list:
        with self._lock:
            self._begin()
            return [p.pod for p in self._pool.pods.values()]

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
        return len(self._pods)

    def hears_events(self) -> bool:
        """Whether a cluster event can change anything: pods wait in the unschedulable pool or
        are in flight (their events are replayed when they return)."""
        return bool(self._pool) or bool(self._in_flight)

    def next_wakeup(self) -> float | None:
        """When a periodic flush will next move a pod (a simulation advances its clock here
        when pop() returns None); None if no pod waits on time."""
        with self._lock:
            self._begin()
            ticks = [t for t in (self._next_backoff_flush(), self._next_leftover_flush()) if t is not None]
            return min(ticks) if ticks else None

    # --- time ------------------------------------------------------------------------------

    def _begin(self):
        """Reads the clock and runs the flush ticks that came due since the last call."""
        now = self._clock.now()
        self._now = now
        if now == self._begun_at:
            return   # work queued at `now` is never due before now + something
        self._begun_at = now
        while True:
            tb, tl = self._next_backoff_flush(), self._next_leftover_flush()
            if tb is not None and tb <= now and (tl is None or tb <= tl):
                self._at(tb, self._flush_backoff_completed)
                self._ticks.ticked_backoff(tb)
            elif tl is not None and tl <= now:
                self._at(tl, self._flush_leftover)
                self._ticks.ticked_leftover(tl)
            else:
                break
        self._now = now
        self._ticks.passed(now)

    def _at(self, t, flush):
        self._now = t
        flush()

    def _next_backoff_flush(self):
        """The first backoff tick at which a backoffQ head has finished backing off."""
        heads = [p for p in (self._backoff.peek(), self._error_backoff.peek()) if p is not None]
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

    def _is_backing_off(self, p: QueuedPodInfo) -> bool:
        return self._backoff_of.backing_off(p, self._now)

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

    # --- sub-queue membership --------------------------------------------------------------

    def _heap_of(self, where):
        return self._heaps[where]

    def _detach(self, p: QueuedPodInfo):
        """Removes p from whichever sub-queue holds it."""
        if p.part == UNSCHEDULABLE_PODS:
            self._pool.remove(p)
        else:
            self._heap_of(p.part).remove(p)
        del self._pods[p.key]
        p.part = None

    def _place(self, p: QueuedPodInfo, where: str):
        """Puts p into a heap sub-queue, replacing whatever held its key (AddOrUpdate)."""
        old = self._pods.get(p.key)
        if old is not None:
            self._detach(old)
        self._heap_of(where).push(p)
        self._pods[p.key] = p
        p.part = where
        if self._waiters and (where == ACTIVE_Q or (where == BACKOFF_Q and self._pop_from_backoff_q)):
            self._cond.notify_all()

    def _pool_put(self, p: QueuedPodInfo):
        """unschedulablePods.addOrUpdate; also re-indexes p after its plugins or gate changed."""
        old = self._pods.get(p.key)
        if old is p and p.part == UNSCHEDULABLE_PODS:
            self._pool.unindex(p)
        else:
            if old is not None:
                self._detach(old)
            self._pods[p.key] = p
            self._pool.insert(p)
            p.part = UNSCHEDULABLE_PODS
        self._pool.index(p)

    # --- moving pods -----------------------------------------------------------------------

    def _move_to_active_q(self, p: QueuedPodInfo, event: str) -> bool:
        """moveToActiveQ: PreEnqueue, then activeQ, or the pool if gated."""
        if not (self._pop_from_backoff_q and event == BACKOFF_COMPLETE):
            self._pre_enqueue.run(p)
        if p.gating_plugin:
            return self._hold_gated(p)
        if p.initial_attempt_timestamp is None:
            p.initial_attempt_timestamp = self._now
        self._place(p, ACTIVE_Q)
        if event in _NOMINATING_EVENTS and (nominated_node_name(p.pod) or self.nominator.node_of(p.pod) is not None):
            self.nominator.add(p.pod)
        return True

    def _hold_gated(self, p: QueuedPodInfo) -> bool:
        """A gated pod waits in the pool, unless its key is queued already."""
        old = self._pods.get(p.key)
        if old is None or (old is p and p.part == UNSCHEDULABLE_PODS):
            self._pool_put(p)
        return False

    def _move_to_backoff_q(self, p: QueuedPodInfo) -> bool:
        """moveToBackoffQ: PreEnqueue runs on entry when pods may be popped from backoffQ."""
        if self._pop_from_backoff_q:
            self._pre_enqueue.run(p)
            if p.gated:
                return self._hold_gated(p)
        self._place(p, BACKOFF_Q if p.unschedulable_plugins or p.pending_plugins else ERROR_BACKOFF_Q)
        return True

    def _requeue(self, p: QueuedPodInfo, strategy: int, event: str) -> str:
        """requeuePodWithQueueingStrategy: returns the sub-queue p went to."""
        if strategy == QUEUE_SKIP:
            self._pool_put(p)
            return UNSCHEDULABLE_PODS
        if strategy == QUEUE_AFTER_BACKOFF and self._is_backing_off(p):
            return BACKOFF_Q if self._move_to_backoff_q(p) else UNSCHEDULABLE_PODS
        return ACTIVE_Q if self._move_to_active_q(p, event) else UNSCHEDULABLE_PODS

    def _pop_one(self) -> QueuedPodInfo | None:
        while True:
            p = self._active.pop()
            if p is None and self._pop_from_backoff_q:
                p = self._backoff.pop()
            if p is None:
                return None
            del self._pods[p.key]
            p.part = None
            p.attempts += 1
            if p.uid in self._in_flight:
                continue   # the same pod twice: upstream discards it
            self._in_flight.start(p)
            self._cycle += 1
            p.part = IN_FLIGHT
            p.unschedulable_plugins = p.pending_plugins = NO_PLUGINS
            p.gating_plugin, p.gating_plugin_events = "", ()
            return p

    def _done(self, uid: str):
        p = self._in_flight.done(uid)
        if p is not None and p.part == IN_FLIGHT:
            p.part = None

    # --- failed attempts, updates, activation ----------------------------------------------

    def _add_unschedulable(self, p, unschedulable_plugins, pending_plugins, pod) -> str:
        if pod is not None:
            p.set_pod(pod)
        if unschedulable_plugins is not None:
            p.unschedulable_plugins = frozenset(unschedulable_plugins)
        if pending_plugins is not None:
            p.pending_plugins = frozenset(pending_plugins)
        old = self._pods.get(p.key)
        if old is not None:
            where = BACKOFF_Q if old.part == ERROR_BACKOFF_Q else old.part
            raise QueueError(f"Pod {p.key} is already present in {where}")
        if p.unschedulable_plugins or p.pending_plugins:
            p.unschedulable_count += 1
            p.consecutive_errors_count = 0
        else:
            p.consecutive_errors_count += 1   # an error, not a rejection
        p.timestamp = self._now
        p.backoff_expiration = None
        return self._requeue(p, self._hint_for_in_flight_pod(p), SCHEDULE_ATTEMPT_FAILURE)

    def _hint_for_in_flight_pod(self, p: QueuedPodInfo) -> int:
        """determineSchedulingHintForInFlightPod: replay the events seen while in flight."""
        if not p.unschedulable_plugins and not p.pending_plugins:
            return QUEUE_AFTER_BACKOFF
        seq = self._in_flight.seq_of(p.uid)
        if seq is None:
            return QUEUE_AFTER_BACKOFF    # upstream reports an error and retries
        strategy = QUEUE_SKIP
        for _, event, old_obj, new_obj in self._in_flight.events_since(seq):
            s = self._hints.worth_requeuing(p, event, old_obj, new_obj)
            if s == QUEUE_IMMEDIATELY:
                return s
            if s == QUEUE_AFTER_BACKOFF:
                strategy = s
                if not p.pending_plugins:
                    return s
        return strategy

    def _update(self, old_pod, new_pod):
        events = _pod_update_events(new_pod, old_pod)
        if self._in_flight.record_for(pod_uid(new_pod), old_pod, new_pod, events):
            return
        if old_pod is not None:
            p = self._pods.get(old_pod.key)
            if p is not None and p.part != UNSCHEDULABLE_PODS:
                where = p.part
                self._heap_of(where).remove(p)
                p.set_pod(new_pod)
                self._heap_of(where).push(p)
                self.nominator.update(old_pod, new_pod)
                return
        p = self._pool.get(new_pod.key)
        if p is None:
            self._move_to_active_q(QueuedPodInfo(new_pod, self._now), _POD_UPDATE)
            return
        p.set_pod(new_pod)
        self.nominator.update(old_pod, new_pod)
        for event in events:
            went = self._requeue(p, self._hints.worth_requeuing(p, event, old_pod, new_pod), event.label)
            if went == ACTIVE_Q or (went == BACKOFF_Q and self._pop_from_backoff_q):
                break

    def _activate(self, pod):
        p = self._pods.get(pod.key)
        if p is None or p.part == ACTIVE_Q:
            self._in_flight.record_for(pod_uid(pod), None, pod, [EventForceActivate])
            self._move_request_cycle = self._cycle
            return
        if p.part != UNSCHEDULABLE_PODS:
            self._detach(p)   # out of backoffQ first, so no flush takes it meanwhile
        self._move_to_active_q(p, FORCE_ACTIVATE)

    # --- cluster events --------------------------------------------------------------------

    def _candidates(self, event: ClusterEvent) -> list:
        """Pool pods a hint could move: a rejector plugin hears the event (all for a wildcard),
        in pool order. The others would all get QueueSkip."""
        if event.is_wildcard:
            return list(self._pool.pods.values())
        return self._pool.candidates(self._hints.event_plugins(event))

    def _move_pods(self, pods, event: ClusterEvent, old_obj, new_obj):
        """movePodsToActiveOrBackoffQueue."""
        if not self._hints.interested(event):
            return
        for p in pods:
            if p.gated and not match_any_cluster_event(event, p.gating_plugin_events):
                continue   # the gating plugin does not wait for this event
            strategy = self._hints.worth_requeuing(p, event, old_obj, new_obj)
            if strategy == QUEUE_SKIP:
                continue
            self._detach(p)
            self._requeue(p, strategy, event.label)
        self._move_request_cycle = self._cycle
        self._in_flight.record_if_any(event, old_obj, new_obj)

    # --- periodic flushes ------------------------------------------------------------------

    def _flush_backoff_completed(self):
        """flushBackoffQCompleted: pods whose backoff ended move to activeQ."""
        done = []
        for heap in (self._backoff, self._error_backoff):
            while (p := heap.peek()) is not None and not self._is_backing_off(p):
                self._detach(p)
                done.append(p)
        for p in done:
            self._move_to_active_q(p, BACKOFF_COMPLETE)

    def _flush_leftover(self):
        """flushUnschedulablePodsLeftover: pool pods older than the limit move out."""
        pods = self._pool.expired(self._now, self._max_in_unschedulable)
        if pods:
            self._move_pods(pods, EventUnschedulableTimeout, None, None)


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
