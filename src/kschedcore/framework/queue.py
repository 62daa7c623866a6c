"""The scheduling queue of kube-scheduler v1.34.1 (semantics §8): activeQ, backoffQ,
unschedulablePods, in-flight pods with the events they saw, PreEnqueue gates, queueing hints,
the periodic flushes and the nominator.

Written from pkg/scheduler/backend/queue (scheduling_queue.go, active_queue.go,
backoff_queue.go, unschedulable_pods.go, nominator.go) with the v1.34 defaults:
SchedulerQueueingHints (GA, locked on) and SchedulerPopFromBackoffQ (beta, on; switchable).

Time comes from a clock (kschedcore.framework.clock). The periodic flushes -- backoffQ to
activeQ every whole second, the unschedulable leftover flush every 30 s -- are not threads:
every public method first runs, in time order and each at its own tick time, the ticks that
have come due and would move a pod. Observed through the API this is the same queue as one
flushed by timers, on a virtual clock as well as a real one.

Pods are any objects with `key` ("namespace/name") and `priority`; `uid` (else the key),
`scheduler_name` (profile), `nominated_node_name` and `raw` (for spec.schedulingGates) are used
when present. The in-tree queueing hints need kschedcore.objects Pods and Nodes.
"""
import heapq
import itertools
import math
import threading
from collections import deque

from .clock import RealClock
from .cluster_events import (BACKOFF_COMPLETE, FORCE_ACTIVATE, SCHEDULE_ATTEMPT_FAILURE, ClusterEvent,
                             EventForceActivate, EventResource, EventUnschedulableTimeout,
                             EventUnscheduledPodAdd, EventUnscheduledPodUpdate, Queue, QueueSkip,
                             QueueingHintMap, match_any_cluster_event, match_cluster_events,
                             pod_scheduling_properties_change, scheduling_gates)
from .queueing_hints import default_queueing_hint_map

ACTIVE_Q = "activeQ"
BACKOFF_Q = "backoffQ"
UNSCHEDULABLE_PODS = "unschedulablePods"
IN_FLIGHT = "inFlight"
_ERROR_BACKOFF_Q = "errorBackoffQ"    # reported as backoffQ

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
BACKOFF_FLUSH_PERIOD = 1.0            # backoffQOrderingWindowDuration
LEFTOVER_FLUSH_PERIOD = 30.0

_POD_ADD, _POD_UPDATE = EventUnscheduledPodAdd.label, EventUnscheduledPodUpdate.label
_NOMINATING_EVENTS = (_POD_ADD, _POD_UPDATE)

# queueingStrategy
_QUEUE_SKIP, _QUEUE_AFTER_BACKOFF, _QUEUE_IMMEDIATELY = 0, 1, 2


class QueueError(ValueError):
    """A pod handed back to the queue is already in it (a caller bug upstream only logs)."""


class QueuedPodInfo:
    """A pod in the queue with its scheduling history (framework.QueuedPodInfo)."""
    __slots__ = ("pod", "key", "uid", "timestamp", "attempts", "unschedulable_count", "consecutive_errors_count",
                 "initial_attempt_timestamp", "backoff_expiration", "unschedulable_plugins",
                 "pending_plugins", "gating_plugin", "gating_plugin_events",
                 "_where", "_entry", "_pool_seq", "_pool_plugins")

    def __init__(self, pod, timestamp: float):
        self.pod = pod
        self.key = pod.key                         # namespace/name: the queues' key
        self.uid = _uid(pod)
        self.timestamp = timestamp                 # set on entry, reset after each failure
        self.attempts = 0
        self.unschedulable_count = 0
        self.consecutive_errors_count = 0
        self.initial_attempt_timestamp = None      # first entry into activeQ
        self.backoff_expiration = None             # cached until the next failure
        self.unschedulable_plugins = _NO_PLUGINS   # rejector plugins of the last attempt (frozensets)
        self.pending_plugins = _NO_PLUGINS
        self.gating_plugin = ""                    # the PreEnqueue plugin holding it
        self.gating_plugin_events = ()
        self._where = None
        self._entry = None
        self._pool_seq = 0
        self._pool_plugins = ()

    def set_pod(self, pod):
        """PodInfo.Update: a newer version of the same pod."""
        self.pod = pod
        self.key = pod.key
        self.uid = _uid(pod)

    @property
    def gated(self) -> bool:
        return bool(self.gating_plugin)

    @property
    def rejector_plugins(self) -> set:
        return self.unschedulable_plugins | self.pending_plugins

    def __repr__(self):
        return (f"QueuedPodInfo({self.key}, t={self.timestamp}, attempts={self.attempts}, "
                f"plugins={sorted(self.rejector_plugins)}, gated={self.gating_plugin or False})")


