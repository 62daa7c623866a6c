"""The two loops of kube-scheduler on a virtual clock: event intake and scheduling.

Event intake updates the cache (through the Scheduler) and the queue, and fires the cluster
events that move unschedulable pods back (queueing hints, §8.4). The scheduling loop pops a
pod, runs a cycle on the current cache, assumes the pod and hands it to the binding cycle
(binding.py); a binding completes `bind_latency` seconds later on the virtual clock.

`run_until_idle()` schedules until nothing can progress: when activeQ is empty it advances
the clock to the next binding completion or queue flush (backoff expiry, the 5-minute
unschedulable leftover), as the real scheduler's timers would.

Preemption (§9): DefaultPreemption chooses victims and a node in PostFilter (the Scheduler
is told that a loop acts on them); the loop deletes the victims and nominates the pod there.
Nominated pods of at least the incoming pod's priority count on their nodes in every other
pod's cycle (the queue's Nominator holds them; the cache's NominatedUsage counts them), and a
nominated pod tries its node first. PodDisruptionBudgets keep the status they were given
(kube-scheduler deletes victims without touching them; no disruption controller runs here).
Live mode on real threads is live.py, on this same state machine.
"""
import inspect
import itertools
from collections.abc import Callable
from dataclasses import dataclass

from ..backend.cache.nominated import NominatedUsage
from ..backend.queue import Nominator, SchedulingQueue
from ..framework.cluster_events import (ActionType, EventAssignedPodAdd, EventAssignedPodDelete, EventNodeAdd,
                                        EventNodeDelete, EventResource, build_queueing_hint_map,
                                        node_scheduling_properties_change, with_hint)
from ..framework.cycle import EXTENDER_PLUGIN
from ..util.heap import fix_mmap_threshold
from ..errors import NotFoundError, StateError, ValidationError
from ..objects.node import Node, parse_node
from ..util.clock import VirtualClock
from ..util.collector import gc_frozen
from . import evictions, runs
from .binding import BindingCycle, BindingPlugins
from .dra_events import claim_events
from .result import DELETING_REASON

__all__ = ["Outcome", "Simulation", "SimulationListener"]


@dataclass(slots=True)
class Outcome:
    """A pod's last scheduling attempt."""
    pod: str
    node: str | None                # bound node (None: not bound)
    attempts: int
    message: str | None = None      # the last failure (FitError with PostFilter part, or error)
    result: object = None           # the ScheduleResult of the last failed cycle


def _act_on_post_filter(sim: "Simulation", pod, result) -> None:
    """A PostFilter's nomination (DefaultPreemption's, or a custom one's): the victims are
    deleted through the event path, counted against their budgets, and the pod nominated
    there. No candidate at all clears an earlier nomination."""
    nomination = result.nomination
    if nomination is None:
        if not result.preemption_candidates:
            sim.queue.delete_nominated_pod_if_exists(pod)
            sim._written_nnn.pop(pod.key, None)    # the status patch clears it
        return
    # budgets keep the status they were given: kube-scheduler deletes victims without
    # touching them, and no disruption controller runs here to recount them
    sim.listener.preempted(pod.key, nomination.nominated_node_name, list(nomination.victims))
    sim._written_nnn[pod.key] = nomination.nominated_node_name
    sim.queue.add_nominated_pod(pod, nomination.nominated_node_name)
    sim.preemptions.append((pod.key, nomination.nominated_node_name, list(nomination.victims)))
    victims = [k for k in nomination.victims if k in sim.pods]
    if victims:
        sim.sched.handle.preempting.add(pod.key)
        sim._preempted.append((pod.key, victims))


