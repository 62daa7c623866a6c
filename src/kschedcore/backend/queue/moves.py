"""The queue's moves: where a pod goes when it enters, fails, is updated, is activated, or hears
a cluster event (scheduling_queue.go moveToActiveQ, requeuePodWithQueueingStrategy,
AddUnschedulableIfNotPresent, Update, Activate, movePodsToActiveOrBackoffQueue, the flushes).
The SchedulingQueue calls them under its lock, with `now` its current (tick) time."""
from ...framework.cluster_events import (BACKOFF_COMPLETE, FORCE_ACTIVATE, SCHEDULE_ATTEMPT_FAILURE, ClusterEvent,
                                         EventForceActivate, EventUnschedulableTimeout, EventUnscheduledPodAdd,
                                         EventUnscheduledPodUpdate, match_any_cluster_event)
from .hints import QUEUE_AFTER_BACKOFF, QUEUE_IMMEDIATELY, QUEUE_SKIP
from .nominator import nominated_node_name
from .queued_pod_info import ACTIVE_Q, BACKOFF_Q, ERROR_BACKOFF_Q, UNSCHEDULABLE_PODS, QueuedPodInfo, QueueError, pod_uid

_POD_ADD, _POD_UPDATE = EventUnscheduledPodAdd.label, EventUnscheduledPodUpdate.label
_NOMINATING_EVENTS = (_POD_ADD, _POD_UPDATE)