_NO_PLUGINS = frozenset()


def _uid(pod) -> str:
    return getattr(pod, "uid", None) or pod.key


def _is_pod(obj) -> bool:
    return hasattr(obj, "priority") and hasattr(obj, "key")


def priority_sort_key(p: QueuedPodInfo) -> tuple:
    """PrioritySort.Less as a key: higher priority first, then the earlier Timestamp."""
    return -(p.pod.priority or 0), p.timestamp


class _LessKey:
    """Turns a QueueSort Less(a, b) into a heap key; ties fall through to FIFO order."""
    __slots__ = ("p", "less")

    def __init__(self, p, less):
        self.p, self.less = p, less

    def __lt__(self, other):
        return self.less(self.p, other.p)

    def __eq__(self, other):
        return not self.less(self.p, other.p) and not self.less(other.p, self.p)


class _Heap:
    """A binary heap of QueuedPodInfos, FIFO among equal keys, with O(1) lazy removal.

    Entries are flat lists [*key, seq, pod info] so comparisons stay on plain numbers; a
    removed entry keeps its place with the pod info set to None."""
    __slots__ = ("_h", "_live", "_key", "_seq")

    def __init__(self, key, seq):
        self._h, self._live, self._key, self._seq = [], 0, key, seq

    def __len__(self):
        return self._live

    def push(self, p):
        entry = [*self._key(p), next(self._seq), p]
        p._entry = entry
        heapq.heappush(self._h, entry)
        self._live += 1

    def remove(self, p):
        p._entry[-1] = None
        p._entry = None
        self._live -= 1
        if len(self._h) > 64 and 2 * self._live < len(self._h):
            self._h = [e for e in self._h if e[-1] is not None]
            heapq.heapify(self._h)

    def peek(self):
        h = self._h
        while h and h[0][-1] is None:
            heapq.heappop(h)
        return h[0][-1] if h else None

    def pop(self):
        p = self.peek()
        if p is not None:
            heapq.heappop(self._h)
            p._entry = None
            self._live -= 1
        return p

    def items(self):
        """Live pods in pop order."""
        return [e[-1] for e in sorted(e for e in self._h if e[-1] is not None)]


class _Bucket:
    """One priority of the PrioritySort activeQ."""
    __slots__ = ("run", "heap", "live", "listed")

    def __init__(self):
        self.run, self.heap, self.live, self.listed = deque(), [], 0, False


