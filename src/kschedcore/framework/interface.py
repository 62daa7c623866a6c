"""The plugin interface's shared types (k8s.io/kube-scheduler/framework/interface.go,
cycle_state.go): CycleState, Status, PreFilterResult and PostFilterResult.

Every extension-point method of a Python plugin takes the cycle's CycleState first, as
kube-scheduler's do. A scheduling cycle makes one; PreFilter and PreScore write what Filter and
Score read; the binding cycle of the pod (Reserve ... PostBind) gets the same object.
"""
from dataclasses import dataclass

#: a PreFilter / PreScore result meaning "this plugin does nothing for this pod" (its Filter
#: or Score is then not called), and a Bind plugin's "not mine"
SKIP = type("Skip", (), {"__repr__": lambda self: "SKIP", "__slots__": ()})()

SUCCESS = "Success"
UNSCHEDULABLE = "Unschedulable"
UNSCHEDULABLE_AND_UNRESOLVABLE = "UnschedulableAndUnresolvable"
ERROR = "Error"


@dataclass(frozen=True, slots=True)
class Status:
    """A plugin's non-success answer: a code and its reasons (joined by ", " in messages)."""
    code: str
    reasons: tuple = ()

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)

    @property
    def rejected(self) -> bool:
        return self.code in (UNSCHEDULABLE, UNSCHEDULABLE_AND_UNRESOLVABLE)


def Unschedulable(*reasons: str) -> Status:
    return Status(UNSCHEDULABLE, reasons)


def UnschedulableAndUnresolvable(*reasons: str) -> Status:
    return Status(UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def Error(message: str) -> Status:
    return Status(ERROR, (message,))


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """PreFilter's answer narrowing the nodes to evaluate (kube-scheduler merges every
    plugin's by intersection; names that are not nodes are ignored)."""
    node_names: frozenset

    def __init__(self, node_names):
        object.__setattr__(self, "node_names", frozenset(node_names))


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """A PostFilter plugin's success: the node the pod is nominated to, and the pods (keys
    "namespace/name") to evict for it -- the loop deletes them through its event path, as it
    does DefaultPreemption's victims."""
    nominated_node_name: str
    victims: tuple = ()


class CycleState:
    """Data the plugins of one pod's cycle share, by key (kube-scheduler's CycleState).

    The framework clones it for what-if evaluations (the preemption dry run): `clone()` copies
    the mapping and calls `clone()` on each value that has one (StateData.Clone), so a plugin
    whose AddPod/RemovePod mutate its data must give the data a `clone`.
    """
    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self):
        self._data = {}
        #: plugins whose PreFilter / PreScore returned SKIP this cycle
        self.skip_filter_plugins = set()
        self.skip_score_plugins = set()

    def write(self, key: str, value) -> None:
        self._data[key] = value

    def read(self, key: str):
        """The value under key; KeyError (kube-scheduler: ErrNotFound) when absent."""
        try:
            return self._data[key]
        except KeyError:
            raise KeyError(f"{key!r} not found in the cycle state") from None

    def get(self, key: str, default=None):
        return self._data.get(key, default)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def __contains__(self, key) -> bool:
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
