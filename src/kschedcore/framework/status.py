"""Status codes (k8s.io/kube-scheduler/framework/interface.go Code): the ONE encoding.

The compiled pass writes the first four into its per-node status buffer (`_native.ids` C_* ids,
checked equal at import); plugins' Python answers use the rest too. `str(code)` and
`code.go_name` give kube-scheduler's spelling ("UnschedulableAndUnresolvable"), as explain
records and messages print it.
"""
from enum import IntEnum

from .._native import C_NOT_EXAMINED, C_SUCCESS, C_UNRESOLVABLE, C_UNSCHEDULABLE

__all__ = ["Code"]


class Code(IntEnum):
    """A plugin status code, numbered as the compiled pass writes it; `str(code)` is kube-scheduler's
    name of it."""

    #: the Filter pass stopped before reaching the node (kernel buffers only)
    NOT_EXAMINED = C_NOT_EXAMINED
    SUCCESS = C_SUCCESS
    UNSCHEDULABLE = C_UNSCHEDULABLE
    UNSCHEDULABLE_AND_UNRESOLVABLE = C_UNRESOLVABLE
    ERROR = 4
    #: PreFilter / PreScore: the plugin does nothing for this pod; Bind: not this plugin's pod
    SKIP = 5
    #: Permit: the pod waits
    WAIT = 6

    @property
    def go_name(self) -> str:
        return _GO_NAMES[self]

    @property
    def rejects(self) -> bool:
        """Unschedulable or UnschedulableAndUnresolvable."""
        return self in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def __str__(self) -> str:
        return self.go_name


_GO_NAMES = {
    Code.NOT_EXAMINED: "",
    Code.SUCCESS: "Success",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.ERROR: "Error",
    Code.SKIP: "Skip",
    Code.WAIT: "Wait",
}
