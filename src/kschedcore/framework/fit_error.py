"""FitError: why a pod fits no node, worded byte for byte as kube-scheduler (semantics §5.5)."""
from collections.abc import Iterable
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
    #: the PostFilter plugins' message (DynamicResources, DefaultPreemption); None: not run
    post_filter_message: str | None = None

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

    @property
    def full_message(self) -> str:
        """The message with the PostFilter part, as the pod's condition and events show it."""
        if self.post_filter_message:
            return f"{self.message} {self.post_filter_message}"
        return self.message

    def __str__(self) -> str:
        return self.message


def absent_reason(narrowed: Iterable[str]) -> str:
    """The status of the nodes PreFilterResults left out (sets.List order: sorted)."""
    return f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(narrowed))}]"
