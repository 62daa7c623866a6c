"""DefaultPreemption (plugins/defaultpreemption, framework/preemption): the PostFilter that finds
nodes where evicting lower-priority pods lets the pod fit (semantics §5.5, §9).

Its dry run is exact: per node that failed with Unschedulable, the pod's Filters run again with
the node's lower-priority pods taken off (evaluator.py); where resources alone decide, every
node at once on arrays (on_resources.py). When no node can be made to fit, the message says why,
as kube-scheduler writes it. In the loop (the Scheduler's handle says the pod's preemption is
acted on) it also chooses the victims and the node, and returns them as the PostFilterResult
the loop acts on; otherwise it reports the candidates. While the loop deletes a preemptor's
victims (asynchronously, as SchedulerAsyncPreemption does), its PreEnqueue holds the preemptor.
"""
from functools import lru_cache

from ...errors import ValidationError
from ...framework.cluster_events import ActionType as A, EventResource as R, QueueSkip, with_hint
from ...framework.fit_error import FitError
from ...extender.interface import ExtenderError
from ...framework.interface import Error, PostFilterResult, Unschedulable
from ...framework.status import Code
from .evaluator import NO_VICTIMS, Evaluator

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NEVER = "not eligible due to preemptionPolicy=Never."
WAITING = "waiting for the preemption for this pod to be finished"
TERMINATING = "not eligible due to a terminating pod on the nominated node."


class DefaultPreemption:
    name = "DefaultPreemption"
    in_tree_post_filter = True      # post_filter gets the failed Cycle, not a statuses map

    def __init__(self, args=None, handle=None):
        self.args = args or {}
        validate_args(self.args)
        self.handle = handle
        # None only in a plugin made without a handle (its args checked), which runs no cycle
        self.evaluator: Evaluator = Evaluator(handle) if handle is not None else None  # type: ignore[assignment]

    def pre_enqueue(self, pod):
        """PreEnqueue (SchedulerAsyncPreemption): a pod whose victims are still being deleted
        waits in the unschedulable pool."""
        if self.handle is not None and pod.key in self.handle.preempting:
            return WAITING
        return None

    def events_to_register(self):
        """Pod deletions may ungate a pod this PreEnqueue held; the hint says Skip, leaving the
        decision to the plugins that rejected it (isPodSchedulableAfterPodDeletion)."""
        return [with_hint(R.Pod, A.Delete, lambda pod, old, new: QueueSkip)]

    def post_filter(self, state, pod, cycle):
        """Evaluator.Preempt: a PostFilterResult (success) or Unschedulable("preemption: ...")."""
        n_all = len(cycle.cache.table)
        below = cycle.cache.any_below(pod.priority)
        if self.settles(pod, below):
            return self.settled(pod, below, cycle.count_status(Code.UNSCHEDULABLE), n_all)
        if self.handle is not None and self.handle.terminating and self._terminating_on_nominated(pod, cycle):
            return _TERMINATING
        args = self.args
        if cycle.cache.pdbs:     # upstream stops once a candidate breaks no budget: look at every node
            args = {**args, "minCandidateNodesPercentage": 100}
        candidates, reasons, examined = self.evaluator.find_candidates(pod, cycle, args)
        if not candidates and candidates.errors:        # utilerrors.NewAggregate
            errors = list(dict.fromkeys(sorted(candidates.errors)))
            return Error("preemption: " + (errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"))
        if not candidates:
            absent = n_all - examined
            if absent:
                reasons[NOT_HELPFUL] = reasons.get(NOT_HELPFUL, 0) + absent
            return Unschedulable("preemption: " + FitError(pod.key, n_all, reasons=reasons).message)
        if not self.handle.preemption_acts:
            return PostFilterResult("", candidates=candidates.names)
        try:
            best = self.evaluator.select_candidate(pod, cycle, candidates)
        except ExtenderError as e:      # callExtenders' error: the PostFilter's Error status
            return Error(f"preemption: {e}")
        if best is None:
            return PostFilterResult("", candidates=candidates.names)
        node, victims = best
        return PostFilterResult(node, tuple(v.key for v in victims), candidates=candidates.names)

    def _terminating_on_nominated(self, pod, cycle) -> bool:
        """PodEligibleToPreemptOthers' second half: a lower-priority pod on the pod's nominated
        node is still being deleted by a preemption (unless Filter found that node
        UnschedulableAndUnresolvable)."""
        node = self.handle.nominated_node(pod)
        if not node:
            return False
        status = cycle.diagnosis().node_statuses().get(node)       # (Code, plugin)
        if status is not None and status[0] == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return False
        terminating = self.handle.terminating
        return any(p.priority < pod.priority and p.key in terminating for p in cycle.cache.pods_on(node))

    def settles(self, pod, below: bool) -> bool:
        """post_filter answers without a dry run: preemptionPolicy Never, or no placed pod below
        the pod's priority (`below` False: no victim anywhere)."""
        return not below or _never(pod)

    def settled(self, pod, below: bool, unschedulable: int, n_all: int):
        """That answer (where it settles): the `unschedulable` nodes have no victims, preemption
        helps none of the others."""
        return _NEVER if _never(pod) else _no_victims(unschedulable, n_all)


def _never(pod) -> bool:
    return (pod.raw.get("spec") or {}).get("preemptionPolicy") == "Never"


_NEVER = Unschedulable("preemption: " + NEVER)
_TERMINATING = Unschedulable("preemption: " + TERMINATING)


@lru_cache(maxsize=1024)
def _no_victims(unschedulable: int, n_all: int):
    """(Statuses are frozen: one for every failed cycle with these counts.)"""
    reasons = {NO_VICTIMS: unschedulable} if unschedulable else {}
    if n_all - unschedulable:
        reasons[NOT_HELPFUL] = n_all - unschedulable
    return Unschedulable("preemption: " + FitError("", n_all, reasons=reasons).message)


def validate_args(args: dict):
    """DefaultPreemptionArgs as ValidateDefaultPreemptionArgs checks them."""
    pct = args.get("minCandidateNodesPercentage", 10)
    absolute = args.get("minCandidateNodesAbsolute", 100)
    for name, v, hi in (("minCandidateNodesPercentage", pct, 100), ("minCandidateNodesAbsolute", absolute, None)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 0 or (hi is not None and v > hi):
            rng = "[0, 100]" if hi else ">= 0"
            raise ValidationError("DefaultPreemptionArgs", name, f"Invalid value: {v!r}: not in valid range {rng}")
    if pct == 0 and absolute == 0:
        raise ValidationError("DefaultPreemptionArgs", "minCandidateNodesPercentage",
                              "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute")
