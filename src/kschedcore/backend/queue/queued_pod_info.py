"""QueuedPodInfo: a pod in the scheduling queue with its scheduling history
(framework.QueuedPodInfo), and the names of the queue's parts."""

ACTIVE_Q = "activeQ"
"""The queue part of pods ready to be popped, by priority then arrival."""
BACKOFF_Q = "backoffQ"
"""The queue part of pods waiting out their backoff after a failed attempt."""
UNSCHEDULABLE_PODS = "unschedulablePods"
"""The pool of pods waiting for a cluster event that may make them schedulable."""
IN_FLIGHT = "inFlight"
"""A pod popped and in its scheduling cycle."""
ERROR_BACKOFF_Q = "errorBackoffQ"     # reported as backoffQ


class QueueError(ValueError):
    """A pod handed back to the queue is already in it (a caller bug upstream only logs)."""


class QueuedPodInfo:
    """A pod in the queue with its scheduling history (framework.QueuedPodInfo)."""
    __slots__ = ("pod", "key", "uid", "timestamp", "attempts", "unschedulable_count", "consecutive_errors_count",
                 "initial_attempt_timestamp", "backoff_expiration", "unschedulable_plugins",
                 "pending_plugins", "gating_plugin", "gating_plugin_events",
                 "part", "heap_entry", "pool_seq", "pool_plugins")

    def __init__(self, pod, timestamp: float):
        self.pod = pod
        self.key = pod.key                         # namespace/name: the queues' key
        self.uid = pod_uid(pod)
        self.timestamp = timestamp                 # set on entry, reset after each failure
        self.attempts = 0
        self.unschedulable_count = 0
        self.consecutive_errors_count = 0
        self.initial_attempt_timestamp: float | None = None      # first entry into activeQ
        self.backoff_expiration = None             # cached until the next failure
        self.unschedulable_plugins = NO_PLUGINS   # rejector plugins of the last attempt (frozensets)
        self.pending_plugins = NO_PLUGINS
        self.gating_plugin = ""                    # the PreEnqueue plugin holding it
        self.gating_plugin_events = ()
        # the queue's bookkeeping: the part holding it, its heap entry, its place in the pool
        self.part: str | None = None
        self.heap_entry = None
        self.pool_seq = 0
        self.pool_plugins = ()

    def set_pod(self, pod):
        """PodInfo.Update: a newer version of the same pod."""
        self.pod = pod
        self.key = pod.key
        self.uid = pod_uid(pod)

    @property
    def gated(self) -> bool:
        return bool(self.gating_plugin)

    @property
    def rejector_plugins(self) -> frozenset | set:
        return self.unschedulable_plugins | self.pending_plugins

    def __repr__(self):
        return (f"QueuedPodInfo({self.key}, t={self.timestamp}, attempts={self.attempts}, "
                f"plugins={sorted(self.rejector_plugins)}, gated={self.gating_plugin or False})")


NO_PLUGINS: frozenset[str] = frozenset()


def pod_uid(pod) -> str:
    return getattr(pod, "uid", None) or pod.key


def is_pod(obj) -> bool:
    return hasattr(obj, "priority") and hasattr(obj, "key")


class BarePod:
    """A nominated pod found in no queue: name, namespace and UID only (§5.3)."""
    __slots__ = ("namespace", "name", "uid")
    priority = 0
    labels: dict[str, str] = {}
    node_name = ""

    def __init__(self, key: str, uid: str):
        self.namespace, _, self.name = key.rpartition("/")
        self.uid = uid

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def __repr__(self):
        return f"BarePod({self.key}, uid={self.uid})"