class _PrioritySortQueue:
    """activeQ ordered by PrioritySort in O(1) for the usual arrivals.

    Per priority, entries [timestamp, seq, bucket, pod info] arriving in timestamp order are
    appended to a FIFO run; older ones (pods coming back with their old Timestamp) go to a
    small heap; the head is the smaller of the two. Same order as a heap on
    (-priority, timestamp, seq); removal is lazy as in _Heap."""
    __slots__ = ("_buckets", "_prios", "_live", "_entries", "_seq")

    def __init__(self, seq):
        self._buckets, self._prios, self._live, self._entries, self._seq = {}, [], 0, 0, seq

    def __len__(self):
        return self._live

    def push(self, p):
        prio = p.pod.priority or 0
        b = self._buckets.get(prio)
        if b is None:
            b = self._buckets[prio] = _Bucket()
        if not b.listed:
            heapq.heappush(self._prios, -prio)
            b.listed = True
        entry = [p.timestamp, next(self._seq), b, p]
        p._entry = entry
        if not b.run or p.timestamp >= b.run[-1][0]:
            b.run.append(entry)
        else:
            heapq.heappush(b.heap, entry)
        b.live += 1
        self._live += 1
        self._entries += 1

    def remove(self, p):
        entry = p._entry
        entry[-1] = None
        entry[2].live -= 1
        p._entry = None
        self._live -= 1
        if self._entries > 2 * self._live + 1024:
            self._compact()

    def _compact(self):
        for b in self._buckets.values():
            b.run = deque(e for e in b.run if e[-1] is not None)
            b.heap = [e for e in b.heap if e[-1] is not None]
            heapq.heapify(b.heap)
        self._entries = self._live

    def _head(self):
        """The head entry and the container holding it, dropping dead entries on the way."""
        prios = self._prios
        while prios:
            b = self._buckets[-prios[0]]
            if not b.live:
                heapq.heappop(prios)
                self._entries -= len(b.run) + len(b.heap)
                b.run.clear()
                b.heap.clear()
                b.listed = False
                continue
            run, heap = b.run, b.heap
            while run and run[0][-1] is None:
                run.popleft()
                self._entries -= 1
            while heap and heap[0][-1] is None:
                heapq.heappop(heap)
                self._entries -= 1
            if run and (not heap or run[0] < heap[0]):
                return run[0], b
            return heap[0], b
        return None, None

    def peek(self):
        entry, _ = self._head()
        return entry[-1] if entry else None

    def pop(self):
        entry, b = self._head()
        if entry is None:
            return None
        if b.run and b.run[0] is entry:
            b.run.popleft()
        else:
            heapq.heappop(b.heap)
        p = entry[-1]
        p._entry = None
        b.live -= 1
        self._live -= 1
        self._entries -= 1
        return p

    def items(self):
        """Live pods in pop order."""
        live = [(-prio, e[0], e[1], e[-1]) for prio, b in self._buckets.items()
                for e in itertools.chain(b.run, b.heap) if e[-1] is not None]
        return [x[-1] for x in sorted(live, key=lambda x: x[:3])]


class BarePod:
    """A nominated pod found in no queue: name, namespace and UID only (§5.3)."""
    __slots__ = ("namespace", "name", "uid")
    priority = 0
    labels = {}
    node_name = ""

    def __init__(self, key: str, uid: str):
        self.namespace, _, self.name = key.rpartition("/")
        self.uid = uid

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def __repr__(self):
        return f"BarePod({self.key}, uid={self.uid})"


class Nominator:
    """Pods nominated to nodes by preemption (nominator.go): node -> pods, in nomination order."""

    def __init__(self, pod_lister=None):
        self._pod_lister = pod_lister       # key -> current pod or None; None: no check
        self._by_node = {}                  # node name -> {uid: key}
        self._node_of = {}                  # uid -> node name

    def add(self, pod, node_name: str | None = None) -> None:
        """AddNominatedPod. node_name None: the pod's own status.nominatedNodeName (ModeNoop);
        a string overrides it, "" clearing the nomination (ModeOverride)."""
        uid = _uid(pod)
        if uid in self._node_of:
            self.delete(pod)
        if node_name is None:
            node_name = getattr(pod, "nominated_node_name", "") or ""
        if not node_name or not self._alive_and_pending(pod):
            return
        self._node_of[uid] = node_name
        self._by_node.setdefault(node_name, {})[uid] = pod.key

    def _alive_and_pending(self, pod) -> bool:
        if self._pod_lister is None:
            return True
        current = self._pod_lister(pod.key)
        return current is not None and not getattr(current, "node_name", "")

    def update(self, old_pod, new_pod) -> None:
        """UpdateNominatedPod: an update that neither sets nor clears nominatedNodeName keeps
        the node the scheduler nominated."""
        node_name = None
        if old_pod is not None and not _nnn(old_pod) and not _nnn(new_pod):
            node_name = self._node_of.get(_uid(old_pod))
        if old_pod is not None:
            self.delete(old_pod)
        self.add(new_pod, node_name)

    def delete(self, pod) -> None:
        uid = _uid(pod)
        node_name = self._node_of.pop(uid, None)
        if node_name is None:
            return
        pods = self._by_node[node_name]
        pods.pop(uid, None)
        if not pods:
            del self._by_node[node_name]

    def node_of(self, pod) -> str | None:
        return self._node_of.get(_uid(pod))

    def refs_for_node(self, node_name: str) -> list:
        """(key, uid) of the pods nominated to the node."""
        return [(key, uid) for uid, key in self._by_node.get(node_name, {}).items()]


def _nnn(pod) -> str:
    return getattr(pod, "nominated_node_name", "") or ""


