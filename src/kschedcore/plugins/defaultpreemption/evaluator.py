"""DefaultPreemption's Evaluator (framework/preemption/preemption.go): the dry run over the
potential nodes, SelectVictimsOnNode, and pickOneNodeForPreemption -- on the kernel, one node at
a time, or, where resources alone decide, every node at once (on_resources.py).

What-if evaluations take pods off the cache's node for a moment (Cache.without) and run the
pod's Filters on that one node through the Scheduler's handle; the cache is left as it was,
placement order included.
"""
import numpy as np

from ...extender.interface import Victims
from ...extender.runtime import call_extenders, preempting
from ...framework.interface import PluginError
from ...framework.status import Code
from ...objects.disruption import split_by_violation
from . import on_resources
from .ranking import NO_VICTIMS, pick_one_node, rank_keys, victims_in_order



class Candidates:
    """The dry run's candidate nodes (names in node order); `rows`: their node rows when the
    dry run was decided on resources (victims are then chosen on arrays too)."""
    __slots__ = ("names", "rows", "errors")

    def __init__(self, names, rows=None, errors=()):
        self.names, self.rows = tuple(names), rows
        #: the dry run's Error statuses (a node that fits with every pod still on it)
        self.errors = tuple(errors)

    def __bool__(self):
        return bool(self.names)