def _left_nominated(sim: "Simulation", pod) -> None:
    """A pod whose status.nominatedNodeName is set leaves the pending pods (bound, or
    deleted): as deletePodFromSchedulingQueue, AssignedPodDelete for the pods of lower or
    equal priority (the nominated pod counted for them on its node; in-flight pods hear it
    whatever their priority)."""
    node = sim._written_nnn.pop(pod.key, None)
    if node:
        prio = pod.priority
        sim.queue.move_all_to_active_or_backoff_queue(EventAssignedPodDelete, NominatedPod(pod, node), None,
                                                      precheck=lambda p: p.priority <= prio)


def bound_pods_left(sim: "Simulation", keys: list) -> None:
    """delete_pod of bound pods without resource claims while the loop is quiet -- no binding
    in flight, no pod nominated, no status patch pending, no claim change to tell (a replay's
    quiet stretch, replay/quiet.py) -- once the cache has let them go (Cache.remove_taken_off):
    the loop's part, without the branches that would find nothing to do. Their events are the
    caller's to send (assigned_pod_deleted), each where the queue's cycle count is its own."""
    pods, bound, outcomes, bindings = sim.pods, sim.bound, sim.outcomes, sim.bindings
    for key in keys:
        del pods[key], bound[key]
        outcomes.pop(key, None)
        pinfo = bindings.forget(key)
        if pinfo is not None:
            sim.queue.done(pinfo.uid)


def assigned_pod_deleted(sim: "Simulation", pod, node) -> None:
    """The cluster event of a bound pod's deletion (delete_pod's, for bound_pods_left)."""
    sim.queue.move_all_to_active_or_backoff_queue(EventAssignedPodDelete, _on_node(pod, node), None)


