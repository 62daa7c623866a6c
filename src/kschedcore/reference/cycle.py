"""The scheduling cycle of the default profile: node-local plugins, InterPodAffinity and
PodTopologySpread (semantics §2, §5).

``ReferenceScheduler.explain(pod)`` runs PreFilter, Filter, PreScore, Score, Normalize and
selectHost for one pod on the current state and returns a parity explain record
(/work/shared/parity/README.md); ``assume`` adds the pod to its node.  ``explain_workload``
drives a whole workload.

InterPodAffinity is implemented in ``interpod`` (it needs the Namespace objects: the
``namespaces=`` keyword), PodTopologySpread in ``topology`` (its default constraints need the
Services, ReplicationControllers, ReplicaSets and StatefulSets: the ``objects=`` keyword; its
args, e.g. List default constraints: ``spread_args=``).  The volume plugins (VolumeRestrictions,
NodeVolumeLimits, VolumeBinding, VolumeZone) are reached through ``volumes`` (VolumeBinding
lives in ``volumebinding``; storage objects: ``objects=`` / ``add_object`` with their kinds).
DynamicResources is not implemented: it is treated as skipping at PreFilter and PreScore,
which is what kube-scheduler does for pods without claims.
"""
from __future__ import annotations

import copy
import random
from collections.abc import Sequence

from . import affinity, interpod, plugins, topology, volumes
from .plugins import ERROR, UU, FitArgs, PreFilterOutcome, Status, parse_fit_args
from .requests import fit_filter_request
from .state import Cluster, NodeInfo, pod_key

# §2: the default profile, in order.
PRE_FILTER_PLUGINS = [
    "NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
    "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources",
]
FILTER_PLUGINS = [
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
    "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
    "InterPodAffinity", "DynamicResources",
]
PRE_SCORE_PLUGINS = [
    "TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
    "InterPodAffinity", "NodeResourcesBalancedAllocation",
]
SCORE_PLUGINS = [  # (name, weight)
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("VolumeBinding", 1),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
]
#: Not implemented by the reference: always Skip at PreFilter / PreScore.
NOT_IMPLEMENTED = {"DynamicResources"}