class Evaluator:
    #: decide on resources alone where they do (False: every node on the kernel, for comparison)
    on_resources = True

    def __init__(self, handle):
        self.handle = handle

    @property
    def cache(self):
        return self.handle.cache

    # ---- the dry run ------------------------------------------------------------------------------
    def find_candidates(self, pod, cycle, args) -> tuple:
        """DryRunPreemption up to enough candidates: (Candidates, {reason: nodes} of the
        examined nodes that are not, how many were examined). The dry run stops once enough
        candidates are found (kube-scheduler starts at a random offset among the potential
        nodes; kschedcore at the first, in node order)."""
        screened = on_resources.screen(self, pod, cycle) if self.on_resources else None
        if screened is not None:
            enough = num_candidates(args, screened.count)
            if enough and len(screened.fitting):
                rows = screened.rows[screened.fitting[:enough]]
                return Candidates(self._names(rows), rows), {}, 0
            return Candidates(()), (screened.reasons() if enough else {}), (screened.count if enough else 0)
        statuses = cycle.diagnosis().node_statuses()
        potential = [n for n, (code, _) in statuses.items() if code == Code.UNSCHEDULABLE]
        enough = num_candidates(args, len(potential))
        reasons: dict[str, int] = {}
        examined = 0
        found: list = []
        errors: list = []
        by_extender = cycle.diagnosis().extender_statuses()
        for name in potential:
            if len(found) >= enough:
                break
            if name in by_extender:
                # the pod passed every Filter plugin there: SelectVictimsOnNode reprieves every
                # lower-priority pod, and an empty victim list is an Error status
                examined += 1
                if self.cache.lower_priority(pod.priority, name):
                    errors.append(f'expected at least one victim pod on node "{name}"')
                else:
                    reasons[NO_VICTIMS] = reasons.get(NO_VICTIMS, 0) + 1
                continue
            still = self.dry_run(pod, name, cycle.state)
            if still is None:
                found.append(name)
                continue
            examined += 1
            for r in still:
                reasons[r] = reasons.get(r, 0) + 1
        return Candidates(found, errors=errors), reasons, examined

    def _names(self, rows) -> tuple:
        nodes = self.cache.table.nodes
        return tuple(nodes[r].name for r in rows.tolist())

    def dry_run(self, pod, node_name: str, state=None):
        """SelectVictimsOnNode's first step: with every lower-priority pod off the node, does
        the pod fit? None if it does, else the reasons it still does not."""
        lower = self.cache.lower_priority(pod.priority, node_name)
        if not lower:
            return [NO_VICTIMS]
        with self.cache.without(lower, node_name):
            row = self.cache.table.row_of[node_name]
            try:
                state = self._what_if(pod, state, node_name, removed=lower)
            except PluginError as e:      # kube-scheduler: an Error status on the node
                return [str(e)]
            result = self.handle.evaluate(pod, row, state)
            if result.node is not None:
                return None
            cycle = result.cycle
            if cycle.rejection is not None:
                return [result.fit_error.pre_filter_message]
            return cycle.framework.node_reasons(row)

    # ---- SelectVictimsOnNode, pickOneNodeForPreemption ------------------------------------------
    def select_candidate(self, pod, cycle, candidates):
        """The node and victims to preempt for: (node name, victims) or None. Raises
        ExtenderError (an extender that supports preemption refused the candidates)."""
        extenders = preempting(self.handle.extenders, pod)
        if extenders:
            return self._through_extenders(pod, cycle, candidates, extenders)
        if candidates.rows is not None:
            return on_resources.victims(self, pod, candidates.names, candidates.rows)
        found = []
        for node in candidates.names:
            # a candidate of the dry run: it fits without its lower-priority pods
            victims = self.select_victims(pod, node, cycle.state, fits_without=True)
            if victims and victims[0]:
                found.append((node, *victims))
        if not found:
            return None
        pick = pick_one_node(*rank_keys([(v, n) for _, v, n in found]), lambda tied: self._latest_start(
            [found[i][1] for i in tied]))
        return found[pick][0], found[pick][1]

    def _through_extenders(self, pod, cycle, candidates, extenders):
        """callExtenders between the dry run and SelectCandidate: every candidate's victims
        are sent, and the candidates and victims the extenders return are ranked."""
        victims = {}
        for node in candidates.names:
            chosen = self.select_victims(pod, node, cycle.state, fits_without=True)
            if chosen and chosen[0]:
                victims[node] = Victims(list(chosen[0]), chosen[1])
        if not victims:
            return None
        victims = call_extenders(extenders, pod, victims, self._node_pods)
        if not victims:
            return None
        names = [n for n in candidates.names if n in victims] + sorted(set(victims) - set(candidates.names))
        found = [(n, victims[n].pods, victims[n].num_pdb_violations) for n in names]
        pick = pick_one_node(*rank_keys([(v, k) for _, v, k in found]), lambda tied: self._latest_start(
            [found[i][1] for i in tied]))
        return found[pick][0], found[pick][1]

    def _node_pods(self, node_name: str):
        return self.cache.pods_on(node_name) if self.cache.node(node_name) is not None else None

    def _latest_start(self, victim_lists) -> np.ndarray:
        """Per candidate: the earliest start among its most important victims."""
        started = self.cache.start_time
        out = []
        for victims in victim_lists:
            top = max(v.priority for v in victims)
            out.append(min(started(v.key) for v in victims if v.priority == top))
        return np.asarray(out, np.int64)

    def potential_victims(self, pod, node_name: str):
        """The node's lower-priority pods in reprieve order -- those whose eviction would break
        a PodDisruptionBudget first, each group most important first (MoreImportantPod: higher
        priority, then earlier started) -- and the set of the budget-breaking ones."""
        started = self.cache.start_time
        pods = sorted(self.cache.lower_priority(pod.priority, node_name), key=lambda p: (-p.priority, started(p.key)))
        violating, other = split_by_violation(pods, list(self.cache.pdbs.values()))
        return violating + other, {p.key for p in violating}

    def select_victims(self, pod, node_name: str, state=None, fits_without: bool = False):
        """SelectVictimsOnNode: (victims, how many of them break a PodDisruptionBudget) -- every
        lower-priority pod is taken off, then each is put back in reprieve order if the pod still
        fits; None when it does not fit even without them. state: the failed cycle's CycleState
        (the custom PreFilter plugins' RemovePod / AddPod follow the pods off and back on a clone
        of it). fits_without: the dry run found that the pod fits without them."""
        order, breaking = self.potential_victims(pod, node_name)
        if not order:
            return None
        victims, cache = [], self.cache
        with cache.without(order, node_name) as off:
            try:
                state = self._what_if(pod, state, node_name, removed=order)
                if not fits_without and not self.fits_on(pod, node_name, state):
                    return None
                for p in order:
                    cache.put_back(p, node_name, off[p.key])
                    self._what_if(pod, state, node_name, added=[p], clone=False)
                    if not self.fits_on(pod, node_name, state):
                        cache.take_off(p.key)
                        self._what_if(pod, state, node_name, removed=[p], clone=False)
                        victims.append(p)
            except PluginError:
                return None
            return victims_in_order(victims, breaking)

    def fits_on(self, pod, node_name: str, state=None) -> bool:
        row = self.cache.table.row_of.get(node_name)
        return row is not None and self.handle.evaluate(pod, row, state).node is not None

    def _what_if(self, pod, state, node_name, removed=(), added=(), clone=True):
        framework = self.handle.framework_for(pod)
        return framework.custom.what_if(pod, state, node_name, removed, added, clone)


def num_candidates(args: dict, n: int) -> int:
    """calculateNumCandidates: how many candidate nodes the dry run looks for."""
    k = n * args.get("minCandidateNodesPercentage", 10) // 100
    k = max(k, args.get("minCandidateNodesAbsolute", 100))
    return min(k, n)
