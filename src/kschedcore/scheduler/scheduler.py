"""Scheduler: the public object. Nodes and pods in, kube-scheduler's decisions out.

A facade over the rooms that do the work: the Cache (backend/cache: nodes, placed pods,
counters), one Framework per profile (framework/: plugins per extension point and the compiled
kernel), and the scheduling cycle (schedule_one.py). The loop (loop.py) drives it through these
public methods only.
"""
from __future__ import annotations

import numbers
import random
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..backend.cache import Cache
from ..errors import DuplicateError, NotFoundError, StateError, UnsupportedError, ValidationError
from ..extender.decode import ordered
from ..extender.runtime import make_extenders
from ..framework.config import SchedulerConfig
from ..framework.custom import NodeColumns
from ..framework.framework import Framework
from ..objects.features import check_supported
from ..objects.node import Node, parse_node
from ..objects.pod import Pod, parse_pod
from ..objects.priority_class import admit
from ..objects.resource import RESOURCE_KINDS
from ..objects.storage import STORAGE_KINDS
from ..output import explain as explain_output
from ..util import collector
from . import batches
from .handle import Handle
from .result import DELETING_REASON, GATED_MESSAGE, ScheduleResult
from .schedule_one import ScheduleOne
from .claims import ClaimOperations
from .whatif import WhatIfOperations

if TYPE_CHECKING:
    from ..extender import Extender
    from ..backend.cache.node_table import NodeTable
    from ..framework.interface import CycleState
    from ..plugins.defaultpreemption.evaluator import Evaluator

TIE_BREAKS = ("random", "first")
"""The tie-breaks among the best-scored nodes: seeded uniform choice, or the first in input order."""
MAX_THREADS = 64      # the kernel pool's: the caller's thread and 63 helpers (pool.h)


def _with_overrides(config: SchedulerConfig, plugin_args: dict | None, weights: dict | None) -> SchedulerConfig:
    """The Python API's plugin_args / weights applied to every profile of `config`."""
    if not plugin_args and not weights:
        return config
    profiles = []
    for prof in config.profiles:
        args = {**prof.plugin_args, **(plugin_args or {})}
        score_weights = {n: (weights or {}).get(n, w) for n, w in prof.score_weights.items()}
        profiles.append(replace(prof, plugin_args=args, score_weights=score_weights))
    return replace(config, profiles=profiles)


