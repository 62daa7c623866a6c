"""The two loops of kube-scheduler on a virtual clock: event intake and scheduling.

Event intake updates the cache (the Scheduler's node table) and the queue, and fires the
cluster events that move unschedulable pods back (queueing hints, §8.4). The scheduling loop
pops a pod, runs a cycle on the current cache, assumes the pod and hands it to the binding
cycle; a binding completes `bind_latency` seconds later on the virtual clock. Bind failures
(from the `binder` callback) Unreserve: the assumed pod is forgotten and goes back to the
queue on the error backoff path (§6.6), so no pod is lost or bound twice.

`run_until_idle()` schedules until nothing can progress: when activeQ is empty it advances
the clock to the next binding completion or queue flush (backoff expiry, the 5-minute
unschedulable leftover), as the real scheduler's timers would.

Preemption (§9): when DefaultPreemption's dry run finds nodes where evicting lower-priority
pods lets the pod fit, the victims are chosen per node (SelectVictimsOnNode's reprieve) and
the node by kube-scheduler's criteria; the victims are deleted and the pod is nominated there.
Nominated pods of at least the incoming pod's priority count on their nodes in every other
pod's cycle, and a nominated pod tries its node first. PodDisruptionBudgets order the
reprieve and the candidates (their allowed disruptions count down as victims go). As in
kube-scheduler, nominated pods count in Filter only: the nodes that pass with them are filtered
again without them, and scored without them.

Permit (§6.3, framework/permit.py): after assume, Permit plugins allow, reject or make the pod
wait (its binding starts when allowed; a rejection or a timeout unreserves and requeues it);
gang scheduling is the Coscheduling plugin.

Not here yet: a live mode on real threads (the queue itself supports a real clock).
"""
import gc
import heapq
import itertools
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np

from ..objects.node import Node, parse_node
from .clock import VirtualClock
from .cluster_events import (EventAssignedPodAdd, EventAssignedPodDelete, EventNodeAdd, EventNodeDelete,
                             node_scheduling_properties_change)
from .interface import SUCCESS, CycleState, Status
from .nominator import NominatedPods
from .permit import SKIP, go_duration
from .queue import SchedulingGates, SchedulingQueue
from .runtime import scanned_rows
from .queueing_hints import default_queueing_hint_map


@dataclass(slots=True)
class Outcome:
    """A pod's last scheduling attempt."""
    pod: str
    node: str | None                # bound node (None: not bound)
    attempts: int
    message: str | None = None      # the last failure (FitError with PostFilter part, or error)
    result: object = None           # the ScheduleResult of the last failed cycle


