"""Handle: what in-tree plugins reach of the scheduler (kube-scheduler's framework.Handle): the
cache, one-node evaluations for preemption's what-if runs, the profile of a pod, and -- once a
loop drives the scheduler -- whether preemption is acted on."""

from typing import Any


class Handle:
    def __init__(self, cache):
        self.cache = cache
        self.schedule: Any = None       # the ScheduleOne of the scheduler, set once it exists
        #: a loop evicts victims and nominates (DefaultPreemption then chooses them)
        self.preemption_acts = False
        #: pods whose victims the loop is deleting (DefaultPreemption's PreEnqueue holds them)
        self.preempting = set()
        #: placed pods being deleted by a preemption, as the API server shows them (a
        #: deletionTimestamp and the DisruptionTarget condition): live mode fills it
        self.terminating = set()
        #: nominated_node(pod): the node a loop nominated the pod to, or None
        self.nominated_node: Any = lambda pod: None

    def evaluate(self, pod, row: int, state=None):
        """The pod's Filter plugins on one node row, as the cache holds it now (a
        ScheduleResult): preemption's what-if runs, which never ask the extenders."""
        return self.schedule.evaluate_node(pod, row, state, extend=False)

    @property
    def extenders(self) -> list:
        """The scheduler's extenders (framework.Handle's Extenders())."""
        return self.schedule.extenders if self.schedule is not None else []

    def framework_for(self, pod):
        return self.schedule.frameworks[pod.scheduler_name]