class Moves:
    def __init__(self, parts, in_flight, hints, pre_enqueue, backoff, nominator, pop_from_backoff_q: bool,
                 max_in_unschedulable: float, start: float, update_events):
        self.parts, self.in_flight, self.hints, self.pre_enqueue = parts, in_flight, hints, pre_enqueue
        self.backoff, self.nominator = backoff, nominator
        self.pop_from_backoff_q, self.max_in_unschedulable = pop_from_backoff_q, max_in_unschedulable
        self.update_events = update_events      # (new pod, old pod) -> the update's ClusterEvents
        self.now = start
        self.cycle = 0                          # scheduling cycles (pops) so far
        self.move_request_cycle = -1

    def is_backing_off(self, p: QueuedPodInfo) -> bool:
        return self.backoff.backing_off(p, self.now)

    def to_active_q(self, p: QueuedPodInfo, event: str) -> bool:
        """moveToActiveQ: PreEnqueue, then activeQ, or the pool if gated."""
        if not (self.pop_from_backoff_q and event == BACKOFF_COMPLETE):
            self.pre_enqueue.run(p)
        if p.gating_plugin:
            return self._hold_gated(p)
        if p.initial_attempt_timestamp is None:
            p.initial_attempt_timestamp = self.now
        self.parts.place(p, ACTIVE_Q)
        if event in _NOMINATING_EVENTS and (nominated_node_name(p.pod) or self.nominator.node_of(p.pod) is not None):
            self.nominator.add(p.pod)
        return True

    def _hold_gated(self, p: QueuedPodInfo) -> bool:
        """A gated pod waits in the pool, unless its key is queued already."""
        old = self.parts.get(p.key)
        if old is None or (old is p and p.part == UNSCHEDULABLE_PODS):
            self.parts.put_in_pool(p)
        return False

    def _to_backoff_q(self, p: QueuedPodInfo) -> bool:
        """moveToBackoffQ: PreEnqueue runs on entry when pods may be popped from backoffQ."""
        if self.pop_from_backoff_q:
            self.pre_enqueue.run(p)
            if p.gated:
                return self._hold_gated(p)
        self.parts.place(p, BACKOFF_Q if p.unschedulable_plugins or p.pending_plugins else ERROR_BACKOFF_Q)
        return True

    def requeue(self, p: QueuedPodInfo, strategy: int, event: str) -> str:
        """requeuePodWithQueueingStrategy: returns the sub-queue p went to."""
        if strategy == QUEUE_SKIP:
            self.parts.put_in_pool(p)
            return UNSCHEDULABLE_PODS
        if strategy == QUEUE_AFTER_BACKOFF and self.is_backing_off(p):
            return BACKOFF_Q if self._to_backoff_q(p) else UNSCHEDULABLE_PODS
        return ACTIVE_Q if self.to_active_q(p, event) else UNSCHEDULABLE_PODS

    # --- failed attempts, updates, activation ----------------------------------------------

    def add_unschedulable(self, p, unschedulable_plugins, pending_plugins, pod) -> str:
        if pod is not None:
            p.set_pod(pod)
        if unschedulable_plugins is not None:
            p.unschedulable_plugins = frozenset(unschedulable_plugins)
        if pending_plugins is not None:
            p.pending_plugins = frozenset(pending_plugins)
        old = self.parts.get(p.key)
        if old is not None:
            where = BACKOFF_Q if old.part == ERROR_BACKOFF_Q else old.part
            raise QueueError(f"Pod {p.key} is already present in {where}")
        if p.unschedulable_plugins or p.pending_plugins:
            p.unschedulable_count += 1
            p.consecutive_errors_count = 0
        else:
            p.consecutive_errors_count += 1   # an error, not a rejection
        p.timestamp = self.now
        p.backoff_expiration = None
        return self.requeue(p, self._hint_for_in_flight_pod(p), SCHEDULE_ATTEMPT_FAILURE)

    def _hint_for_in_flight_pod(self, p: QueuedPodInfo) -> int:
        """determineSchedulingHintForInFlightPod: replay the events seen while in flight."""
        if not p.unschedulable_plugins and not p.pending_plugins:
            return QUEUE_AFTER_BACKOFF
        seq = self.in_flight.seq_of(p.uid)
        if seq is None:
            return QUEUE_AFTER_BACKOFF    # upstream reports an error and retries
        strategy = QUEUE_SKIP
        for _, event, old_obj, new_obj in self.in_flight.events_since(seq):
            s = self.hints.worth_requeuing(p, event, old_obj, new_obj)
            if s == QUEUE_IMMEDIATELY:
                return s
            if s == QUEUE_AFTER_BACKOFF:
                strategy = s
                if not p.pending_plugins:
                    return s
        return strategy

    def update(self, old_pod, new_pod):
        events = self.update_events(new_pod, old_pod)
        if self.in_flight.record_for(pod_uid(new_pod), old_pod, new_pod, events):
            return
        if old_pod is not None:
            p = self.parts.get(old_pod.key)
            if p is not None and self.parts.replace(p, new_pod):
                self.nominator.update(old_pod, new_pod)
                return
        p = self.parts.pool.get(new_pod.key)
        if p is None:
            self.to_active_q(QueuedPodInfo(new_pod, self.now), _POD_UPDATE)
            return
        p.set_pod(new_pod)
        self.nominator.update(old_pod, new_pod)
        for event in events:
            went = self.requeue(p, self.hints.worth_requeuing(p, event, old_pod, new_pod), event.label)
            if went == ACTIVE_Q or (went == BACKOFF_Q and self.pop_from_backoff_q):
                break

    def activate(self, pod):
        p = self.parts.get(pod.key)
        if p is None or p.part == ACTIVE_Q:
            self.in_flight.record_for(pod_uid(pod), None, pod, [EventForceActivate])
            self.move_request_cycle = self.cycle
            return
        if p.part != UNSCHEDULABLE_PODS:
            self.parts.detach(p)   # out of backoffQ first, so no flush takes it meanwhile
        self.to_active_q(p, FORCE_ACTIVATE)

    # --- cluster events --------------------------------------------------------------------

    def candidates(self, event: ClusterEvent) -> list:
        """Pool pods a hint could move: a rejector plugin hears the event (all for a wildcard),
        in pool order. The others would all get QueueSkip."""
        if event.is_wildcard:
            return list(self.parts.pool.pods.values())
        return self.parts.pool.candidates(self.hints.event_plugins(event))

    def move_pods(self, pods, event: ClusterEvent, old_obj, new_obj):
        """movePodsToActiveOrBackoffQueue."""
        if not self.hints.interested(event):
            return
        for p in pods:
            if p.gated and not match_any_cluster_event(event, p.gating_plugin_events):
                continue   # the gating plugin does not wait for this event
            strategy = self.hints.worth_requeuing(p, event, old_obj, new_obj)
            if strategy == QUEUE_SKIP:
                continue
            self.parts.detach(p)
            self.requeue(p, strategy, event.label)
        self.move_request_cycle = self.cycle
        self.in_flight.record_if_any(event, old_obj, new_obj)

    # --- periodic flushes ------------------------------------------------------------------

    def flush_backoff_completed(self):
        """flushBackoffQCompleted: pods whose backoff ended move to activeQ."""
        for p in self.parts.backed_off(self.is_backing_off):
            self.to_active_q(p, BACKOFF_COMPLETE)

    def flush_leftover(self):
        """flushUnschedulablePodsLeftover: pool pods older than the limit move out."""
        pods = self.parts.pool.expired(self.now, self.max_in_unschedulable)
        if pods:
            self.move_pods(pods, EventUnschedulableTimeout, None, None)