class Simulation:
    """A Scheduler driven by kube-scheduler's queue, binding cycle and cluster events.

    binder(pod, node_name) -> None or an error message: the Bind call (default: succeeds).
    bind_latency: virtual seconds a binding cycle takes. Other keywords go to SchedulingQueue
    (pod_initial_backoff, pod_max_backoff, ...).
    """

    def __init__(self, scheduler, *, clock=None, binder=None, bind_latency: float = 0.0, permit_plugins=(),
                 plugins=(), **queue_options):
        self.sched = scheduler
        self.clock = clock or VirtualClock()
        sort = next(iter(scheduler.profiles.values())).queue_sort     # the same in every profile
        queue_options.setdefault("less", sort.less if sort is not None else None)
        pre_enqueue = {name: tuple(prof.pre_enqueue) for name, prof in scheduler.profiles.items()}
        if set(pre_enqueue.values()) != {("SchedulingGates",)}:     # the queue's default otherwise
            queue_options.setdefault("pre_enqueue_plugins", {
                name: [SchedulingGates() if p == "SchedulingGates" else p for p in plugins]
                for name, plugins in pre_enqueue.items()})
        self.queue = SchedulingQueue(self.clock, queueing_hints=default_queueing_hint_map(), **queue_options)
        self.binder = binder
        self.bind_latency = bind_latency
        self.bound = {}                 # pod key -> node name (binding confirmed)
        self.binding = {}               # pod key -> node name (assumed: waiting at Permit or binding)
        # binding-cycle plugins, each implementing any of reserve / unreserve / permit /
        # pre_bind / bind / post_bind (framework/permit.py), run in the order given
        # (and those the profiles enable from a Registry, after these)
        given = [*permit_plugins, *plugins]
        self._plugin_sets = {name: _BindingPlugins([*given, *prof.binding_plugins])
                             for name, prof in scheduler.profiles.items()}
        self._no_plugins = _BindingPlugins(given)
        self._any_plugins = any(ps.any for ps in self._plugin_sets.values()) or self._no_plugins.any
        self.waiting = {}               # pod key -> (QueuedPodInfo, plugin name): waiting at Permit
        self._permit_timers = []        # heap of (deadline, seq, pod key, plugin name)
        self._bindings = []             # heap of (completion time, seq, pod key)
        self._seq = itertools.count()
        self.outcomes = {}              # pod key -> Outcome
        self.pods = {}                  # pod key -> Pod (every pod the simulation knows)
        #: pod key -> node name (status.nominatedNodeName), with what they add in Filter
        self.nominated = NominatedPods(scheduler, self.pods.__getitem__)
        self.preemptions = []           # (preemptor key, node, [victim keys])
        self._started = {}              # pod key -> order it was placed (MoreImportantPod's start time)
        self._allowed = set()           # allowed by another pod's Permit before its own Permit ended
        self._assumed_at = {}           # pod key -> the node table's version when it was assumed
        self._states = {}               # pod key -> its cycle's CycleState, until its binding cycle ends
        self.cycles = 0
        for key, placement in scheduler._placed.items():    # pods the Scheduler holds already
            self.pods[key] = placement.pod
            self.bound[key] = placement.node
            self._started[key] = next(self._seq)
        plugins = {id(p): p for prof in scheduler.profiles.values()
                   for p in [*prof.binding_plugins, *prof.pre_enqueue, prof.queue_sort, *prof.custom_pre_filters]}
        for plugin in [*given, *plugins.values()]:
            if hasattr(plugin, "set_handle"):     # plugins that list the cluster's pods or read the clock
                plugin.set_handle(self)
        for pod in scheduler.pending:   # pods queued on the Scheduler before
            self.add_pod(pod)
        scheduler.pending = []

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
            self._started[pod.key] = next(self._seq)
            self.queue.move_all_to_active_or_backoff_queue(EventAssignedPodAdd, None, pod)
        else:
            self.outcomes[pod.key] = Outcome(pod.key, None, 0)
            self.queue.add(pod)

    def update_pod(self, pod) -> None:
        """A pending pod changed (e.g. its scheduling gates were removed)."""
        pod = self.sched.parse_pod(pod)
        old = self.pods.get(pod.key)
        if old is None or old.node_name or pod.key in self.bound or pod.key in self.binding:
            raise ValueError(f"pod {pod.key}: only pending pods can be updated here")
        self.pods[pod.key] = pod
        if pod.key in self.nominated:        # its requests may have changed: counted anew
            self.nominated[pod.key] = self.nominated[pod.key]
        self.queue.update(old, pod)

    def delete_pod(self, key: str) -> None:
        """A pod is deleted, wherever it is (queued, binding or bound)."""
        pod = self.pods.pop(key, None)
        if pod is None:
            return
        if key in self.bound or key in self.binding:
            assumed = self.binding.pop(key, None)
            node = self.bound.pop(key, None) or assumed
            self._assumed_at.pop(key, None)
            entry = self.waiting.pop(key, None)
            if entry is not None:
                self.queue.done(entry[0].uid)
            if assumed is not None:           # given up before its binding ended
                self._unreserve(pod, assumed)
            self.sched.remove_pod(key)
            self.queue.move_all_to_active_or_backoff_queue(EventAssignedPodDelete, _on_node(pod, node), None)
        else:
            self.queue.delete(pod)
        if self.nominated.pop(key, None) is not None:
            self.queue.delete_nominated_pod_if_exists(pod)
        self.outcomes.pop(key, None)

    def add_node(self, node) -> None:
        node = node if isinstance(node, Node) else parse_node(node)
        self.sched.add_node(node)
        self.queue.move_all_to_active_or_backoff_queue(EventNodeAdd, None, node)

    def update_node(self, node) -> None:
        node = node if isinstance(node, Node) else parse_node(node)
        row = self.sched.table.row_of.get(node.name)
        old = self.sched.table.nodes[row] if row is not None else None
        self.sched.update_node(node)           # a ValidationError for an unknown node
        for event in node_scheduling_properties_change(node, old):
            self.queue.move_all_to_active_or_backoff_queue(event, old, node)

    def remove_node(self, name: str) -> None:
        """A node is deleted; its pods stay bound to it (they are deleted by their own events),
        and a binding in flight to it will fail."""
        row = self.sched.table.row_of.get(name)
        old = self.sched.table.nodes[row] if row is not None else None
        self.sched.remove_node(name)
        self.queue.move_all_to_active_or_backoff_queue(EventNodeDelete, old, None)

    # ---- the scheduling loop -----------------------------------------------------------------
    def schedule_one(self) -> bool:
        """One pop and cycle; False when activeQ (and the early-pop backoffQ) is empty."""
        if self._bindings or self._permit_timers:
            self._complete_bindings()
        pinfo = self.queue.pop()
        if pinfo is None:
            return False
        self.process(pinfo)
        return True

    def process(self, pinfo) -> None:
        """The scheduling cycle of a popped pod: cycle, then assume and bind, or requeue."""
        self.cycles += 1
        pod = pinfo.pod
        outcome = self.outcomes.get(pod.key)
        if outcome is None:
            outcome = self.outcomes[pod.key] = Outcome(pod.key, None, 0)
        outcome.attempts = pinfo.attempts
        if pod.key in self.binding or pod.key in self.bound or pod.terminating:
            self.queue.done(pinfo.uid)       # already assumed, or being deleted: skip
            return
        if self.nominated:
            with self.nominated.counted(pod) as added:
                result, profile, plugins = self._attempt(pod, outcome)
                feasible = _feasible_rows(profile, result) if added and result.node is not None else None
            if feasible is not None:
                # the second Filter pass, without the nominated pods; scores see none of them
                result, profile, plugins = self._attempt(pod, outcome, only_rows=feasible)
        else:
            result, profile, plugins = self._attempt(pod, outcome)
        if result.node is None:
            self.queue.add_unschedulable_if_not_present(pinfo, unschedulable_plugins=plugins, pod=pod)
            return
        # assume (the cache counts the pod from now on), Permit, then the binding cycle
        self.sched._place(pod, result.node, profile)
        self.binding[pod.key] = result.node
        self._assumed_at[pod.key] = self.sched.table.node_version
        if self.nominated and self.nominated.pop(pod.key, None) is not None:
            self.queue.delete_nominated_pod_if_exists(pod)     # an assumed pod is no longer nominated
        outcome.message = None
        if self._any_plugins:
            self._states[pod.key] = result.cycle_state     # the binding cycle's plugins share it
            plugins = self._plugins(pod)
            if plugins.reserve and not self._reserve(pod, result.node, pinfo):
                return
            if plugins.permit and not self._permit(pod, result.node, pinfo):
                return
        self._start_binding(pod.key, pinfo)

    def _start_binding(self, key, pinfo) -> None:
        if self.bind_latency <= 0:
            self._finish_binding(key, pinfo)
        else:
            heapq.heappush(self._bindings, (self.clock.now() + self.bind_latency, next(self._seq), key, pinfo))

    def _state(self, key) -> CycleState:
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = CycleState()
        return state

    def _plugins(self, pod) -> "_BindingPlugins":
        """The binding-cycle plugins of the pod's profile."""
        return self._plugin_sets.get(pod.scheduler_name, self._no_plugins)

    # ---- Reserve -------------------------------------------------------------------------------
    def _reserve(self, pod, node, pinfo) -> bool:
        """RunReservePluginsReserve: in order; the first failure unreserves and rejects."""
        for plugin in self._plugins(pod).reserve:
            if not hasattr(plugin, "reserve"):          # an Unreserve-only plugin
                continue
            message = _failure(plugin.reserve(self._state(pod.key), pod, node, self))
            if message:
                self._reject(pod.key, pinfo, plugin.name, f"0/1 nodes are available: 1 {message}.")
                return False
        return True

    def _unreserve(self, pod, node) -> None:
        """RunReservePluginsUnreserve: every Reserve plugin, in reverse order (the pod's
        binding cycle ends: its CycleState goes)."""
        if not self._any_plugins:
            return
        for plugin in reversed(self._plugins(pod).reserve):
            if hasattr(plugin, "unreserve"):
                plugin.unreserve(self._state(pod.key), pod, node, self)
        self._states.pop(pod.key, None)

    # ---- Permit --------------------------------------------------------------------------------
    def _permit(self, pod, node, pinfo) -> bool:
        """RunPermitPlugins: True when the pod may bind now; a rejection unreserves it, a wait
        parks it (with one timer per waiting plugin, the shortest deciding)."""
        waits = []
        for plugin in self._plugins(pod).permit:
            status = plugin.permit(self._state(pod.key), pod, node, self)
            if status.code == "reject":
                self._reject(pod.key, pinfo, plugin.name, f"0/1 nodes are available: 1 {status.message}.")
                return False
            if status.code == "wait":
                waits.append((status.timeout, plugin.name))
        if pod.key not in self.binding:          # a plugin's call rejected the pod meanwhile
            return False
        if not waits or pod.key in self._allowed:
            self._allowed.discard(pod.key)
            return True
        self.waiting[pod.key] = (pinfo, [name for _, name in waits])
        for timeout, name in waits:
            heapq.heappush(self._permit_timers, (self.clock.now() + timeout, next(self._seq), pod.key, name, timeout))
        return False

    # the framework handle's view, for Permit plugins
    def assumed_or_bound(self) -> list:
        return [*self.binding, *self.bound]

    def waiting_pods(self) -> list:
        return list(self.waiting)

    def pod(self, key):
        return self.pods[key]

    def allow(self, key) -> None:
        """A waiting pod may bind (all its waiting plugins at once, as coscheduling allows)."""
        entry = self.waiting.pop(key, None)
        if entry is None:
            self._allowed.add(key)                # allowed while its own Permit is still running
            return
        self._start_binding(key, entry[0])

    def reject(self, key, message) -> None:
        entry = self.waiting.pop(key, None)
        if entry is not None:
            self._reject(key, entry[0], entry[1][0], message)

    def _reject(self, key, pinfo, plugin, message) -> None:
        """Unreserve: the assumed pod is forgotten and requeued with the plugin as rejector."""
        self.waiting.pop(key, None)
        self._assumed_at.pop(key, None)
        node = self.binding.pop(key, None)
        if node is None:
            return
        pod = self.pods[key]
        self._unreserve(pod, node)
        self.sched.remove_pod(key)
        self.outcomes[key].message = message
        if self.queue.hears_events():
            self.queue.move_all_to_active_or_backoff_queue(EventAssignedPodDelete, _on_node(pod, node), None)
        self.queue.add_unschedulable_if_not_present(pinfo, unschedulable_plugins={plugin}, pod=pod)

    def _fire_permit_timers(self) -> None:
        now = self.clock.now()
        while self._permit_timers and self._permit_timers[0][0] <= now:
            _, _, key, name, timeout = heapq.heappop(self._permit_timers)
            entry = self.waiting.get(key)
            if entry is None:
                continue
            plugin = next(p for p in self._plugins(self.pods[key]).permit if p.name == name)
            others = plugin.on_timeout(key, self) if hasattr(plugin, "on_timeout") else []
            message = f"rejected due to timeout after waiting {go_duration(timeout)} at plugin {name}"
            self.reject(key, message)
            for other in others:
                self.reject(other, f"rejected by {name}: its group timed out")

    def _attempt(self, pod, outcome, only_rows=None):
        """The cycle, and after a failure PostFilter (preemption): (result, profile, rejectors)."""
        if only_rows is None:
            result, profile, ctx = self._cycle(pod) if self.nominated else self.sched._run_cycle(pod)
        else:
            result, profile, ctx = self.sched._run_cycle(pod, only_rows=only_rows)
        plugins = None
        if result.node is None:
            outcome.result = result
            if result.fit_error is not None:
                plugins = _rejectors(self.sched, profile, ctx)   # before the dry runs reuse the kernel
                self.sched._post_filter(pod, result, profile, ctx)
                outcome.message = result.fit_error.full_message
                self._post_filter_result(pod, result)
            else:
                outcome.message, plugins = result.error, set()
        return result, profile, plugins

    def _cycle(self, pod):
        """A scheduling cycle; a nominated pod first tries its node alone (§5.1 step 4)."""
        node = self.nominated.get(pod.key) if self.nominated else None
        row = self.sched.table.row_of.get(node) if node else None
        if row is not None:
            cycle = self.sched._run_cycle(pod, only_row=row)
            if cycle[0].node is not None:
                return cycle
        return self.sched._run_cycle(pod)

    def _post_filter_result(self, pod, result) -> None:
        """Acts on DefaultPreemption: evict on the best candidate and nominate the pod there;
        no candidate clears an earlier nomination. A custom PostFilter's nomination is acted on
        the same way: its victims deleted, the pod nominated."""
        if result.nomination is not None:
            self._nominate(pod, result.nomination.nominated_node_name, list(result.nomination.victims))
            return
        if not result.preemption_candidates:
            if self.nominated.pop(pod.key, None) is not None:
                self.queue.delete_nominated_pod_if_exists(pod)
            return
        if result.preemption_on_resources:     # every candidate at once, the choice checked by the Filters
            best = self.sched.victims_on_resources(pod, result.preemption_candidates, self._started)
        else:
            best = None
            for node in result.preemption_candidates:
                # a candidate of the dry run: it fits without its lower-priority pods
                found = self.sched.select_victims(pod, node, result.cycle_state, fits_without=True)
                if found and found[0]:
                    rank = self._candidate_rank(*found)
                    if best is None or rank < best[0]:
                        best = (rank, node, found[0])
            best = best and best[1:]
        if best is None:
            return
        node, victims = best
        for b in self.sched.pdbs.values():    # the disruption controller's count, ahead of it
            b.disruptions_allowed -= sum(1 for v in victims if b.matches(v))
        self._nominate(pod, node, [v.key for v in victims])

    def _nominate(self, pod, node, victims) -> None:
        """Victims deleted through the event path, the preemptor nominated to the node."""
        for key in victims:
            self.delete_pod(key)             # a key it no longer knows is a no-op
        self.nominated[pod.key] = node
        self.queue.add_nominated_pod(pod, node)
        self.preemptions.append((pod.key, node, list(victims)))

    def _candidate_rank(self, victims, n_violating) -> tuple:
        """pickOneNodeForPreemption's order: the fewest PodDisruptionBudget violations, the
        lowest highest victim priority, the lowest priority sum, the fewest victims, the latest
        start of the most important. (Scheduler.victims_on_resources ranks its arrays alike.)"""
        top = max(v.priority for v in victims)
        earliest = min(self._started.get(v.key, 0) for v in victims if v.priority == top)
        return (n_violating, top, sum(v.priority + 2 ** 31 for v in victims), len(victims), -earliest)

    def _complete_bindings(self) -> None:
        if self._permit_timers:
            self._fire_permit_timers()
        now = self.clock.now()
        while self._bindings and self._bindings[0][0] <= now:
            _, _, key, pinfo = heapq.heappop(self._bindings)
            self._finish_binding(key, pinfo)

    def _finish_binding(self, key, pinfo, bind_error=None, bound_elsewhere=False) -> None:
        """The binding cycle's end: bound, or (Bind failed) Unreserve, forget the assumed pod
        and send it back to the queue on the error path. bound_elsewhere: the Bind call was
        made outside (a live binder thread) and returned `bind_error`."""
        node = self.binding.pop(key, None)
        if node is None:                     # deleted while binding
            self.queue.done(pinfo.uid)
            return
        pod = self.pods[key]
        error = self._bind(pod, node, None if bound_elsewhere else self.binder, bound_elsewhere)
        if error is None:
            error = bind_error
        if error is None:
            if self._any_plugins:
                for plugin in self._plugins(pod).post_bind:
                    plugin.post_bind(self._state(key), pod, node, self)
                self._states.pop(key, None)
            self.bound[key] = node
            self._started[key] = next(self._seq)
            self.outcomes[key].node = node
            if self.nominated and self.nominated.pop(key, None) is not None:
                self.queue.delete_nominated_pod_if_exists(pod)
            self.queue.done(pinfo.uid)        # the attempt is over once the binding is
            if self.queue.hears_events():
                self.queue.move_all_to_active_or_backoff_queue(EventAssignedPodAdd, None, _on_node(pod, node))
            return
        self._unreserve(pod, node)
        self.sched.remove_pod(key)
        self.outcomes[key].message = error
        if self.queue.hears_events():
            self.queue.move_all_to_active_or_backoff_queue(EventAssignedPodDelete, _on_node(pod, node), None)
        self.queue.add_unschedulable_if_not_present(pinfo, unschedulable_plugins=set(), pod=pod)

    def _bind(self, pod, node, binder, bound_elsewhere=False):
        t = self.sched.table
        row = t.row_of.get(node)
        if row is None:
            return f'binding rejected: node "{node}" not found'
        if self._assumed_at.pop(pod.key, t.node_version) != t.node_version:
            reason = _admit(pod, t.nodes[row], t, row)    # the node changed since the pod was assumed
            if reason:
                return f"Pod admission rejected by the node: {reason}"
        if not self._any_plugins:
            return binder(pod, node) if binder is not None else None
        plugins = self._plugins(pod)
        for plugin in plugins.pre_bind:
            message = _failure(plugin.pre_bind(self._state(pod.key), pod, node, self))
            if message:
                return f'running PreBind plugin "{plugin.name}": {message}'
        if not bound_elsewhere:
            for plugin in plugins.bind:           # the first that does not skip binds
                message = plugin.bind(self._state(pod.key), pod, node, self)
                if message is not SKIP:
                    message = _failure(message)
                    return f'running Bind plugin "{plugin.name}": {message}' if message else None
        return binder(pod, node) if binder is not None else None

    def run_until_idle(self, max_seconds: float = 3600.0) -> list:
        """Schedules until nothing can progress within `max_seconds` of virtual time; returns
        the outcomes of the pods that came through the queue, in arrival order."""
        deadline = self.clock.now() + max_seconds
        with _gc_frozen():
            while True:
                while self.schedule_one():
                    pass
                wake = [t for t in (self.queue.next_wakeup(), self._bindings[0][0] if self._bindings else None,
                                    self._permit_timers[0][0] if self._permit_timers else None) if t is not None]
                if not wake or min(wake) > deadline:
                    break
                self.clock.advance_to(max(min(wake), self.clock.now()))
            self._complete_bindings()
        return list(self.outcomes.values())