class Simulation:
    """A Scheduler driven by kube-scheduler's queue, binding cycle and cluster events.

    binder(pod, node_name) -> None or an error message: the Bind call (default: succeeds).
    bind_latency: virtual seconds a binding cycle takes. plugins: binding-cycle plugins
    (binding.py), run before those the profiles enable. Other keywords go to SchedulingQueue
    (pod_initial_backoff, pod_max_backoff, ...). bind_dispatch(key, pinfo): starts a binding
    elsewhere (live mode's thread pool), which reports back through finish_binding.
    listener: told of what happens to pods (SimulationListener's methods), e.g. a replay's records.
    fix_heap: fix glibc's mmap threshold for the process (util/heap.py), for good: every later
    allocation of 128 KiB or more is then mapped and its pages faulted in anew (a 480 KiB NumPy
    copy: 6 us before, 270 us after). Off by default: the soak under churn measures the same RSS
    with and without it.
    """

    def __init__(self, scheduler, *, clock=None, binder=None, bind_latency: float = 0.0, permit_plugins=(),
                 plugins=(), bind_dispatch=None, listener=None, fix_heap: bool = False, **queue_options):
        if fix_heap:
            fix_mmap_threshold()
        self.sched = scheduler
        scheduler.cache.dra.log = []      # claim changes become cluster events (dra_events.py)
        self.listener = listener or SimulationListener()
        self.clock = clock or VirtualClock()
        self.seq = itertools.count()
        self.usage = NominatedUsage(scheduler.cache)
        #: status.nominatedNodeName of the pods preemption nominated (the one store)
        self.nominator = Nominator(listener=self.usage)
        scheduler.handle.nominated_node = self.nominator.node_of
        self.queue = SchedulingQueue(self.clock, nominator=self.nominator, **self._queue_plugins(queue_options))
        self.binder = binder
        self.bind_latency = bind_latency
        self.bound = {}                 # pod key -> node name (binding confirmed)
        self.binding: dict[str, str] = {}  # pod key -> node name (assumed: waiting at Permit or binding)
        given = [*permit_plugins, *plugins]
        sets = {name: BindingPlugins([*given, *fw.binding_plugins]) for name, fw in scheduler.profiles.items()}
        self.bindings = BindingCycle(self, sets, BindingPlugins(given), bind_dispatch)
        #: no binding-cycle plugin and no dispatch elsewhere: with no latency and no binder set,
        #: a binding can only succeed, at once
        self._binds_at_once = (not self.bindings.any_plugins and bind_dispatch is None
                               and not any(e.is_binder() for e in scheduler.cycles.extenders))
        self.outcomes: dict = {}        # pod key -> Outcome
        self.pods = {}                  # pod key -> Pod (every pod the simulation knows)
        self.preemptions: list = []     # (preemptor key, node, [victim keys])
        self.cycles = 0
        self.horizon_reached = False     # run_until_idle left work beyond its horizon
        self._preempted: list = []      # (preemptor key, victim keys) nominated this cycle
        self._last_victims: list = []   # (cycle it was chosen in, victim key): deleted a cycle later
        self._late_bindings: list = []  # (key, QueuedPodInfo): a nominated pod's Bind, landing once the queue drains
        self._activations: list = []    # (cycle, key): preemptors to activate a cycle later
        #: victim_deleter(key): a victim's delete made elsewhere (live mode: the API server, whose
        #: watch then deletes it here); None: deleted here at once, as client-go's fake clientset
        self.victim_deleter: Callable[[str], None] | None = None
        self._written_nnn: dict[str, str] = {}  # pod key -> status.nominatedNodeName as last written
        self.copies_at_once, self.last_template = 0, None     # runs of copies at most this long (runs.py)
        scheduler.run_by_loop()
        for pl in scheduler.cache.placements():    # pods the Scheduler holds already
            self.pods[pl.pod.key] = pl.pod
            self.bound[pl.pod.key] = pl.node
        for plugin in self._handle_users(given):
            plugin.set_handle(self)        # plugins that list the cluster's pods or read the clock
        for pod in scheduler.pending:      # pods queued on the Scheduler before
            self.add_pod(pod)
        scheduler.pending = []

    def _queue_plugins(self, options) -> dict:
        """The profiles' QueueSort (the same in every profile), PreEnqueue plugins and
        queueing hint maps, as the queue takes them."""
        unknown = sorted(set(options) - _QUEUE_OPTIONS)
        if unknown:
            raise ValidationError("simulation", unknown[0], "no such option (the queue takes: "
                                  + ", ".join(sorted(_QUEUE_OPTIONS)) + ")")
        profiles = self.sched.profiles
        sort = next(iter(profiles.values())).queue_sort
        options.setdefault("less", sort.less if sort is not None else None)
        pre_enqueue = {name: fw.pre_enqueue for name, fw in profiles.items()}
        hints = {name: build_queueing_hint_map(self._registrations(fw)) for name, fw in profiles.items()}
        if len(profiles) == 1:          # one profile serves every pod (unknown schedulerNames too)
            pre_enqueue, hints = next(iter(pre_enqueue.values())), next(iter(hints.values()))
        options.setdefault("pre_enqueue_plugins", pre_enqueue)
        options.setdefault("queueing_hints", hints)
        return options

    def _registrations(self, fw) -> dict:
        """The profile's EventsToRegister; with extenders, the "Extender" pseudo-plugin's too:
        every event, always Queue (framework.go's defaultEnqueueExtension)."""
        out = fw.enqueue_registrations()
        if self.sched.cycles.extenders:
            out[EXTENDER_PLUGIN] = [with_hint(EventResource.WildCard, ActionType.All)]
        return out

    def _handle_users(self, given) -> list:
        plugins = {id(p): p for fw in self.sched.profiles.values()
                   for p in [*fw.binding_plugins, *fw.pre_enqueue, fw.queue_sort, *fw.custom.pre_filters]}
        found = dict.fromkeys(p for p in [*given, *plugins.values()] if hasattr(p, "set_handle"))
        return list(found)

    # ---- event intake ------------------------------------------------------------------------
    def add_pod(self, pod) -> None:
        """A pod appears: bound pods join the cache, others the queue."""
        pod = self.sched.parse_pod(pod)
        if pod.terminal:
            return
        self.pods[pod.key] = pod
        if pod.node_name:
            self.sched.add_pod(pod)
            self.bound[pod.key] = pod.node_name
            self.queue.move_all_to_active_or_backoff_queue(EventAssignedPodAdd, None, pod)
        else:
            self.outcomes[pod.key] = Outcome(pod.key, None, 0)
            self.sched.make_claims(pod)     # the resourceclaim controller's claims come first
            claim_events(self)
            self.queue.add(pod)

    def update_pod(self, pod) -> None:
        """A pending pod changed (e.g. its scheduling gates were removed)."""
        pod = self.sched.parse_pod(pod)
        old = self.pods.get(pod.key)
        if old is None:
            raise NotFoundError(f"pod {pod.key}", "", "no such pod in this simulation")
        if old.node_name or pod.key in self.bound or pod.key in self.binding:
            raise StateError(f"pod {pod.key}", "", "not pending (only pending pods can be updated here)")
        self.pods[pod.key] = pod
        node = self.nominator.node_of(old)
        if node is not None:                 # its requests may have changed: counted anew
            self.nominator.add(pod, node)
        self.queue.update(old, pod)

    def delete_pod(self, key: str, missing_ok: bool = False) -> None:
        """A pod is deleted, wherever it is (queued, binding or bound). An unknown key is a
        NotFoundError, or with missing_ok (an informer's delete) nothing happens."""
        pod = self.pods.pop(key, None)
        if pod is None:
            if missing_ok:
                return
            raise NotFoundError(f"pod {key}", "", "no such pod in this simulation")
        if key in self.bound or key in self.binding:
            assumed = self.binding.pop(key, None)
            node = self.bound.pop(key, None) or assumed
            pinfo = self.bindings.forget(key)
            if pinfo is not None:
                self.queue.done(pinfo.uid)
            if assumed is not None:           # given up before its binding ended
                self.bindings.unreserve(pod, assumed)
            self.sched.remove_pod(key)
            assigned_pod_deleted(self, pod, node)
        else:
            self.queue.delete(pod)
            _left_nominated(self, pod)
        self.sched.release_claims(pod)
        claim_events(self)
        self._written_nnn.pop(key, None)
        if self.nominator.count:
            self.queue.delete_nominated_pod_if_exists(pod)
        self.outcomes.pop(key, None)

    def add_node(self, node) -> None:
        node = node if isinstance(node, Node) else parse_node(node)
        self.sched.add_node(node)
        self.queue.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node)

    def update_node(self, node) -> None:
        node = node if isinstance(node, Node) else parse_node(node)
        old = self.sched.update_node(node)           # a NotFoundError for an unknown node
        for event in node_scheduling_properties_change(node, old):
            self.queue.move_all_to_active_or_backoff_queue(event, old, node)

    def remove_node(self, name: str, missing_ok: bool = False) -> None:
        """A node is deleted; its pods stay bound to it (they are deleted by their own events),
        and a binding in flight to it will fail. An unknown name: NotFoundError, or nothing
        with missing_ok."""
        old = self.sched.remove_node(name, missing_ok)
        if old is None:
            return
        self.queue.move_all_to_active_or_backoff_queue(EventNodeDelete, old, None)

    # ---- the scheduling loop -----------------------------------------------------------------
    def schedule_one(self) -> bool:
        """One pop and cycle; False when activeQ (and the early-pop backoffQ) is empty."""
        if self.bindings.pending():
            self.bindings.complete_due()
        if self.queue.empty() and not self._last_victims and not self._late_bindings and not self._activations:
            return False
        pinfo = self.queue.pop()
        if pinfo is None:
            if self.land_preemptions(idle=True):    # nothing else to do before they land
                return True
            return self.land_late_bindings()     # then a nominated pod's binding lands
        self.process(pinfo)
        self.land_preemptions()
        return True

    def idle(self) -> bool:
        """Nothing to do until an event: schedule_one() would return False, and no timer is set."""
        return self.queue.empty() and not (self.bindings.pending() or self._last_victims or self._late_bindings
                                           or self._activations)

    def land_preemptions(self, idle: bool = False) -> bool:
        """After a cycle: what the preemptions chosen before it still have to do (delete their
        last victims, activate preemptors whose victims are gone); idle (no pod to pop), all of
        it. False if nothing was waiting. The live loop calls it after each pop."""
        if not (self._last_victims or self._activations):
            return False
        evictions.land(self, self.cycles + 1 if idle else self.cycles)
        return True

    def process(self, pinfo) -> None:
        """The scheduling cycle of a popped pod: cycle, then assume and bind, or requeue."""
        pod = pinfo.pod
        if pod.key not in self.pods:         # deleted after it was popped (live mode pops outside
            self.queue.done(pinfo.uid)       # the lock): nothing to schedule, nothing to record
            return
        self.cycles += 1
        if pod.terminating and pod.key not in self.binding and pod.key not in self.bound:
            self.queue.done(pinfo.uid)       # skipPodSchedule: being deleted, never queued again
            self._skip_deleting(pod.key)
            return
        outcome = self.outcomes.get(pod.key)
        if outcome is None:
            outcome = self.outcomes[pod.key] = Outcome(pod.key, None, 0)
        outcome.attempts = pinfo.attempts
        if pod.key in self.binding or pod.key in self.bound:
            self.queue.done(pinfo.uid)       # already assumed: skip
            return
        # (a failed cycle's statuses are not decoded for a record: the rejector plugins come from
        # its counts, and only its summary is kept)
        result = self.sched.attempt(pod, self.nominator if self.nominator.count else None, self.usage.counted,
                                    keep=False)
        self.listener.attempted(pod.key)
        if result.node is None:
            self.after_failure(pod, outcome, result, pinfo)
            return
        # assume (the cache counts the pod from now on), Permit, then the binding cycle
        self.sched.assume_scheduled(pod, result)
        claim_events(self)                 # its claims allocated and reserved (PreBind)
        if self.nominator.count:
            self.queue.delete_nominated_pod_if_exists(pod)     # an assumed pod is no longer nominated
        outcome.message = None
        if self.binds_at_once() and not self.binds_late(pod.key):
            self.bound_to(pod.key, result.node, pinfo)       # no plugin, no latency, no Bind call:
            runs.copies_after(self, pod, result)             # bound as it is assumed
            return
        self.binding[pod.key] = result.node
        self.bindings.begin(pod, result.node, pinfo, result.cycle_state)

    def after_failure(self, pod, outcome, result, pinfo) -> None:
        """A popped pod's cycle failed: failed_cycle, its PostFilter's claim events, runs.py's runs."""
        self.failed_cycle(pod, outcome, result, pinfo)
        claim_events(self)             # a claim PostFilter deallocated
        runs.failures_after(self, pod)

    def _skip_deleting(self, key: str) -> None:
        """A pending pod popped while being deleted: no outcome of its own (it is no pending pod
        any more); counted once in the Scheduler's `ignored`, and told to the listener."""
        if self.outcomes.pop(key, None) is not None:
            self.sched.ignored[DELETING_REASON] += 1
            self.listener.skipped(key)

    def failed_cycle(self, pod, outcome, result, pinfo, rejectors: set | None = None) -> None:
        """A failed cycle of a popped pod (`result`; its Outcome; its QueuedPodInfo): the
        message, PostFilter's nomination acted on, the pod requeued with the plugins that
        rejected it (`rejectors`, else its cycle's). Its cycle's or a run's (runs.py)."""
        outcome.result = result.summary()
        if result.fit_error is not None:
            plugins = rejectors if rejectors is not None else (
                result.cycle.rejector_plugins() if result.cycle is not None else set())
            outcome.message = result.fit_error.full_message
            _act_on_post_filter(self, pod, result)
        else:
            outcome.message, plugins = result.error, set()
        written = self.listener.failed(pod.key, outcome.message)
        self.queue.add_unschedulable_if_not_present(pinfo, unschedulable_plugins=plugins, pod=pod)
        if written and self.sched.cycles.extenders:
            # the status write comes back as the pod's own update (UpdatePodOther): only the
            # "Extender" pseudo-plugin's hint (every event) acts on a status-only change
            self.queue.update(pod, pod)
        if self._preempted:
            evictions.evict(self)

    def late_binding(self, key, pinfo) -> None:
        self._late_bindings.append((key, pinfo))

    def land_late_bindings(self) -> bool:
        """The nominated pods' Binds waiting for the queue to drain land now (a wall clock's
        caller: their goroutines would have finished meanwhile). False if none waited."""
        if not self._late_bindings:
            return False
        late, self._late_bindings = self._late_bindings, []
        for key, p in late:
            self.bindings.finish(key, p)
        return True

    def binds_at_once(self) -> bool:
        """A binding ends as the pod is assumed: no binding-cycle plugin, dispatch, binder
        extender, Bind call (binder) or latency."""
        return self._binds_at_once and self.binder is None and self.bind_latency <= 0

    def binds_late(self, key) -> bool:
        """A nominated pod's Bind (no latency set) lands once the queue has drained: kube-scheduler
        binds asynchronously, and the pods popped meanwhile see it only after their cycle."""
        return key in self._written_nnn

    # ---- where the binding cycle sends a pod ------------------------------------------------
    def bound_to(self, key, node, pinfo, in_api: bool = True) -> None:
        """The binding succeeded (binding.py). in_api False: an extender bound it, which no
        API server hears of here -- the pod stays assumed and no assigned-pod event follows."""
        pod = self.pods[key]
        self.bound[key] = node
        outcome = self.outcomes[key]
        outcome.node = node
        outcome.result = None       # a failed cycle's record (its per-node statuses) is not kept once bound
        self.listener.bound(key, node)
        if self.nominator.count:
            self.queue.delete_nominated_pod_if_exists(pod)
        self.queue.done(pinfo.uid)        # the attempt is over once the binding is
        if in_api and self.queue.hears_events():
            self.queue.move_all_to_active_or_backoff_queue(EventAssignedPodAdd, None, _on_node(pod, node))
        if self._written_nnn:
            _left_nominated(self, pod)

    def given_up(self, key, node, pinfo, plugins, message) -> None:
        """An assumed pod is forgotten (rejected at Reserve/Permit, or its binding failed) and
        requeued, `plugins` its rejectors."""
        pod = self.pods[key]
        self.sched.remove_pod(key, deleted=False)
        claim_events(self)                  # its claims unreserved (DynamicResources' Unreserve)
        self.outcomes[key].message = message
        written = self.listener.failed(key, message)
        if self.queue.hears_events():
            assigned_pod_deleted(self, pod, node)
        self.queue.add_unschedulable_if_not_present(pinfo, unschedulable_plugins=plugins, pod=pod)
        if written and self.sched.cycles.extenders:
            self.queue.update(pod, pod)     # the status write comes back (see _failed)

    def finish_binding(self, key, pinfo, bind_error=None) -> None:
        """A binding started by bind_dispatch has ended (bind_error: its Bind call's error)."""
        self.bindings.finish(key, pinfo, bind_error=bind_error, bound_elsewhere=True)

    @property
    def evicting(self) -> set:
        """Victims chosen by a preemption and not deleted yet (the last of a preemption's
        victims goes a cycle after the others)."""
        return {v for _, v in self._last_victims}

    @property
    def nominated(self) -> dict:
        """pod key -> node name of the pods nominated by preemption (status.nominatedNodeName)."""
        return self.nominator.nominations()

    # ---- the framework handle's view, for binding-cycle plugins ---------------------------------
    @property
    def waiting(self) -> dict:
        """pod key -> (QueuedPodInfo, plugin names) of the pods waiting at Permit."""
        return self.bindings.waiting

    def assumed_or_bound(self) -> list:
        return [*self.binding, *self.bound]

    def waiting_pods(self) -> list:
        return list(self.bindings.waiting)

    def pod(self, key):
        return self.pods[key]

    def allow(self, key) -> None:
        self.bindings.allow(key)

    def reject(self, key, message) -> None:
        self.bindings.reject_waiting(key, message)

    # ---- running ---------------------------------------------------------------------------------
    def next_wakeup(self) -> float | None:
        """When, on the virtual clock, the next thing is due: a backoff ends or a flush moves a
        pod, or a binding with latency lands; None if nothing waits on time."""
        wake = [t for t in (self.queue.next_wakeup(), self.bindings.next_wakeup()) if t is not None]
        return min(wake) if wake else None

    def run_until_idle(self, max_seconds: float = 3600.0) -> list:
        """Schedules until nothing can progress within `max_seconds` of virtual time; returns
        the outcomes of the pods that came through the queue, in arrival order.
        `horizon_reached` tells afterwards whether work was left beyond it."""
        deadline = self.clock.now() + max_seconds
        with gc_frozen(), runs.copies(self, runs.COPIES_AT_ONCE):
            while True:
                while self.schedule_one():
                    pass
                wake = self.next_wakeup()
                #: work was left for after the horizon (pods backing off or waiting for a flush)
                self.horizon_reached = wake is not None and wake > deadline
                if wake is None or wake > deadline:
                    break
                self.clock.advance_to(max(wake, self.clock.now()))
            self.bindings.complete_due()
        return list(self.outcomes.values())


