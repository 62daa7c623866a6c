"""The plugin interface (k8s.io/kube-scheduler/framework/interface.go, cycle_state.go):
CycleState, Status, PreFilterResult, PostFilterResult, and one protocol per extension point.

Every extension-point method of a Python plugin takes the cycle's CycleState first, as
kube-scheduler's do. A scheduling cycle makes one; PreFilter and PreScore write what Filter and
Score read; the binding cycle of the pod (Reserve ... PostBind) gets the same object. A plugin
implements the points it needs as plain methods (the protocols below say their shapes; nothing
has to inherit from them). In-tree plugins, whose per-node work is the compiled pass, implement
KernelPlugin instead (framework/kernel_plugin.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from .status import Code

__all__ = ["SKIP", "MAX_PERMIT_TIMEOUT", "Status", "Unschedulable", "UnschedulableAndUnresolvable", "Error",
           "Allow", "Wait", "Reject", "PreFilterResult", "PostFilterResult", "CycleState", "PluginError",
           "QueueSortPlugin", "PreEnqueuePlugin", "PreFilterPlugin", "PreFilterExtensions", "FilterPlugin",
           "PostFilterPlugin", "PreScorePlugin", "ScorePlugin", "ReservePlugin", "PermitPlugin",
           "PreBindPlugin", "BindPlugin", "PostBindPlugin", "EnqueueExtensions"]

if TYPE_CHECKING:
    import numpy as np

    from ..objects.pod import Pod
    from .custom import NodeColumns

SKIP = type("Skip", (), {"__repr__": lambda self: "SKIP", "__slots__": ()})()
"""A PreFilter / PreScore result meaning "this plugin does nothing for this pod" (its Filter or
Score is then not called), and a Bind plugin's "not mine"."""

SUCCESS = Code.SUCCESS
UNSCHEDULABLE = Code.UNSCHEDULABLE
UNSCHEDULABLE_AND_UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
ERROR = Code.ERROR
WAIT = Code.WAIT

MAX_PERMIT_TIMEOUT = 15 * 60.0
"""kube-scheduler's cap on a Permit plugin's wait, in seconds."""


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's answer: a code and its reasons (joined by ", " in messages); a Permit
    plugin's Wait carries its timeout."""
    code: Code
    reasons: tuple = ()
    timeout: float = 0.0

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    @property
    def rejected(self) -> bool:
        return self.code.rejects

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS


def Unschedulable(*reasons: str) -> Status:
    """A rejection preemption may resolve (code Unschedulable), with its reasons."""
    return Status(Code.UNSCHEDULABLE, reasons)


def UnschedulableAndUnresolvable(*reasons: str) -> Status:
    """A rejection preemption cannot resolve: evicting pods would not help, so preemption skips the node."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def Error(message: str) -> Status:
    """An internal error: the scheduling cycle ends with this message."""
    return Status(Code.ERROR, (message,))


def Allow() -> Status:
    """Permit: the pod may bind."""
    return Status(Code.SUCCESS)


def Wait(timeout: float) -> Status:
    """Permit: the pod waits (capped at 15 minutes, as kube-scheduler caps it)."""
    return Status(Code.WAIT, timeout=min(float(timeout), MAX_PERMIT_TIMEOUT))


def Reject(message: str) -> Status:
    """Permit: the pod is rejected (unreserved and requeued)."""
    return Status(Code.UNSCHEDULABLE, (message,))


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """PreFilter's answer narrowing the nodes to evaluate (kube-scheduler merges every
    plugin's by intersection; names that are not nodes are ignored)."""
    node_names: frozenset

    def __init__(self, node_names: Iterable[str]) -> None:
        object.__setattr__(self, "node_names", frozenset(node_names))


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """A PostFilter plugin's success: the node the pod is nominated to, and the pods (keys
    "namespace/name") to evict for it -- the loop deletes them through its event path.
    candidates: DefaultPreemption's nodes where preempting would let the pod fit (the bare
    Scheduler reports them without choosing victims: nominated_node_name is then "")."""
    nominated_node_name: str
    victims: tuple = ()
    candidates: tuple = ()


class CycleState:
    """Data the plugins of one pod's cycle share, by key (kube-scheduler's CycleState).

    The framework clones it for what-if evaluations (the preemption dry run): `clone()` copies
    the mapping and calls `clone()` on each value that has one (StateData.Clone), so a plugin
    whose AddPod/RemovePod mutate its data must give the data a `clone`.
    """
    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        #: plugins whose PreFilter / PreScore returned SKIP this cycle
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str) -> Any:
        """The value under key; KeyError (kube-scheduler: ErrNotFound) when absent."""
        try:
            return self._data[key]
        except KeyError:
            raise KeyError(f"{key!r} not found in the cycle state") from None

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def clone(self) -> "CycleState":
        copy = CycleState()
        copy._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        return copy