# §5.2
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """Scheduler.numFeasibleNodesToFind (§5.2); Go int32 division (operands >= 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = 50 - num_all_nodes // 125
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    num = num_all_nodes * pct // 100
    if num < MIN_FEASIBLE_NODES_TO_FIND:
        return MIN_FEASIBLE_NODES_TO_FIND
    return num


def go_list_format(items: list[str]) -> str:
    """fmt %v of a []string: ``[a b c]``."""
    return "[" + " ".join(items) + "]"


def fit_error_message(num_all_nodes: int, statuses: dict[str, Status], absent: Status | None,
                      pre_filter_msg: str = "") -> str:
    """FitError.Error() without the PostFilter part (§5.5)."""
    msg = f"0/{num_all_nodes} nodes are available:"
    if pre_filter_msg:
        return msg + f" {pre_filter_msg}."
    histogram: dict[str, int] = {}
    for st in statuses.values():
        for reason in st.reasons:
            histogram[reason] = histogram.get(reason, 0) + 1
    if len(statuses) < num_all_nodes and absent is not None:
        for reason in absent.reasons:
            histogram[reason] = histogram.get(reason, 0) + (num_all_nodes - len(statuses))
    entries = sorted(f"{count} {reason}" for reason, count in histogram.items())  # plain strings
    if entries:
        msg += " " + ", ".join(entries) + "."
    return msg


class ReferenceScheduler:
    """Plain-Python kube-scheduler v1.34.1 default profile over node-local plugins,
    InterPodAffinity (``namespaces``: raw Namespace objects, see ``add_namespace``) and
    PodTopologySpread (``objects``: kind -> raw Services / controllers, see ``add_object``)."""

    def __init__(self, nodes: list[dict], bound_pods: Sequence[dict] = (), *,
                 percentage_of_nodes_to_score: int | None = 100, tie_break: str = "first",
                 scoring_strategy: dict | None = None, seed: int = 0, namespaces: Sequence[dict] = (),
                 objects: dict | None = None, spread_args: dict | None = None):
        if tie_break not in ("first", "random"):
            raise ValueError(f"tie_break must be 'first' or 'random', not {tie_break!r}")
        self.cluster = Cluster(nodes)
        self.percentage = percentage_of_nodes_to_score
        self.tie_break = tie_break
        self.rng = random.Random(seed)
        self.fit_args: FitArgs = parse_fit_args(scoring_strategy)
        self.spread_args = topology.spread_args(spread_args)
        self.next_start_node_index = 0
        self.input_index = {name: i for i, name in enumerate(self.cluster.input_order)}
        #: PVCs, PVs, StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities (volume plugins)
        self.storage = volumes.Storage()
        self._cycle_state: dict = {}     # the last cycle's CycleState, for VolumeBinding's Reserve
        #: Namespace objects: name -> labels (what namespaceSelectors see)
        self.namespaces: dict[str, dict] = {}
        for ns in namespaces:
            self.add_namespace(ns)
        #: Services, ReplicationControllers, ReplicaSets, StatefulSets (PodTopologySpread's
        #: DefaultSelector): kind -> raw objects
        self.objects: dict[str, list[dict]] = {}
        for kind, objs in (objects or {}).items():
            for obj in objs:
                self.add_object(kind, obj)
        for pod in bound_pods:
            # §7.1: Succeeded/Failed pods never reach the cache.
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            self.cluster.add_pod(pod, (pod.get("spec") or {}).get("nodeName") or "")

    # --- state changes ---------------------------------------------------------------------

    def add_namespace(self, namespace: dict) -> None:
        meta = namespace.get("metadata") or {}
        self.namespaces[meta.get("name") or ""] = dict(meta.get("labels") or {})

    def add_object(self, kind: str, obj: dict) -> None:
        if kind in volumes.STORAGE_KINDS:
            self.storage.add(obj)
            return
        self.objects.setdefault(kind, []).append(obj)

    def assume(self, pod: dict, node: str) -> None:
        """Assume: a copy of the pod with spec.nodeName = node joins that node (§6 step 1)."""
        assumed = copy.deepcopy(pod)
        assumed.setdefault("spec", {})["nodeName"] = node
        self.cluster.add_pod(assumed, node)

    def schedule(self, pod: dict) -> dict:
        """Explain the pod, then assume it onto the chosen node.

        A pre-bound pod (spec.nodeName set) can only be chosen on its own node (NodeName
        filter); it joins that node when it passed the filters there, and is left out
        otherwise.  This is what the parity oracle did (mixed_small: team-b/pod-0007,
        pre-bound to node-0051 with an untolerated NoExecute taint, is not counted on
        node-0051 by later records), although the README says pre-bound pods join "as is".
        """
        record = self.explain(pod)
        if record["node"] is not None:
            self.assume(pod, record["node"])
            volumes.reserve(pod, record["node"], self._cycle_state, self.storage)
        return record

    # --- one scheduling cycle -----------------------------------------------------------------

    def explain(self, pod: dict) -> dict:
        record: dict = {"pod": pod_key(pod), "node": None}
        if (pod.get("spec") or {}).get("nodeName"):
            record["preBound"] = True
        record.update({"numFeasible": 0, "filter": {}, "scores": {}, "fitError": None})
        num_all = self.cluster.num_nodes()
        if num_all == 0:  # §5.1 step 2
            record["fitError"] = "no nodes available to schedule pods"
            return record

        # --- PreFilter (§2 run rules) ---
        state: dict = {}
        self._cycle_state = state
        skipped_filter: list[str] = []
        result_names: set[str] | None = None
        narrowing: list[str] = []
        reject: Status | None = None
        for name in PRE_FILTER_PLUGINS:
            outcome = self._pre_filter(name, pod, state)
            if outcome.skip:
                skipped_filter.append(name)
                continue
            if outcome.status is not None:
                outcome.status.plugin = name
                if outcome.status.code == ERROR:   # not a rejection: the cycle fails
                    record["error"] = f'running PreFilter plugin "{name}": {outcome.status.message()}'
                    return record
                if outcome.status.code == UU:
                    reject = outcome.status
                    break
                reject = outcome.status   # U: remembered, the loop goes on
                continue
            if outcome.node_names is not None:
                narrowing.append(name)
                result_names = set(outcome.node_names) if result_names is None else (result_names & outcome.node_names)
                if len(result_names) == 0:
                    plist = sorted(narrowing)
                    if len(plist) == 1:
                        text = f"node(s) didn't satisfy plugin {plist[0]}"
                    else:
                        text = f"node(s) didn't satisfy plugin(s) {go_list_format(plist)} simultaneously"
                    reject = Status(UU, [text], plugin=None)
                    break
        if reject is not None:
            for node_name in self.cluster.input_order:
                record["filter"][node_name] = reject.as_record()
            record["preFilterStatus"] = reject.as_record()
            record["fitError"] = fit_error_message(num_all, {}, None, pre_filter_msg=reject.message())
            return record
        record["skippedFilterPlugins"] = sorted(skipped_filter)
        skip_set = set(skipped_filter)

        # --- nominated node first (§5.1 step 4) ---
        statuses: dict[str, Status] = {}
        nominated = (pod.get("status") or {}).get("nominatedNodeName") or ""
        if nominated and nominated in self.cluster.node_infos:
            st = self._run_filters(pod, self.cluster.node_infos[nominated], state, skip_set)
            if st is None:
                record["node"] = nominated
                record["numFeasible"] = 1
                record["scoringSkipped"] = "nominated node passed"
                return record
            statuses[nominated] = st

        # --- node list (§5.1 step 5) ---
        absent: Status | None = None
        node_list = list(self.cluster.tree_order)
        if result_names is not None:
            record["preFilterNodeNames"] = sorted(result_names)
            node_list = [n for n in node_list if n in result_names]
            absent = Status(UU, [f"node(s) didn't satisfy plugin(s) {go_list_format(sorted(narrowing))}"],
                            plugin=" ".join(sorted(narrowing)))

        # --- Filter (§5.2): sequential scan in rotation order ---
        feasible: list[str] = []
        n = len(node_list)
        k = num_feasible_nodes_to_find(self.percentage, n)
        error: Status | None = None
        for i in range(n):
            name = node_list[(self.next_start_node_index + i) % n]
            st = self._run_filters(pod, self.cluster.node_infos[name], state, skip_set)
            if st is None:
                statuses.pop(name, None)
                feasible.append(name)
                if len(feasible) >= k:
                    break
            elif st.code == ERROR:     # not a rejection: the cycle fails
                error = st
                break
            else:
                statuses[name] = st
        self.next_start_node_index = (self.next_start_node_index + len(feasible) + len(statuses)) % num_all
        if error is not None:
            record["error"] = f'running "{error.plugin}" filter plugin: {error.message()}'
            return record

        for name in self.cluster.input_order:
            if name in statuses:
                record["filter"][name] = statuses[name].as_record()
            elif absent is not None and name not in node_list:
                record["filter"][name] = absent.as_record()
        record["numFeasible"] = len(feasible)

        if len(feasible) == 0:
            record["fitError"] = fit_error_message(num_all, statuses, absent)
            return record
        if len(feasible) == 1:
            record["node"] = feasible[0]
            record["scoringSkipped"] = "single feasible node"
            return record

        # --- PreScore ---
        skipped_score: list[str] = []
        state["feasible"] = feasible
        for name in PRE_SCORE_PLUGINS:
            skip, pre_score_error = self._pre_score(name, pod, state)
            if pre_score_error:
                record["error"] = pre_score_error
                return record
            if skip:
                skipped_score.append(name)
        record["skippedScorePlugins"] = sorted(skipped_score)

        # --- Score, NormalizeScore, weights (§4) ---
        per_node: dict[str, dict] = {name: {} for name in feasible}
        totals = {name: 0 for name in feasible}
        for plugin, weight in SCORE_PLUGINS:
            if plugin in skipped_score:
                continue
            raw = {name: self._score(plugin, pod, self.cluster.node_infos[name], state) for name in feasible}
            normalized = self._normalize(plugin, raw, state)
            for name in feasible:
                score = normalized[name]
                if score > plugins.MAX_NODE_SCORE or score < 0:
                    record["error"] = (f"plugin {plugin!r} returns an invalid score {score}, it should in the "
                                       f"range of [0, 100] after normalizing")
                    return record
                per_node[name][plugin] = score * weight
                per_node[name]["raw:" + plugin] = raw[name]
                totals[name] += score * weight
        for name in feasible:
            per_node[name]["total"] = totals[name]
        record["scores"] = {name: per_node[name] for name in self.cluster.input_order if name in per_node}

        # --- selectHost (§5.4) ---
        best = max(totals.values())
        best_nodes = sorted((name for name in feasible if totals[name] == best), key=self.input_index.__getitem__)
        if self.tie_break == "first":
            record["node"] = best_nodes[0]
        else:
            record["node"] = self.rng.choice(best_nodes)
        return record

    # --- extension points -----------------------------------------------------------------------

    def _pre_filter(self, plugin: str, pod: dict, state: dict) -> PreFilterOutcome:
        if plugin in NOT_IMPLEMENTED:
            return PreFilterOutcome(skip=True)
        if plugin == "NodeAffinity":
            return plugins.node_affinity_pre_filter(pod)
        if plugin == "NodePorts":
            return plugins.node_ports_pre_filter(pod)
        if plugin == "NodeResourcesFit":
            state["fit_request"] = fit_filter_request(pod)
            return PreFilterOutcome()
        if plugin == "InterPodAffinity":
            return interpod.pre_filter(pod, self.cluster, self.namespaces, state)
        if plugin == "VolumeRestrictions":
            return volumes.restrictions_pre_filter(pod, self.storage, self.cluster, state)
        if plugin == "NodeVolumeLimits":
            return volumes.limits_pre_filter(pod)
        if plugin == "VolumeBinding":
            return volumes.binding_pre_filter(pod, self.storage, state)
        if plugin == "VolumeZone":
            return volumes.zone_pre_filter(pod, self.storage, state)
        if plugin == "PodTopologySpread":
            return topology.pre_filter(pod, self.cluster, self.objects, state, self.spread_args)
        raise AssertionError(plugin)

    def _run_filters(self, pod: dict, ni: NodeInfo, state: dict, skip: set[str]) -> Status | None:
        """RunFilterPlugins: the first non-Success stops; that status is the node's (§2)."""
        for plugin in FILTER_PLUGINS:
            if plugin in skip or plugin in NOT_IMPLEMENTED:
                continue
            if plugin == "NodeUnschedulable":
                st = plugins.node_unschedulable_filter(pod, ni)
            elif plugin == "NodeName":
                st = plugins.node_name_filter(pod, ni)
            elif plugin == "TaintToleration":
                st = plugins.taint_toleration_filter(pod, ni)
            elif plugin == "NodeAffinity":
                st = plugins.node_affinity_filter(pod, ni)
            elif plugin == "NodePorts":
                st = plugins.node_ports_filter(pod, ni)
            elif plugin == "NodeResourcesFit":
                st = plugins.node_resources_fit_filter(pod, ni, state["fit_request"], self.fit_args)
            elif plugin == "VolumeRestrictions":
                st = volumes.restrictions_filter(pod, ni, state)
            elif plugin == "NodeVolumeLimits":
                st = volumes.limits_filter(pod, ni, self.storage)
            elif plugin == "VolumeBinding":
                st = volumes.binding_filter(pod, ni, self.storage, state)
            elif plugin == "VolumeZone":
                st = volumes.zone_filter(pod, ni, state)
            elif plugin == "InterPodAffinity":
                st = interpod.filter_node(state, ni)
            elif plugin == "PodTopologySpread":
                st = topology.filter_node(state, ni)
            else:
                raise AssertionError(plugin)
            if st is not None:
                st.plugin = plugin
                return st
        return None

    def _pre_score(self, plugin: str, pod: dict, state: dict) -> tuple[bool, str | None]:
        """(skip, error)."""
        if plugin in NOT_IMPLEMENTED:
            return True, None
        if plugin == "TaintToleration":
            return False, None
        if plugin == "VolumeBinding":   # no scorer without StorageCapacityScoring
            return True, None
        if plugin == "NodeAffinity":
            preferred = affinity.pod_preferred_terms(pod)
            if preferred is None:
                return True, None
            if affinity.preferred_terms_parse_error(preferred):
                return False, "running PreScore plugin \"NodeAffinity\": invalid preferred node affinity terms"
            return False, None
        if plugin == "NodeResourcesFit":
            state["fit_score_requests"] = plugins.fit_pod_requests(pod, self.fit_args)
            return False, None
        if plugin == "NodeResourcesBalancedAllocation":
            reqs = plugins.balanced_pod_requests(pod)
            if plugins.balanced_pre_score_skip(reqs):
                return True, None
            state["balanced_requests"] = reqs
            return False, None
        if plugin == "InterPodAffinity":
            return interpod.pre_score(pod, self.cluster, self.namespaces, state)
        if plugin == "PodTopologySpread":
            return topology.pre_score(pod, self.cluster, self.objects, state["feasible"], state, self.spread_args)
        raise AssertionError(plugin)

    def _score(self, plugin: str, pod: dict, ni: NodeInfo, state: dict) -> int:
        if plugin == "TaintToleration":
            return plugins.taint_toleration_score(pod, ni)
        if plugin == "NodeAffinity":
            return plugins.node_affinity_score(pod, ni)
        if plugin == "NodeResourcesFit":
            return plugins.node_resources_fit_score(state["fit_score_requests"], ni, self.fit_args)
        if plugin == "NodeResourcesBalancedAllocation":
            return plugins.balanced_allocation_score(state["balanced_requests"], ni)
        if plugin == "ImageLocality":
            return plugins.image_locality_score(pod, ni, self.cluster)
        if plugin == "InterPodAffinity":
            return interpod.score(state, ni)
        if plugin == "PodTopologySpread":
            return topology.score(state, ni)
        raise AssertionError(plugin)

    def _normalize(self, plugin: str, raw: dict[str, int], state: dict) -> dict[str, int]:
        if plugin == "TaintToleration":
            return plugins.default_normalize(raw, reverse=True)
        if plugin == "NodeAffinity":
            return plugins.default_normalize(raw, reverse=False)
        if plugin == "InterPodAffinity":
            return interpod.normalize(raw)
        if plugin == "PodTopologySpread":
            return topology.normalize(state, raw)
        return dict(raw)  # no ScoreExtensions


