"""DynamicResources (plugins/dynamicresources), as far as kschedcore meets it: pods with
resource claims are refused at input (not implemented), so its PreFilter always skips; its
PostFilter still speaks in every failed cycle's message, as kube-scheduler's does."""
from ...framework.cluster_events import ActionType as A, EventResource as R, with_hint
from ...framework.interface import Error, Unschedulable

NO_CLAIMS = "no new claims to deallocate"
#: its PostFilter after its PreFilter never ran (an earlier in-tree PreFilter ended the cycle)
NOT_FOUND = "not found"


class DynamicResources:
    name = "DynamicResources"
    in_tree_post_filter = True      # post_filter gets the failed Cycle, not a statuses map

    def __init__(self, args=None, handle=None):
        pass

    def post_filter(self, state, pod, cycle):
        rejection = cycle.rejection
        if rejection is not None and rejection.in_tree:
            return Error(NOT_FOUND)       # reading its PreFilter's state fails
        return Unschedulable(NO_CLAIMS)

    def settles(self, pod, below):
        return True

    def settled(self, pod, below, unschedulable, n_all):
        """post_filter's answer after a cycle no PreFilter rejected (a node-local one)."""
        return _NO_CLAIMS

    def events_to_register(self):
        return [with_hint(R.Node, A.Add | A.UpdateNodeLabel | A.UpdateNodeAllocatable),
                with_hint(R.ResourceClaim, A.Add | A.Update), with_hint(R.Pod, A.UpdatePodGeneratedResourceClaim),
                with_hint(R.DeviceClass, A.Add | A.Update), with_hint(R.ResourceSlice, A.Add | A.Update)]


_NO_CLAIMS = Unschedulable(NO_CLAIMS)
