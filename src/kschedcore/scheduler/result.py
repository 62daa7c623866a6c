"""ScheduleResult: one scheduling cycle's outcome (schedule_one.go's ScheduleResult, with the
FitError or error of a failed cycle)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..framework.fit_error import FitError
from ..framework.interface import CycleState, PostFilterResult

if TYPE_CHECKING:
    from ..framework.cycle import Cycle
    from ..framework.framework import Framework

NO_PROFILE_ERROR = "no profile for schedulerName"
"""The start of a result's error for a pod whose `spec.schedulerName` no profile serves."""
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
"""The PodScheduled condition's message for a pod the SchedulingGates PreEnqueue plugin holds."""
DELETING_REASON = "pending pod being deleted (metadata.deletionTimestamp)"
"""The `ignored` reason of a pending pod with metadata.deletionTimestamp: kube-scheduler's
skipPodSchedule passes it over ("skip schedule deleting pod") and never queues it again."""


class ScheduleResult:
    """One scheduling cycle: the chosen node, or the FitError. (What every cycle has is in
    slots; what only some have are class-level defaults, set on the instance when they differ.)"""
    __slots__ = ("pod", "node", "feasible_nodes", "evaluated_nodes", "cycle_state", "cycle", "__dict__")
    #: a failed cycle's FitError (its PostFilter part in `full_message`)
    fit_error: FitError | None = None
    #: a failed cycle that is not a FitError (kube-scheduler: SchedulerError), e.g. a PreScore error
    error: str | None = None
    #: nodes where preempting lower-priority pods would let the pod fit (DefaultPreemption's candidates)
    preemption_candidates: tuple = ()
    #: a PostFilter's success: (PostFilterResult) the node to nominate and the victims to evict
    #: (DefaultPreemption's when the loop acts on preemption, or a custom PostFilter's)
    nomination: PostFilterResult | None = None
    #: the extenders' prioritize scores (node -> [(extender name, score x weight x 10)]), where any ran
    extender_scores: dict | None = None

    def __init__(self, pod: str, node: str | None, feasible_nodes: int, evaluated_nodes: int,
                 fit_error: FitError | None = None, error: str | None = None,
                 cycle_state: CycleState | None = None, cycle: Cycle | None = None) -> None:
        self.pod, self.node, self.feasible_nodes, self.evaluated_nodes = pod, node, feasible_nodes, evaluated_nodes
        #: the cycle's CycleState (the pod's binding cycle gets it too)
        self.cycle_state = cycle_state
        #: the cycle's record (framework.cycle.Cycle): its statuses are `cycle.diagnosis()`
        self.cycle = cycle
        if fit_error is not None:
            self.fit_error = fit_error
        if error is not None:
            self.error = error

    def summary(self) -> "ScheduleResult":
        """What outlives the cycle: the outcome, its FitError or error, the preemption
        candidates' count -- not the cycle's record (its per-node statuses, its CycleState),
        which costs a few bytes per node and would be kept for every pod still pending."""
        out = ScheduleResult(self.pod, self.node, self.feasible_nodes, self.evaluated_nodes, self.fit_error,
                             self.error)
        if self.preemption_candidates:
            out.preemption_candidates = (len(self.preemption_candidates),)
        return out

    def __repr__(self) -> str:
        why = f", fit_error={self.fit_error.message!r}" if self.fit_error else f", error={self.error!r}" if self.error else ""
        return f"ScheduleResult({self.pod}, node={self.node}, feasible={self.feasible_nodes}{why})"

    @property
    def message(self) -> str | None:
        """What kube-scheduler writes into the pod's PodScheduled condition after this cycle:
        the FitError with its PostFilter part, or the error (None: the cycle chose a node)."""
        return self.fit_error.full_message if self.fit_error is not None else self.error

    @property
    def scheduled(self) -> bool:
        return self.node is not None

    @property
    def gated(self) -> bool:
        """The pod has spec.schedulingGates: kube-scheduler does not attempt it."""
        return self.error == GATED_MESSAGE

    @property
    def ignored(self) -> bool:
        """The pod names a schedulerName no profile has: not this scheduler's pod."""
        return self.error is not None and self.error.startswith(NO_PROFILE_ERROR)

    @property
    def framework(self) -> Framework | None:
        """The profile's Framework that ran the cycle (None: no profile for the pod)."""
        return self.cycle.framework if self.cycle is not None else None