def add_pending_at_once(sim, pods: list) -> None:
    """Simulation.add_pod for new pending pods without claims, read already (the replay's
    arrivals at one time, before any cycle): the queue's Add takes them in one call."""
    for pod in pods:
        sim.pods[pod.key] = pod
        sim.outcomes[pod.key] = Outcome(pod.key, None, 0)
    sim.queue.add(*pods)


class SimulationListener:
    """What a Simulation tells of its pods (the default does nothing). Each method is called
    as the loop acts, on the loop's thread."""

    def attempted(self, key: str) -> None:
        """A scheduling cycle ran for the pod."""

    def failed(self, key: str, message: str) -> bool:
        """The pod's attempt failed: the message written into its PodScheduled condition.
        Returns whether the scheduler hears that write (a real API server: the pod's own
        update event)."""
        return False

    def bound(self, key: str, node: str) -> None:
        """The pod's binding succeeded."""

    def preempted(self, key: str, node: str, victims: list) -> None:
        """The pod is nominated to `node`; `victims` (pod keys) are deleted for it next."""

    def skipped(self, key: str) -> None:
        """The pending pod was popped while being deleted (metadata.deletionTimestamp) and
        passed over without a cycle (skipPodSchedule): the queue holds it no more."""


class _PodView:
    """A pod as a cluster event shows it: one attribute set by the subclass, every other the
    pod's own -- a view, not a copy (copying a Pod cost 5 us per binding)."""
    __slots__ = ("pod",)

    def __getattr__(self, name):
        return getattr(self.pod, name)


class AssignedPod(_PodView):
    """Once assumed or bound: spec.nodeName set (the hints tell assigned pods from pending
    ones by it)."""
    __slots__ = ("node_name",)

    def __init__(self, pod, node_name):
        self.pod, self.node_name = pod, node_name


class NominatedPod(_PodView):
    """A pending pod's last state once it leaves the pending pods: status.nominatedNodeName set."""
    __slots__ = ("nominated_node_name",)

    def __init__(self, pod, nominated_node_name):
        self.pod, self.nominated_node_name = pod, nominated_node_name


#: the SchedulingQueue's options a Simulation passes on
_QUEUE_OPTIONS = frozenset(inspect.signature(SchedulingQueue).parameters) - {"clock", "nominator"}


def _on_node(pod, node):
    return pod if pod.node_name == node else AssignedPod(pod, node)
