"""The PostFilter point: DynamicResources, then DefaultPreemption (semantics §5.5, §9;
plugins/defaultpreemption, framework/preemption).

DefaultPreemption's dry run is exact: per node that failed with Unschedulable, the pods of
lower priority are taken off the node and the pod's Filters run again on it (through the same
kernel). When no node can be made to fit, the message says why, as kube-scheduler writes it.
When some node could be freed by preempting lower-priority pods, kschedcore reports the
candidate but does not evict (preemption itself is not implemented yet).
"""
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import ValidationError
from ..framework.fit_error import FitError
from ..framework.interface import UNSCHEDULABLE, Status

NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NO_CLAIMS = "no new claims to deallocate"
NOT_FOUND = "not found"          # DynamicResources' PostFilter after its PreFilter never ran
NEVER = "not eligible due to preemptionPolicy=Never."


@dataclass
class Screened:
    """The dry run of every potential node (status Unschedulable) decided at once, in node
    order (where resources alone decide: Scheduler._screen)."""
    count: int                         # potential nodes
    fitting: Sequence[int]             # positions of those where the pod fits without its lower-priority pods
    names: Callable                    # names(positions) -> node names
    reasons: Callable                  # reasons() -> {reason: nodes} over the others


@dataclass
class PostFilterResult:
    message: str                       # "" when a PostFilter succeeded
    #: nodes where preempting lower-priority pods would make the pod fit (not acted on)
    candidates: tuple = ()
    #: a custom PostFilter's success (framework.interface.PostFilterResult)
    nomination: object = None


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


def num_candidates(args: dict, n: int) -> int:
    """calculateNumCandidates: how many candidate nodes the dry run looks for."""
    k = n * args.get("minCandidateNodesPercentage", 10) // 100
    k = max(k, args.get("minCandidateNodesAbsolute", 100))
    return min(k, n)


def post_filter(post_filters, pod, statuses, n_all: int, prefilter_rejected: bool, dry_run,
                args=None, run_custom=None) -> PostFilterResult:
    """RunPostFilterPlugins: until one succeeds, errors or says UnschedulableAndUnresolvable;
    Unschedulable messages accumulate.

    statuses: {node name: (code name, plugin)} of the cycle, or just the number of
    Unschedulable nodes when no node holds a lower-priority pod (then none has victims), or
    the dry run already decided for every potential node (Screened);
    dry_run(node name) -> None when the pod fits there without its lower-priority pods, else
    the reasons it still does not.
    args: DefaultPreemptionArgs (how many candidates are enough).
    run_custom(plugin) -> a custom PostFilter plugin's answer (post_filters holds the
    in-tree plugins by name, custom ones as objects).
    """
    messages = []
    for name in post_filters:
        if not isinstance(name, str):
            r = run_custom(name)
            if isinstance(r, Status):
                if r.code != UNSCHEDULABLE:       # UnschedulableAndUnresolvable or Error: the last word
                    return PostFilterResult(r.message)
                messages.extend(r.reasons)
                continue
            return PostFilterResult("", nomination=r)
        if name == "DynamicResources":
            if prefilter_rejected:         # an Error status: PostFilter stops here
                return PostFilterResult(", ".join(messages + [NOT_FOUND]))
            messages.append(NO_CLAIMS)
        elif name == "DefaultPreemption":
            message, candidates = _preempt(pod, statuses, n_all, dry_run, args or {})
            if candidates:                 # Success: no message
                return PostFilterResult("", candidates)
            messages.append("preemption: " + message)
    return PostFilterResult(", ".join(messages))


def _preempt(pod, statuses, n_all, dry_run, args):
    """Evaluator.Preempt up to choosing a candidate: (message, candidate node names).

    The dry run stops once enough candidates are found (kube-scheduler starts at a random
    offset among the potential nodes; kschedcore at the first, in node order)."""
    if ((pod.raw.get("spec") or {}).get("preemptionPolicy")) == "Never":
        return NEVER, ()
    if isinstance(statuses, int):        # no lower-priority pod anywhere: no node has victims
        reasons = {NO_VICTIMS: statuses} if statuses else {}
        if n_all - statuses:
            reasons[NOT_HELPFUL] = n_all - statuses
        return FitError(pod.key, n_all, reasons=reasons).message, ()
    if isinstance(statuses, Screened):
        # the loop below, its dry runs known: the first `enough` fitting nodes, else every node
        # examined (none when none is enough)
        enough = num_candidates(args, statuses.count)
        if enough and len(statuses.fitting):
            return "", statuses.names(statuses.fitting[:enough])
        reasons, examined = (statuses.reasons(), statuses.count) if enough else ({}, 0)
    else:
        potential = [n for n, (code, _) in statuses.items() if code == "Unschedulable"]
        enough = num_candidates(args, len(potential))
        reasons, examined, candidates = {}, 0, []
        for name in potential:
            if len(candidates) >= enough:
                break
            still = dry_run(name)
            if still is None:
                candidates.append(name)
                continue
            examined += 1
            for r in still:
                reasons[r] = reasons.get(r, 0) + 1
        if candidates:
            return "", tuple(candidates)
    absent = n_all - examined
    if absent:
        reasons[NOT_HELPFUL] = reasons.get(NOT_HELPFUL, 0) + absent
    return FitError(pod.key, n_all, reasons=reasons).message, ()
