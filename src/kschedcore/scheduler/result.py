"""ScheduleResult: one scheduling cycle's outcome (schedule_one.go's ScheduleResult, with the
FitError or error of a failed cycle)."""
from dataclasses import dataclass

from ..framework.fit_error import FitError
from ..framework.interface import CycleState

NO_PROFILE_ERROR = "no profile for schedulerName"
#: the PodScheduled condition's message for a pod the SchedulingGates PreEnqueue plugin holds
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


@dataclass(slots=True)
class ScheduleResult:
    """One scheduling cycle: the chosen node, or the FitError."""
    pod: str
    node: str | None
    feasible_nodes: int
    evaluated_nodes: int
    fit_error: FitError | None = None
    #: a failed cycle that is not a FitError (kube-scheduler: SchedulerError), e.g. a PreScore error
    error: str | None = None
    #: nodes where preempting lower-priority pods would let the pod fit (DefaultPreemption's candidates)
    preemption_candidates: tuple = ()
    #: a PostFilter's success: (PostFilterResult) the node to nominate and the victims to evict
    #: (DefaultPreemption's when the loop acts on preemption, or a custom PostFilter's)
    nomination: object = None
    #: the cycle's CycleState (the pod's binding cycle gets it too)
    cycle_state: CycleState | None = None
    #: the cycle's record (framework.cycle.Cycle): its statuses are `cycle.diagnosis()`
    cycle: object = None

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
    def framework(self):
        """The profile's Framework that ran the cycle (None: no profile for the pod)."""
        return self.cycle.framework if self.cycle is not None else None