class PluginError(Exception):
    """A plugin answered Error: the cycle ends with this message, as kube-scheduler's
    SchedulerError does (`running PreFilter plugin "X": ...`)."""


class PreFilterRejection(Exception):
    """A PreFilter returned UnschedulableAndUnresolvable (or, after all PreFilters ran,
    Unschedulable): the cycle stops, every node gets this status and the FitError says
    `message`. plugins: the rejector plugins (several when PreFilterResults do not meet)."""

    def __init__(self, plugin: str, message: str, code: Code = Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                 plugins: Iterable[str] | None = None) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.message = message
        self.code = code
        self.plugins = frozenset(plugins) if plugins else frozenset((plugin,))

    #: whether an in-tree plugin rejected (set by the framework when it catches the rejection)
    in_tree: bool


# ---- the extension points, as protocols (shapes only: implement the methods you need) --------
class QueueSortPlugin(Protocol):
    """QueueSort: `less(a, b)` orders the activeQ over QueuedPodInfos."""

    def less(self, a: Any, b: Any) -> bool: ...                         # over QueuedPodInfos


class PreEnqueuePlugin(Protocol):
    """PreEnqueue: `pre_enqueue(pod)` returns None, or why the pod waits outside the activeQ."""

    def pre_enqueue(self, pod: Pod) -> str | None: ...                  # None, or why it waits


class PreFilterPlugin(Protocol):
    """PreFilter: returns None, `SKIP`, a `PreFilterResult` (the only nodes worth filtering) or a
    rejecting `Status` (every node gets it)."""

    # None, SKIP, a PreFilterResult or a Status
    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeColumns) -> PreFilterResult | Status | object: ...


class PreFilterExtensions(Protocol):
    """PreFilter's AddPod / RemovePod: update the cycle state on a clone as preemption's dry run
    takes lower-priority pods off a node and puts them back."""

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_name: str) -> Status | None: ...
    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_name: str) -> Status | None: ...


class FilterPlugin(Protocol):
    """Filter: per node row, 0 (passes), 1 (Unschedulable) or 2 (UnschedulableAndUnresolvable), or
    booleans (True passes)."""

    def filter(self, state: CycleState, pod: Pod, nodes: NodeColumns) -> np.ndarray: ...  # per row: 0 / 1 / 2, or bools


class PostFilterPlugin(Protocol):
    """PostFilter: runs when no node fits; `statuses` maps node name to (Code, plugin name). Returns
    a `PostFilterResult` (nominate, evicting its victims) or an Unschedulable `Status`."""

    def post_filter(self, state: CycleState, pod: Pod, statuses: dict) -> PostFilterResult | Status: ...


class PreScorePlugin(Protocol):
    """PreScore: returns None, `SKIP` (its Score is not called) or an Error status."""

    # None, SKIP or an Error status
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeColumns, rows: np.ndarray) -> Status | object: ...


class ScorePlugin(Protocol):
    """Score and NormalizeScore: int64 per feasible row; normalised scores lie in [0, 100]."""

    def score(self, state: CycleState, pod: Pod, nodes: NodeColumns, rows: np.ndarray) -> np.ndarray: ...  # int64 per row
    def normalize_score(self, state: CycleState, pod: Pod, rows: np.ndarray, scores: np.ndarray) -> np.ndarray: ...


class ReservePlugin(Protocol):
    """Reserve and Unreserve: a failed Reserve unreserves every Reserve plugin in reverse order."""

    def reserve(self, state: CycleState, pod: Pod, node_name: str, handle: Any) -> Status | None: ...  # None or failure
    def unreserve(self, state: CycleState, pod: Pod, node_name: str, handle: Any) -> None: ...


class PermitPlugin(Protocol):
    """Permit: `Allow()`, `Wait(timeout)` or `Reject(message)`."""

    def permit(self, state: CycleState, pod: Pod, node_name: str, handle: Any) -> Status: ...  # Allow / Wait / Reject


class PreBindPlugin(Protocol):
    """PreBind: None, or an error that unreserves the pod and requeues it."""

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str, handle: Any) -> Status | None: ...  # None or error


class BindPlugin(Protocol):
    """Bind: None (bound), an error, or `SKIP` (the next Bind plugin, else the binder, binds)."""

    def bind(self, state: CycleState, pod: Pod, node_name: str, handle: Any) -> Status | object: ...  # None, error or SKIP


class PostBindPlugin(Protocol):
    """PostBind: told after a successful bind; its answer is ignored."""

    def post_bind(self, state: CycleState, pod: Pod, node_name: str, handle: Any) -> None: ...


class EnqueueExtensions(Protocol):
    """EventsToRegister: the cluster events (with queueing hints) that may make a pod this plugin
    rejected schedulable; None means every event."""

    def events_to_register(self) -> list: ...       # [ClusterEventWithHint]; None: every event
