"""FitError: why a pod fits no node, worded byte for byte as kube-scheduler (semantics §5.5)."""
from dataclasses import dataclass, field

NO_NODES_MESSAGE = "no nodes available to schedule pods"


@dataclass
class FitError:
    """The outcome of a scheduling cycle that found no feasible node.

    ``reasons`` is the histogram {reason: number of nodes}; ``str(err)`` is kube-scheduler's
    ``FitError.Error()`` (without the PostFilter/preemption suffix).
    """
    pod: str
    num_all_nodes: int
    pre_filter_message: str = ""
    reasons: dict = field(default_factory=dict)

    @property
    def message(self) -> str:
        if self.num_all_nodes == 0 and not self.reasons and not self.pre_filter_message:
            return NO_NODES_MESSAGE
        msg = f"0/{self.num_all_nodes} nodes are available:"
        if self.pre_filter_message:
            return msg + f" {self.pre_filter_message}."
        entries = sorted(f"{count} {reason}" for reason, count in self.reasons.items())
        if entries:
            msg += " " + ", ".join(entries) + "."
        return msg

    def __str__(self) -> str:
        return self.message