@contextmanager
def _gc_frozen():
    """The objects alive before a run out of the cyclic collector's sight while it lasts (the
    run's own garbage is still collected): a full collection then walks what the run made,
    not the whole cache -- one such collection cost a 10,000-pod run ~30%. Left alone when
    the process froze objects itself."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


class _BindingPlugins:
    """Binding-cycle plugins by the extension points they implement, in the order given."""

    def __init__(self, plugins):
        self.any = bool(plugins)
        self.permit = [p for p in plugins if hasattr(p, "permit")]
        self.reserve = [p for p in plugins if hasattr(p, "reserve") or hasattr(p, "unreserve")]
        self.pre_bind = [p for p in plugins if hasattr(p, "pre_bind")]
        self.bind = [p for p in plugins if hasattr(p, "bind")]
        self.post_bind = [p for p in plugins if hasattr(p, "post_bind")]


def _failure(answer):
    """A Reserve / PreBind / Bind answer's failure message: None, '' and Success are none."""
    if isinstance(answer, Status):
        return None if answer.code == SUCCESS else answer.message
    return answer or None


def _feasible_rows(profile, result):
    """The node rows the cycle found feasible (the kernel's feasible buffer, in scan order)."""
    n = max(result.feasible_nodes, 1)
    return np.asarray(profile.kernel.feasible)[:n].copy()


