"""SchedulingGates (plugins/schedulinggates): the PreEnqueue plugin that holds pods with
spec.schedulingGates out of the active queue (semantics §8.5)."""
from ...framework.cluster_events import ActionType as A, EventResource as R, Queue, QueueSkip, scheduling_gates, with_hint


class SchedulingGates:
    name = "SchedulingGates"

    def __init__(self, args=None, handle=None):
        pass

    def pre_enqueue(self, pod):
        try:
            if not pod.raw["spec"].get("schedulingGates"):
                return None
        except (AttributeError, KeyError, TypeError):
            pass
        gates = scheduling_gates(pod)
        return f"waiting for scheduling gates: [{' '.join(gates)}]" if gates else None

    def events_to_register(self):
        return [with_hint(R.Pod, A.UpdatePodSchedulingGatesEliminated, gates_removed)]


def gates_removed(pod, old, new):
    """isSchedulableAfterUpdatePodSchedulingGatesEliminated: the pod itself was ungated."""
    return Queue if new.uid == pod.uid else QueueSkip