def _tick_after(base: float, period: float, t: float) -> float:
    """The first tick base + k*period (k >= 0) strictly after t."""
    if t < base:
        return base
    return base + (math.floor((t - base) / period) + 1) * period


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
                 pod_lister=None):
        self._clock = clock or RealClock()
        self._virtual = getattr(self._clock, "virtual", False)   # never wait for virtual time
        self._initial_backoff, self._max_backoff = pod_initial_backoff, pod_max_backoff
        self._max_in_unschedulable = pod_max_in_unschedulable_pods_duration
        self._pop_from_backoff_q = pop_from_backoff_q
        self._init_sorting(sort_key, less)
        self._init_plugins(queueing_hints, pre_enqueue_plugins)
        self._pods = {}                    # key -> QueuedPodInfo in activeQ, backoffQ or the pool
        self._pool = {}                    # unschedulablePods: key -> QueuedPodInfo
        self._pool_by_plugin = {}          # rejector plugin ("" for none) -> {key: QueuedPodInfo}
        self._pool_seq = itertools.count(1)
        self._in_flight = {}               # uid -> (sequence number, QueuedPodInfo)
        self._in_flight_order = deque()    # (sequence number, uid), lazily pruned
        self._events = []                  # (sequence number, event, old, new) while pods are in flight
        self._events_head = 0
        self._flight_seq = itertools.count()
        self._cycle = 0
        self._move_request_cycle = -1
        self.nominator = Nominator(pod_lister)
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._waiters = 0
        self._closed = False
        self._init_ticks(self._clock.now())

    # --- construction ----------------------------------------------------------------------

    def _init_sorting(self, sort_key, less):
        if less is not None:
            sort_key = lambda p: (_LessKey(p, less),)
        elif sort_key is not None:
            sort_key = _as_tuple(sort_key)
        seq = itertools.count()
        if sort_key is None:
            sort_key = priority_sort_key
            self._active = _PrioritySortQueue(seq)
        else:
            self._active = _Heap(sort_key, seq)
        if self._pop_from_backoff_q:   # lessBackoffCompletedWithPriority
            backoff_key = lambda p: (self._backoff_time(p), *sort_key(p))
        else:
            backoff_key = lambda p: (self._backoff_time(p),)
        self._backoff = _Heap(backoff_key, seq)
        self._error_backoff = _Heap(lambda p: (self._backoff_time(p),), seq)
        self._timeouts = _Heap(lambda p: (p.timestamp,), seq)   # pool pods the leftover flush may move
        self._heaps = {ACTIVE_Q: self._active, BACKOFF_Q: self._backoff, _ERROR_BACKOFF_Q: self._error_backoff}

    def _init_plugins(self, queueing_hints, pre_enqueue_plugins):
        if queueing_hints is None:
            queueing_hints = default_queueing_hint_map()
        if isinstance(queueing_hints, QueueingHintMap) or not _is_profile_map(queueing_hints):
            queueing_hints = {None: queueing_hints}
        self._hint_maps = queueing_hints
        if pre_enqueue_plugins is None:
            pre_enqueue_plugins = [SchedulingGates()]
        if not isinstance(pre_enqueue_plugins, dict):
            pre_enqueue_plugins = {None: list(pre_enqueue_plugins)}
        self._pre_enqueue = pre_enqueue_plugins
        self._pre_enqueue_all = pre_enqueue_plugins[None] if list(pre_enqueue_plugins) == [None] else None
        # pluginToEventsMap, over every profile
        self._plugin_events = {}
        for m in self._hint_maps.values():
            for event, fns in m.items():
                for f in fns:
                    self._plugin_events.setdefault(f.plugin_name, []).append(event)
        self._matching_cache = {}
        self._event_plugins_cache = {}

    def _init_ticks(self, start: float):
        align = self._align
        self._backoff_tick_base = align(start + BACKOFF_FLUSH_PERIOD)
        self._leftover_tick_base = start   # wait.Until runs at once, then every 30 s
        self._next_backoff_tick = self._backoff_tick_base
        self._next_leftover_tick = start
        self._now = start
        self._begun_at = None

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
        uid = pod_or_uid if isinstance(pod_or_uid, str) else _uid(getattr(pod_or_uid, "pod", pod_or_uid))
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
            if not self._interested(event):
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
            for uid in list(self._in_flight):
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
                return BACKOFF_Q if p._where == _ERROR_BACKOFF_Q else p._where
            return IN_FLIGHT if any(q.key == key for _, q in self._in_flight.values()) else None

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
            return [p.pod for p in self._pool.values()]

    def in_flight_pods(self) -> list:
        with self._lock:
            return [p.pod for _, p in self._in_flight.values()]

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
                self._next_backoff_tick = tb + BACKOFF_FLUSH_PERIOD
            elif tl is not None and tl <= now:
                self._at(tl, self._flush_leftover)
                self._next_leftover_tick = tl + LEFTOVER_FLUSH_PERIOD
            else:
                break
        self._now = now
        # ticks up to now had nothing to move; new work can only be due after now
        self._next_backoff_tick = max(self._next_backoff_tick,
                                      _tick_after(self._backoff_tick_base, BACKOFF_FLUSH_PERIOD, now))
        self._next_leftover_tick = max(self._next_leftover_tick,
                                       _tick_after(self._leftover_tick_base, LEFTOVER_FLUSH_PERIOD, now))

    def _at(self, t, flush):
        self._now = t
        flush()

    def _next_backoff_flush(self):
        """The first backoff tick at which a backoffQ head has finished backing off."""
        heads = [p for p in (self._backoff.peek(), self._error_backoff.peek()) if p is not None]
        if not heads:
            return None
        expiry = min(self._backoff_time(p) for p in heads)
        tick = _tick_after(self._backoff_tick_base, BACKOFF_FLUSH_PERIOD, expiry)
        return max(tick, self._next_backoff_tick)

    def _next_leftover_flush(self):
        """The first leftover tick at which the oldest pool pod is over the time limit."""
        p = self._timeouts.peek()
        if p is None:
            return None
        tick = _tick_after(self._leftover_tick_base, LEFTOVER_FLUSH_PERIOD, p.timestamp + self._max_in_unschedulable)
        return max(tick, self._next_leftover_tick)

    def _align(self, t: float) -> float:
        """alignToWindow: whole seconds when popping from backoffQ is on."""
        return math.floor(t) if self._pop_from_backoff_q else t

    def _backoff_time(self, p: QueuedPodInfo) -> float:
        """getBackoffTime: (Timestamp + backoff) aligned, cached until the next failure."""
        if self._max_backoff == 0:
            return -math.inf
        count = p.consecutive_errors_count or p.unschedulable_count
        if count == 0:
            return -math.inf
        if p.backoff_expiration is None:
            p.backoff_expiration = self._align(p.timestamp + self.backoff_duration(count))
        return p.backoff_expiration

    def backoff_duration(self, count: int) -> float:
        """initial * 2^(count-1), capped at the maximum."""
        if count <= 0:
            return 0.0
        if count > 64:
            return self._max_backoff
        return min(self._initial_backoff * (1 << (count - 1)), self._max_backoff)

    def _is_backing_off(self, p: QueuedPodInfo) -> bool:
        return self._backoff_time(p) >= self._align(self._now)

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
        if p._where == UNSCHEDULABLE_PODS:
            self._pool_unindex(p)
            del self._pool[p.key]
        else:
            self._heap_of(p._where).remove(p)
        del self._pods[p.key]
        p._where = None

    def _place(self, p: QueuedPodInfo, where: str):
        """Puts p into a heap sub-queue, replacing whatever held its key (AddOrUpdate)."""
        old = self._pods.get(p.key)
        if old is not None:
            self._detach(old)
        self._heap_of(where).push(p)
        self._pods[p.key] = p
        p._where = where
        if self._waiters and (where == ACTIVE_Q or (where == BACKOFF_Q and self._pop_from_backoff_q)):
            self._cond.notify_all()

    def _pool_put(self, p: QueuedPodInfo):
        """unschedulablePods.addOrUpdate; also re-indexes p after its plugins or gate changed."""
        old = self._pods.get(p.key)
        if old is p and p._where == UNSCHEDULABLE_PODS:
            self._pool_unindex(p)
        else:
            if old is not None:
                self._detach(old)
            self._pods[p.key] = p
            self._pool[p.key] = p
            p._where = UNSCHEDULABLE_PODS
            p._pool_seq = next(self._pool_seq)
        p._pool_plugins = tuple(p.unschedulable_plugins | p.pending_plugins) or ("",)
        for name in p._pool_plugins:
            self._pool_by_plugin.setdefault(name, {})[p.key] = p
        if not p.gated or match_any_cluster_event(EventUnschedulableTimeout, p.gating_plugin_events):
            self._timeouts.push(p)

    def _pool_unindex(self, p: QueuedPodInfo):
        for name in p._pool_plugins:
            bucket = self._pool_by_plugin[name]
            del bucket[p.key]
            if not bucket:
                del self._pool_by_plugin[name]
        if p._entry is not None:
            self._timeouts.remove(p)

    # --- moving pods -----------------------------------------------------------------------

    def _move_to_active_q(self, p: QueuedPodInfo, event: str) -> bool:
        """moveToActiveQ: PreEnqueue, then activeQ, or the pool if gated."""
        if not (self._pop_from_backoff_q and event == BACKOFF_COMPLETE):
            self._run_pre_enqueue(p)
        if p.gating_plugin:
            return self._hold_gated(p)
        if p.initial_attempt_timestamp is None:
            p.initial_attempt_timestamp = self._now
        self._place(p, ACTIVE_Q)
        if event in _NOMINATING_EVENTS and (_nnn(p.pod) or self.nominator.node_of(p.pod) is not None):
            self.nominator.add(p.pod)
        return True

    def _hold_gated(self, p: QueuedPodInfo) -> bool:
        """A gated pod waits in the pool, unless its key is queued already."""
        old = self._pods.get(p.key)
        if old is None or (old is p and p._where == UNSCHEDULABLE_PODS):
            self._pool_put(p)
        return False

    def _move_to_backoff_q(self, p: QueuedPodInfo) -> bool:
        """moveToBackoffQ: PreEnqueue runs on entry when pods may be popped from backoffQ."""
        if self._pop_from_backoff_q:
            self._run_pre_enqueue(p)
            if p.gated:
                return self._hold_gated(p)
        self._place(p, BACKOFF_Q if p.unschedulable_plugins or p.pending_plugins else _ERROR_BACKOFF_Q)
        return True

    def _requeue(self, p: QueuedPodInfo, strategy: int, event: str) -> str:
        """requeuePodWithQueueingStrategy: returns the sub-queue p went to."""
        if strategy == _QUEUE_SKIP:
            self._pool_put(p)
            return UNSCHEDULABLE_PODS
        if strategy == _QUEUE_AFTER_BACKOFF and self._is_backing_off(p):
            return BACKOFF_Q if self._move_to_backoff_q(p) else UNSCHEDULABLE_PODS
        return ACTIVE_Q if self._move_to_active_q(p, event) else UNSCHEDULABLE_PODS

    def _run_pre_enqueue(self, p: QueuedPodInfo):
        """runPreEnqueuePlugins: the gating plugin first, then the rest in order; the first
        rejection gates the pod and joins its rejector plugins."""
        plugins = self._pre_enqueue_all
        if plugins is None:
            plugins = self._profile_value(self._pre_enqueue, p) or ()
        gating = p.gating_plugin
        if gating:
            first = next((pl for pl in plugins if pl.name == gating), None)
            if first is not None and not self._pre_enqueue_passes(first, p):
                return
        for pl in plugins:
            if pl.name != gating and not self._pre_enqueue_passes(pl, p):
                return
        p.gating_plugin = ""

    def _pre_enqueue_passes(self, plugin, p: QueuedPodInfo) -> bool:
        if plugin.pre_enqueue(p.pod) is None:
            return True
        p.unschedulable_plugins = p.unschedulable_plugins | {plugin.name}
        p.gating_plugin = plugin.name
        p.gating_plugin_events = self._plugin_events.get(plugin.name, ())
        return False

    def _pop_one(self) -> QueuedPodInfo | None:
        while True:
            p = self._active.pop()
            if p is None and self._pop_from_backoff_q:
                p = self._backoff.pop()
            if p is None:
                return None
            del self._pods[p.key]
            p._where = None
            p.attempts += 1
            if p.uid in self._in_flight:
                continue   # the same pod twice: upstream discards it
            seq = next(self._flight_seq)
            self._in_flight[p.uid] = (seq, p)
            self._in_flight_order.append((seq, p.uid))
            self._cycle += 1
            p._where = IN_FLIGHT
            p.unschedulable_plugins = p.pending_plugins = _NO_PLUGINS
            p.gating_plugin, p.gating_plugin_events = "", ()
            return p

    def _done(self, uid: str):
        entry = self._in_flight.pop(uid, None)
        if entry is None:
            return
        if entry[1]._where == IN_FLIGHT:
            entry[1]._where = None
        order = self._in_flight_order
        while order and self._in_flight.get(order[0][1], (None,))[0] != order[0][0]:
            order.popleft()
        if not order:
            self._events.clear()
            self._events_head = 0
            return
        # events before the oldest in-flight pod concern nobody any more
        oldest, events, head = order[0][0], self._events, self._events_head
        while head < len(events) and events[head][0] < oldest:
            head += 1
        if head > 1024 and 2 * head > len(events):
            del events[:head]
            head = 0
        self._events_head = head

    def _record_event_if_any_in_flight(self, event, old_obj, new_obj):
        if self._in_flight:
            self._events.append((next(self._flight_seq), event, old_obj, new_obj))

    def _record_events_if_pod_in_flight(self, uid, old_obj, new_obj, events) -> bool:
        if uid not in self._in_flight:
            return False
        for event in events:
            self._events.append((next(self._flight_seq), event, old_obj, new_obj))
        return True

    def _events_since(self, seq: int):
        return [e for e in itertools.islice(self._events, self._events_head, None) if e[0] > seq]

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
            where = BACKOFF_Q if old._where == _ERROR_BACKOFF_Q else old._where
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
            return _QUEUE_AFTER_BACKOFF
        entry = self._in_flight.get(p.uid)
        if entry is None:
            return _QUEUE_AFTER_BACKOFF    # upstream reports an error and retries
        strategy = _QUEUE_SKIP
        for _, event, old_obj, new_obj in self._events_since(entry[0]):
            s = self._worth_requeuing(p, event, old_obj, new_obj)
            if s == _QUEUE_IMMEDIATELY:
                return s
            if s == _QUEUE_AFTER_BACKOFF:
                strategy = s
                if not p.pending_plugins:
                    return s
        return strategy

    def _update(self, old_pod, new_pod):
        events = _pod_update_events(new_pod, old_pod)
        if self._record_events_if_pod_in_flight(_uid(new_pod), old_pod, new_pod, events):
            return
        if old_pod is not None:
            p = self._pods.get(old_pod.key)
            if p is not None and p._where != UNSCHEDULABLE_PODS:
                where = p._where
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
            went = self._requeue(p, self._worth_requeuing(p, event, old_pod, new_pod), event.label)
            if went == ACTIVE_Q or (went == BACKOFF_Q and self._pop_from_backoff_q):
                break

    def _activate(self, pod):
        p = self._pods.get(pod.key)
        if p is None or p._where == ACTIVE_Q:
            self._record_events_if_pod_in_flight(_uid(pod), None, pod, [EventForceActivate])
            self._move_request_cycle = self._cycle
            return
        if p._where != UNSCHEDULABLE_PODS:
            self._detach(p)   # out of backoffQ first, so no flush takes it meanwhile
        self._move_to_active_q(p, FORCE_ACTIVATE)

    # --- cluster events --------------------------------------------------------------------

    def _interested(self, event: ClusterEvent) -> bool:
        """isEventOfInterest: a wildcard, or an event some plugin registered."""
        return event.is_wildcard or bool(self._event_plugins(event))

    def _event_plugins(self, event: ClusterEvent) -> frozenset:
        """Plugins with a hint for this event in any profile."""
        plugins = self._event_plugins_cache.get(event)
        if plugins is None:
            plugins = frozenset(f.plugin_name for m in self._hint_maps.values() for f in self._matching(m, event))
            self._event_plugins_cache[event] = plugins
        return plugins

    def _matching(self, hint_map, event: ClusterEvent) -> list:
        """The hint functions registered for events that the incoming event matches."""
        cache_key = (id(hint_map), event)
        fns = self._matching_cache.get(cache_key)
        if fns is None:
            fns = [f for registered, hs in hint_map.items() if match_cluster_events(registered, event) for f in hs]
            self._matching_cache[cache_key] = fns
        return fns

    def _candidates(self, event: ClusterEvent) -> list:
        """Pool pods a hint could move: a rejector plugin hears the event (all for a wildcard),
        in pool order. The others would all get QueueSkip."""
        if event.is_wildcard:
            return list(self._pool.values())
        by_plugin = self._pool_by_plugin
        buckets = [by_plugin[n] for n in self._event_plugins(event) if n in by_plugin]
        if "" in by_plugin:
            buckets.append(by_plugin[""])   # no rejector plugin: any event retries them
        if len(buckets) <= 1:
            return list(buckets[0].values()) if buckets else []
        pods = {p.key: p for b in buckets for p in b.values()}
        return sorted(pods.values(), key=lambda p: p._pool_seq)

    def _move_pods(self, pods, event: ClusterEvent, old_obj, new_obj):
        """movePodsToActiveOrBackoffQueue."""
        if not self._interested(event):
            return
        for p in pods:
            if p.gated and not match_any_cluster_event(event, p.gating_plugin_events):
                continue   # the gating plugin does not wait for this event
            strategy = self._worth_requeuing(p, event, old_obj, new_obj)
            if strategy == _QUEUE_SKIP:
                continue
            self._detach(p)
            self._requeue(p, strategy, event.label)
        self._move_request_cycle = self._cycle
        self._record_event_if_any_in_flight(event, old_obj, new_obj)

    def _worth_requeuing(self, p: QueuedPodInfo, event: ClusterEvent, old_obj, new_obj) -> int:
        """isPodWorthRequeuing: the rejector plugins' hints for this event."""
        unschedulable, pending = p.unschedulable_plugins, p.pending_plugins
        if not unschedulable and not pending:
            return _QUEUE_AFTER_BACKOFF
        if event.is_wildcard:
            if new_obj is not None and (not _is_pod(new_obj) or _uid(new_obj) != p.uid):
                return _QUEUE_SKIP   # a wildcard aimed at another pod
            return _QUEUE_AFTER_BACKOFF
        hint_map = self._profile_value(self._hint_maps, p)
        if hint_map is None:
            return _QUEUE_AFTER_BACKOFF
        strategy = _QUEUE_SKIP
        for f in self._matching(hint_map, event):
            name = f.plugin_name
            if name not in unschedulable and name not in pending:
                continue
            if _run_hint(f.hint, p.pod, old_obj, new_obj) == QueueSkip:
                continue
            if name in pending:
                return _QUEUE_IMMEDIATELY
            if not pending:
                return _QUEUE_AFTER_BACKOFF
            strategy = _QUEUE_AFTER_BACKOFF
        return strategy

    @staticmethod
    def _profile_value(per_profile: dict, p: QueuedPodInfo):
        if None in per_profile and len(per_profile) == 1:
            return per_profile[None]
        name = getattr(p.pod, "scheduler_name", None)
        return per_profile.get(name, per_profile.get(None))

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
        now, pods = self._now, []
        while (p := self._timeouts.peek()) is not None and now - p.timestamp > self._max_in_unschedulable:
            self._timeouts.remove(p)
            pods.append(p)
        if pods:
            self._move_pods(sorted(pods, key=lambda p: p._pool_seq), EventUnschedulableTimeout, None, None)


class SchedulingGates:
    """The SchedulingGates PreEnqueue plugin: pods with spec.schedulingGates wait (§8.5)."""
    name = "SchedulingGates"

    def pre_enqueue(self, pod):
        try:
            if not pod.raw["spec"].get("schedulingGates"):
                return None
        except (AttributeError, KeyError, TypeError):
            pass
        gates = scheduling_gates(pod)
        return f"waiting for scheduling gates: [{' '.join(gates)}]" if gates else None


def _as_tuple(sort_key):
    """A user's QueueSort key as the tuple the heaps flatten."""
    def key(p):
        k = sort_key(p)
        return k if isinstance(k, tuple) else (k,)
    return key


def _run_hint(hint, pod, old_obj, new_obj):
    try:
        return hint(pod, old_obj, new_obj)
    except Exception:   # a hint's error counts as Queue, so no pod gets stuck
        return Queue


def _is_profile_map(value) -> bool:
    return isinstance(value, dict) and all(isinstance(v, QueueingHintMap) for v in value.values()) and value


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
