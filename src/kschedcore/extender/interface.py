"""The interface the scheduling cycle calls: kube-scheduler's framework.Extender, in Python.

An HTTP extender (`ExtenderConfig`) and an in-process one (a subclass written by the user)
are called the same way. Every method may be called for every scheduling cycle of a pod the
extender is interested in: an extender is a black box, its answers are never cached.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:
    from ..objects.node import Node
    from ..objects.pod import Pod


class ExtenderError(Exception):
    """An extender call failed. Its text is the error kube-scheduler would report (for an HTTP
    extender, Go's error string: the SchedulerError message of the pod's PodScheduled condition)."""


@dataclass
class FilterResult:
    """What an extender's filter answered (`ExtenderFilterResult`).

    node_names: the nodes that pass, in the extender's order.
    failed / failed_and_unresolvable: node name -> message (`FailedNodes`,
    `FailedAndUnresolvableNodes`; the latter wins where a node is in both).
    returned_nodes: for an answer given as full Node objects (an HTTP extender that is not
    nodeCacheCapable), those objects in order: kube-scheduler scores the passing nodes as new
    NodeInfos made from them, without their pods. None where the answer was node names.
    """
    node_names: list[str]
    failed: dict[str, str] = field(default_factory=dict)
    failed_and_unresolvable: dict[str, str] = field(default_factory=dict)
    returned_nodes: list[dict] | None = None


@dataclass
class Victims:
    """The pods preemption would evict on one node, and how many PodDisruptionBudgets that
    violates (`extenderv1.Victims`)."""
    pods: list["Pod"]
    num_pdb_violations: int = 0


class Extender(abc.ABC):
    """kube-scheduler's framework.Extender. Subclass it for an in-process extender; the
    defaults describe an extender with no verbs that is interested in every pod."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The extender's name: an HTTP extender's urlPrefix (as kube-scheduler names it in
        PluginScore lists and messages)."""

    @property
    def weight(self) -> int:
        """The prioritize weight (positive where `is_prioritizer`)."""
        return 0

    def is_ignorable(self) -> bool:
        """Whether an error of this extender is skipped instead of failing the cycle."""
        return False

    def is_interested(self, pod: "Pod") -> bool:
        """Whether the extender is asked about this pod at all."""
        return True

    def is_filter(self) -> bool:
        return False

    def is_prioritizer(self) -> bool:
        return False

    def is_binder(self) -> bool:
        return False

    def supports_preemption(self) -> bool:
        return False

    def filter(self, pod: "Pod", nodes: Sequence["Node"]) -> FilterResult:
        """The nodes of `nodes` the pod may go to. Raises ExtenderError."""
        return FilterResult([n.name for n in nodes])

    def prioritize(self, pod: "Pod", nodes: Sequence["Node"]) -> list[tuple[str, int]]:
        """(node name, score) per node; the cycle multiplies by weight * (100 / 10).
        Raises ExtenderError (kube-scheduler then ignores this extender's scores)."""
        return []

    def bind(self, pod: "Pod", node_name: str) -> None:
        """Binds the pod to the node in place of the Bind plugins. Raises ExtenderError."""
        raise ExtenderError(f"extender {self.name} is not a binder")

    def process_preemption(self, pod: "Pod", victims: dict[str, Victims],
                           node_pods: "Callable[[str], Sequence[Pod] | None] | None" = None,
                           ) -> dict[str, Victims]:
        """The candidates (node name -> victims) the extender accepts, possibly changed.
        `node_pods(node name)` gives the pods on a node (None: no such node): an extender that
        answers with pod UIDs names pods among those (kube-scheduler's NodeInfoLister).
        Raises ExtenderError."""
        return victims