class Scheduler(ClaimOperations, WhatIfOperations):
    """kube-scheduler's profiles over an in-process node table (not thread-safe: one thread
    drives one Scheduler; the kernel releases the GIL, so several Schedulers run in parallel).

    config: a SchedulerConfig (KubeSchedulerConfiguration); default: the default profile.
    percentage_of_nodes_to_score: None = the configuration's; 0 = adaptive, else 1-100 (§5.2);
        a profile's own value wins, as in kube-scheduler.
    tie_break: "random" (uniform among the best totals, seeded) or "first" (first in input order).
    plugin_args: {plugin name: args dict}, e.g. NodeResourcesFit's scoringStrategy.
    threads: 1 (default) to 64: split large scans between this many threads (the caller's and
        threads - 1 helpers), for an otherwise idle machine with as many cores.
    plugins: custom plugins (kschedcore.custom), run after the in-tree ones of every profile.
    extenders: in-process extenders (kschedcore.extender.Extender), after the configuration's
        `extenders`; ignorable ones are moved last, as kube-scheduler does.
    extender_factory: makes an Extender of each configured one (default: the HTTP extender).
    """

    def __init__(self, nodes: Iterable[Node | dict] = (), pods: Iterable[Pod | dict] = (), *,
                 percentage_of_nodes_to_score: int | None = None, tie_break: str = "random", seed: int = 0,
                 plugin_args: dict[str, dict] | None = None, weights: dict[str, int] | None = None,
                 threads: int | None = None, config: SchedulerConfig | None = None, plugins: Sequence[Any] = (),
                 extenders: Sequence[Extender] = (), extender_factory: Callable[..., Any] | None = None) -> None:
        if percentage_of_nodes_to_score is not None and not (
                _integer(percentage_of_nodes_to_score) and 0 <= percentage_of_nodes_to_score <= 100):
            raise ValidationError("scheduler", "percentageOfNodesToScore",
                                  f"must be an integer in the range 0-100, got {percentage_of_nodes_to_score!r}")
        if not _integer(seed):
            raise ValidationError("scheduler", "seed", f"must be an integer, got {seed!r}")
        seed = int(seed)
        if tie_break not in TIE_BREAKS:
            raise ValidationError("scheduler", "tieBreak", f'must be "random" or "first", got "{tie_break}"')
        # threads > 1 splits large scans between threads (results do not depend on it). Not
        # the default: when the other cores are busy, the helpers' wake-ups cost more than
        # they save.
        if threads is not None and (type(threads) is not int or not 1 <= threads <= MAX_THREADS):
            raise ValidationError("scheduler", "threads", f"must be an integer 1-{MAX_THREADS}, got {threads!r}")
        config = _with_overrides(config or SchedulerConfig.default(), plugin_args, weights)
        if percentage_of_nodes_to_score is None:
            percentage_of_nodes_to_score = config.percentage_of_nodes_to_score
        self.cache = Cache()
        self.handle = Handle(self.cache)
        self.profiles = {
            prof.scheduler_name: Framework(prof, self.cache, self.handle, seed=seed + i, threads=threads or 1,
                                           percentage_of_nodes_to_score=percentage_of_nodes_to_score,
                                           custom=plugins, registry=config.registry, source=config.source)
            for i, prof in enumerate(config.profiles)}
        # ties among totals changed after the kernel pass
        self.cycles = ScheduleOne(self.cache, self.profiles, tie_break == "first", random.Random(seed))
        self.handle.schedule = self.cycles
        self.cycles.extenders = ordered(make_extenders(config.extenders, extender_factory) + list(extenders))
        #: a scheduling cycle and, after a FitError, PostFilter, with the loop's nominated pods
        #: (ScheduleOne.attempt); the pod is not assumed
        self.attempt = self.cycles.attempt
        self.pending: list[Pod] = []  # pods without spec.nodeName, in arrival order
        #: what was left out, by reason: Succeeded / Failed pods, objects of kinds not read, ...
        self.ignored: Counter = Counter()
        for n in nodes:
            self.add_node(n)
        for p in pods:
            self.add_pod(p)

    @classmethod
    def from_workload(cls, workload: Any, **options: Any) -> "Scheduler":
        """A scheduler holding a Workload's nodes and bound pods, its pending pods queued."""
        with collector.paused():     # a million pods read: no collector passes over them
            return cls._from_workload(workload, **options)

    @classmethod
    def _from_workload(cls, workload: Any, **options: Any) -> "Scheduler":
        sched = cls(**options)
        if workload.objects.get("VolumeAttachment"):
            raise UnsupportedError("VolumeAttachment", "",
                                   "VolumeAttachments (NodeVolumeLimits) are not implemented yet")
        for kind in ("Service", "ReplicaSet", "StatefulSet", "ReplicationController", "PodDisruptionBudget",
                     "PriorityClass", *STORAGE_KINDS, *RESOURCE_KINDS):
            for i, obj in enumerate(workload.objects.get(kind, ())):
                sched.add_object(obj, f"{kind}[{i}]")
        for i, node in enumerate(workload.nodes):
            sched.add_node(parse_node(node, f"nodes[{i}]"))
        for ns in workload.objects.get("Namespace", ()):
            sched.add_namespace(ns)
        for i, pod in enumerate(workload.pods):
            sched.add_pod(sched.parse_pod(pod, f"pods[{i}]"))
        keys = {pl.pod.key for pl in sched.cache.placements()}
        for i, pod in enumerate(workload.pending):
            pod = sched.queue(sched.parse_pod(pod, f"pending[{i}]"))
            if pod is not None:
                if pod.key in keys:
                    raise DuplicateError(f"pod {pod.key}", "metadata.name", "the same pod twice in the input")
                keys.add(pod.key)
        sched.ignored.update(workload.ignored)
        missing = sched.cache.orphan_count()
        if missing:     # kube-scheduler keeps them on a node it does not know: they count nowhere
            sched.ignored["bound to a node not in the cluster"] += missing
        return sched

    # ---- the cache's view ----------------------------------------------------------------------
    @property
    def table(self) -> NodeTable:
        """The node table (backend/cache/node_table.py)."""
        return self.cache.table

    @property
    def pdbs(self) -> dict:
        return self.cache.pdbs

    @property
    def node_names(self) -> list:
        return self.cache.node_names

    @property
    def node_columns(self) -> NodeColumns:
        """The node table as custom plugins see it."""
        return next(iter(self.profiles.values())).node_columns()

    def utilization(self) -> dict:
        """Requested / allocatable over all nodes, per native resource with any allocatable."""
        return self.cache.utilization()

    # ---- nodes and other objects -------------------------------------------------------------------
    def add_node(self, node: Node | dict) -> None:
        self.cache.add_node(node if isinstance(node, Node) else parse_node(node))

    def update_node(self, node: Node | dict) -> Node:
        """Replaces a node's facts; returns the old Node."""
        return self.cache.update_node(node if isinstance(node, Node) else parse_node(node))

    def remove_node(self, name: str, missing_ok: bool = False) -> Node | None:
        """Removes a node (its pods keep their binding); returns the old Node. An unknown
        name is a NotFoundError, or, with missing_ok (an informer's delete), returns None."""
        if missing_ok and self.cache.node(name) is None:
            return None
        return self.cache.remove_node(name)

    def add_object(self, obj: dict, index_hint: str = "") -> None:
        """Adds a cluster object other than a node, pod or namespace (Cache.add_object)."""
        self.cache.add_object(obj, index_hint)

    def remove_object(self, kind: str, namespace: str, name: str) -> bool:
        """Removes a Service or controller added by add_object (Cache.remove_object)."""
        return self.cache.remove_object(kind, namespace, name)

    def add_namespace(self, namespace: dict) -> None:
        """A Namespace object: its labels are what namespaceSelectors of pod affinity see."""
        self.cache.add_namespace(namespace)

    # ---- pods ------------------------------------------------------------------------------------
    def parse_pod(self, pod: Pod | dict, index_hint: str = "") -> Pod:
        """A raw pod read (after the Priority admission plugin, when PriorityClasses are known)."""
        if not isinstance(pod, Pod):
            if self.cache.priority_classes:
                pod = admit(pod, self.cache.priority_classes)
            pod = parse_pod(pod, index_hint)
        elif pod.checked:
            return pod
        check_supported(pod)
        pod.checked = True
        return pod

    def add_pod(self, pod: Pod | dict) -> Pod | None:
        """A pod with spec.nodeName is counted on its node; others join `pending`.

        Succeeded and Failed pods are ignored (None), as kube-scheduler's informers drop them;
        so is a pending pod being deleted (metadata.deletionTimestamp), which kube-scheduler
        pops and skips without a cycle (skipPodSchedule) and never queues again.
        """
        pod = self.parse_pod(pod)
        if self._left_out(pod):
            return None
        if pod.node_name:
            self.cache.add_pod(pod)
        else:
            self.make_claims(pod)
            self.pending.append(pod)
        return pod

    def queue(self, pod: Pod | dict) -> Pod | None:
        """Appends a pod to `pending`, even one that names its node already (pre-bound: it
        joins that node when its turn comes, without a scheduling cycle)."""
        pod = self.parse_pod(pod)
        if self._left_out(pod):
            return None
        self.make_claims(pod)
        self.pending.append(pod)
        return pod

    def _left_out(self, pod: Pod) -> bool:
        """Terminal pods, and pending ones being deleted: counted in `ignored`, not kept."""
        if pod.terminal:
            self.ignored[pod.phase] += 1
            return True
        if pod.terminating and not pod.node_name:
            self.ignored[DELETING_REASON] += 1
            return True
        return False

    def remove_pod(self, key: str, missing_ok: bool = False, deleted: bool = True) -> bool:
        """Removes a pod ("namespace/name") wherever it is (placed, pending, or bound to a node
        the cluster does not have). An unknown key is a NotFoundError, or, with missing_ok,
        returns False (as for kube-scheduler, deleting an unknown pod changes nothing).
        `deleted` False: an assumed pod forgotten, not gone (its claims stay)."""
        placed = self.cache.remove_pod(key)
        if placed is not None:
            if deleted:
                self.release_claims(placed.pod)
            return True
        for i, p in enumerate(self.pending):
            if p.key == key:
                self.release_claims(p)
                del self.pending[i]
                return True
        if self.cache.remove_orphan(key):
            return True
        if missing_ok:
            return False
        raise NotFoundError(f"pod {key}", "", "no such pod")

    def assume(self, pod: Pod | dict, node_name: str) -> None:
        """Counts `pod` on `node_name` for every later cycle (kube-scheduler's assume). If the
        pod's profile last ran a cycle for this very pod, what its in-tree Reserve commits
        (VolumeBinding's claims, DynamicResources' allocations) is committed too."""
        pod = self.parse_pod(pod)
        fw = self.profiles.get(pod.scheduler_name)
        if (fw is not None and (pod.volumes or pod.resource_claims) and node_name in self.cache.table.row_of
                and pod.key not in self.cache):
            fw.run_reserve_in_tree(None, node_name, pod)
        self.cache.assume(pod, node_name)

    def assume_scheduled(self, pod: Pod, result: ScheduleResult) -> None:
        """Assumes a pod on the node its cycle chose: the profile's in-tree Reserve (VolumeBinding)
        commits what the cycle found, and its kernel writes the node's row."""
        if pod.key in self.cache:
            raise StateError(f"pod {pod.key}", "metadata.name", "already assumed or bound (a pod twice?)")
        if result.node is None:
            raise StateError(f"pod {pod.key}", "", f"its cycle chose no node: {result.message}")
        cycle = result.cycle
        if cycle is None:
            raise StateError(f"pod {pod.key}", "", "the result keeps no cycle record (ScheduleResult.summary())")
        fw = cycle.framework
        if cycle.acted_filters:
            fw.run_reserve_in_tree(cycle, result.node)
        # the cycle chose a node of the table for a pod not yet placed: no checks needed; the
        # kernel writes the row if it is bound to the table's current layout (Framework.writer)
        self.cache.place(pod, result.node, fw.kernel if fw.bound_layout == self.cache.table.layout else None)

    def prepare(self, pod: Pod | dict) -> None:
        """Compiles a queued pod ahead of its cycle (optional: cycles compile on demand)."""
        pod = pod if isinstance(pod, Pod) else self.parse_pod(pod)
        fw = self.profiles.get(pod.scheduler_name)
        if fw is not None:
            fw.compile(pod)

    def num_feasible_nodes_to_find(self, num_all_nodes: int, scheduler_name: str = "default-scheduler") -> int:
        """How many feasible nodes a cycle of that profile looks for among `num_all_nodes`."""
        return self.profiles[scheduler_name].num_feasible_nodes_to_find(num_all_nodes)

    # ---- scheduling --------------------------------------------------------------------------------
    def schedule(self, pod: Pod | dict) -> ScheduleResult:
        """One scheduling cycle for `pod`; the pod is not assumed. A FitError carries the
        PostFilter message (`fit_error.full_message`)."""
        pod = self.parse_pod(pod)
        return self.cycles.attempt(pod)

    def schedule_one(self, pod: Pod | dict) -> ScheduleResult:
        """Schedules `pod` and, if a node was chosen, assumes it there."""
        pod = self.parse_pod(pod)
        result = self.cycles.attempt(pod)
        if result.node is not None:
            self.assume_scheduled(pod, result)
        return result

    def run_by_loop(self) -> None:
        """A loop drives this scheduler from now on: DefaultPreemption chooses victims and a
        node (the loop evicts and nominates)."""
        self.handle.preemption_acts = True

    def schedule_pending(self, callback: Callable[[ScheduleResult], Any] | None = None,
                         records: bool = True) -> list[ScheduleResult]:
        """Schedules every pending pod in order, each assumed before the next. A failed cycle's
        result keeps its record (`result.cycle`, per-node statuses: ~14 bytes per node
        examined) unless `records` is False -- then its summary (FitError, error, preemption
        candidates): what a run of 10^5 pods on 10^5 nodes can afford."""
        with collector.paused():
            return self._schedule_pending(callback, records)

    def _schedule_pending(self, callback: Callable[[ScheduleResult], Any] | None,
                          records: bool = True) -> list[ScheduleResult]:
        results = []
        pending, self.pending = self.pending, []
        i = 0
        while i < len(pending):
            pod = pending[i]
            i += 1
            node_local = cross_pod = False
            if pod.node_name:   # pre-bound: kube-scheduler never schedules it
                self.cache.add_pod(pod)
                result = ScheduleResult(pod.key, pod.node_name, 0, 0)
            elif pod.gated:     # PreEnqueue (SchedulingGates) keeps it out of the cycle
                result = ScheduleResult(pod.key, None, 0, 0, error=GATED_MESSAGE)
                self.pending.append(pod)
            else:
                result = self.cycles.schedule_pod(pod)
                cycle = result.cycle
                cross_pod = cycle is not None and cycle.cross_pod
                # (a cycle whose volume PreFilters pass the pod everywhere is node-local too)
                node_local = cycle is not None and (not cycle.dynamic or (
                    not cross_pod and cycle.framework.node_local(pod, cycle.cp)))
                if result.node is not None:
                    self.assume_scheduled(pod, result)
                    result.cycle = None     # (the kernel's buffers are the next cycle's: no record of successes)
                else:
                    self.cycles.post_filter(pod, result, keep=records)
                    self.pending.append(pod)
                    if not records:
                        result.cycle = result.cycle_state = None
            results.append(result)
            collector.collect_young(len(results))
            if callback is not None:
                callback(result)
            if self.cycles.extenders:
                pass            # every pod's cycle asks the extenders: no kernel runs of several pods
            elif node_local and self.cycles.batch_copies and (result.node is not None or not records):
                # the pod the kernel's run left (another template, or one that fits nowhere)
                # has its own cycle next
                i += batches.run_after(self, pod, pending, i, results, callback, records)
            elif (cross_pod or pod.resource_claims) and self.cycles.batch_copies and result.node is not None:
                after = batches.cross_copies_after if cross_pod else batches.claim_copies_after
                i += after(self, pod, pending, i, results, callback)
        return results

    def explain(self, pod: Pod | dict) -> dict:
        """One scheduling cycle for `pod` with per-node filter results and per-plugin scores.

        The record has the fields of the parity explain format (pod, node, numFeasible, filter,
        scores, skippedFilterPlugins, skippedScorePlugins, fitError, ...). Not assumed.
        """
        pod = self.parse_pod(pod)
        return explain_output.record(pod, self.cycles.schedule_pod(pod))

    def explain_pending(self, callback: Callable[[dict], Any] | None = None,
                        only: Collection[str] | None = None) -> list[dict]:
        """explain() every pending pod in order; each chosen pod is assumed before the next.

        A pending pod that already names its node (pre-bound) is explained like any other (only
        that node can pass NodeName) and joins it only if it passed the filters there.
        callback(record): each record as it is made, and none kept (memory does not grow with
        the pods). only: pod keys ("namespace/name") to make records for; the others are
        scheduled the same way, without one.
        """
        with collector.paused():
            return self._explain_pending(callback, only)

    def _explain_pending(self, callback: Callable[[dict], Any] | None,
                         only: Collection[str] | None = None) -> list[dict]:
        records = []
        pending, self.pending = self.pending, []
        for k, pod in enumerate(pending, 1):
            collector.collect_young(k)
            wanted = only is None or pod.key in only
            rec: dict | None = None
            if pod.gated:
                if wanted:
                    rec = explain_output.gated_record(pod, GATED_MESSAGE)
                self.pending.append(pod)
            else:
                result = self.cycles.schedule_pod(pod)
                if wanted:      # read now: PostFilter's dry runs reuse the kernel's buffers
                    rec = explain_output.record(pod, result)
                if result.node is None:
                    self.cycles.post_filter(pod, result)
                    if rec is not None:
                        explain_output.add_post_filter(rec, result)
                # The oracle assumes a pre-bound pod only where its cycle chose it (parity data,
                # mixed_small team-b/pod-0007); the real scheduler binds it as is (schedule_pending).
                if result.node:
                    self.assume_scheduled(pod, result)
                    claims = self.claim_allocations(pod.key) if rec is not None else None
                    if claims is not None and rec is not None:
                        rec["claims"] = claims
                else:
                    self.pending.append(pod)
            if rec is None:
                continue
            if callback is not None:
                callback(rec)
            else:
                records.append(rec)
        return records

    # ---- preemption, for inspection -----------------------------------------------------------------
    def select_victims(self, pod: Pod | dict, node_name: str, state: CycleState | None = None,
                       fits_without: bool = False) -> tuple[list[Pod], int] | None:
        """DefaultPreemption's SelectVictimsOnNode on one node: (victims, how many break a
        PodDisruptionBudget), or None; the cache is left as it was."""
        return self._evaluator(pod).select_victims(self.parse_pod(pod), node_name, state, fits_without)

    def _evaluator(self, pod: Pod | dict) -> Evaluator:
        fw = self.profiles[self.parse_pod(pod).scheduler_name]
        return fw.by_name["DefaultPreemption"].evaluator


def _integer(value: object) -> bool:
    """An int, a NumPy integer: not a bool, a float or a string."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)