def _admit(pod, node, table, row) -> str:
    """The kubelet's admission, simplified to what a node update can break: resources (the
    pod is counted on the row already), taints, node selector and required affinity."""
    from .queueing_hints import _untolerated, required_node_affinity_matches
    if table.pod_count[row] > table.allowed_pods[row]:
        return "Too many pods"
    for name, amount in pod.requests.items():
        col = table.resources.get(name)
        if amount and col >= 0 and table.requested[row, col] > table.alloc[row, col]:
            return f"Insufficient {name}"
    if _untolerated(node.taints, pod.tolerations):
        return "untolerated taint"
    try:
        if not required_node_affinity_matches(pod, node):
            return "node affinity/selector mismatch"
    except Exception:          # a term that does not parse matches nothing
        return "node affinity/selector mismatch"
    return ""


def _on_node(pod, node):
    """The pod as its events show it once assumed or bound: spec.nodeName set (the hints tell
    assigned pods from pending ones by it)."""
    return pod if pod.node_name == node else replace(pod, node_name=node)


def _rejectors(sched, profile, ctx) -> set:
    """The plugins that rejected some node in the cycle (the pod's rejector plugins)."""
    if profile is None:
        return set()
    if sched._rejected(ctx):                         # a PreFilter rejection
        return set(ctx.plugins or {ctx.plugin})
    if not ctx:
        return set()
    rows = scanned_rows(*ctx[:3])
    k = profile.kernel
    failed = rows[np.asarray(k.st_code)[rows] != 1]
    return {profile.filters[int(f)].name for f in np.unique(np.asarray(k.st_plugin)[failed])}