def explain_workload(nodes: list[dict], bound_pods: list[dict], pending: list[dict], *,
                     percentage_of_nodes_to_score: int | None = 100, tie_break: str = "first",
                     scoring_strategy: dict | None = None, seed: int = 0,
                     namespaces: Sequence[dict] = (), objects: dict | None = None,
                     spread_args: dict | None = None) -> list[dict]:
    """Schedule ``pending`` in order on ``nodes`` + ``bound_pods``; one explain record each.

    Each chosen pod is assumed onto its node before the next pod.  A pre-bound pod (one with
    spec.nodeName) is evaluated like the others (record with ``preBound: true``) and joins
    spec.nodeName when the filters passed there (see ``ReferenceScheduler.schedule``).
    ``namespaces``: raw Namespace objects (their labels are what namespaceSelectors match).
    ``objects``: kind ("Service", "ReplicationController", "ReplicaSet", "StatefulSet") -> raw
    objects, for PodTopologySpread's default constraints; ``spread_args``: its PodTopologySpreadArgs.
    """
    sched = ReferenceScheduler(nodes, bound_pods, percentage_of_nodes_to_score=percentage_of_nodes_to_score,
                               tie_break=tie_break, scoring_strategy=scoring_strategy, seed=seed,
                               namespaces=namespaces, objects=objects, spread_args=spread_args)
    return [sched.schedule(pod) for pod in pending]
