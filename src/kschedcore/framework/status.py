"""Status codes (k8s.io/kube-scheduler/framework/interface.go) as the kernels write them."""
from enum import IntEnum


class Code(IntEnum):
    """Per-node filter outcome. NOT_EXAMINED: the scan stopped before reaching the node."""
    NOT_EXAMINED = 0
    SUCCESS = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3

    @property
    def go_name(self) -> str:
        return _GO_NAMES[self]


_GO_NAMES = {
    Code.NOT_EXAMINED: "",
    Code.SUCCESS: "Success",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
}
