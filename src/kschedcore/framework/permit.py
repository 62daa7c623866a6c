"""The binding-cycle extension points (Reserve, Permit, PreBind, Bind, PostBind) and gang
scheduling (coscheduling).

A plugin of the loop implements any of these methods (all get the pod, the node name and the
loop as the framework handle), run in the order the plugins are given:

- ``reserve(...)`` -> None or a failure message; ``unreserve(...)`` (every Reserve plugin, in
  reverse order, whenever an assumed pod is given up);
- ``permit(...)`` -> Allow() / Wait(timeout) / Reject(message);
- ``pre_bind(...)`` -> None or an error; ``bind(...)`` -> None (bound), an error, or SKIP (the
  next Bind plugin, finally the loop's `binder`, decides); ``post_bind(...)``.

A Permit plugin sees each pod after it is assumed on a node and answers `Allow()`,
`Wait(timeout)` or `Reject(message)` (§6.3). A waiting pod keeps its place in the cache until
something allows it (then its binding cycle starts) or rejects it -- its timeout, capped at
15 minutes as kube-scheduler caps it, rejects it with `rejected due to timeout after waiting
<duration> at plugin <name>`. A rejected pod is unreserved, forgotten and requeued.
"""
from dataclasses import dataclass

MAX_TIMEOUT = 15 * 60.0
SKIP = object()                # a Bind plugin's "not mine"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"


@dataclass(frozen=True, slots=True)
class PermitStatus:
    code: str                  # "allow", "wait" or "reject"
    timeout: float = 0.0
    message: str = ""


def Allow() -> PermitStatus:
    return PermitStatus("allow")


def Wait(timeout: float) -> PermitStatus:
    return PermitStatus("wait", min(float(timeout), MAX_TIMEOUT))


def Reject(message: str) -> PermitStatus:
    return PermitStatus("reject", message=message)


class PermitPlugin:
    """Base of a Permit plugin. `permit` may call `handle.allow(key)` / `handle.reject(key,
    message)` on other waiting pods (the framework handle's waiting-pod access)."""
    name = ""

    def permit(self, pod, node_name: str, handle) -> PermitStatus:
        raise NotImplementedError


def go_duration(seconds: float) -> str:
    """time.Duration.String() for whole and fractional seconds and minutes (e.g. 10s, 1m30s)."""
    if seconds < 60:
        return f"{seconds:g}s"
    minutes, rest = divmod(seconds, 60)
    hours, minutes = divmod(int(minutes), 60)
    out = f"{hours}h" if hours else ""
    return out + f"{minutes}m{rest:g}s"


@dataclass(frozen=True, slots=True)
class PodGroup:
    name: str
    namespace: str
    min_member: int
    timeout: float             # scheduleTimeoutSeconds


class Coscheduling(PermitPlugin):
    """Gang scheduling: pods labelled `scheduling.x-k8s.io/pod-group: <name>` wait at Permit
    until `minMember` pods of their group are assumed or bound; then all of them bind. A group
    that does not reach it within `scheduleTimeoutSeconds` releases every pod it holds.

    groups: PodGroup objects (`scheduling.x-k8s.io/v1alpha1`, spec.minMember,
    spec.scheduleTimeoutSeconds, default 60 s) as dicts. A pod naming a group that does not
    exist is rejected.
    """
    name = "Coscheduling"

    def __init__(self, groups=()):
        self.groups = {}
        for g in groups:
            meta, spec = g.get("metadata") or {}, g.get("spec") or {}
            ns = meta.get("namespace") or "default"
            self.groups[(ns, meta["name"])] = PodGroup(meta["name"], ns, int(spec.get("minMember", 1)),
                                                       float(spec.get("scheduleTimeoutSeconds", 60)))

    def permit(self, pod, node_name, handle):
        name = pod.labels.get(POD_GROUP_LABEL)
        if name is None:
            return Allow()
        group = self.groups.get((pod.namespace, name))
        if group is None:
            return Reject(f'PodGroup "{pod.namespace}/{name}" not found')
        members = [k for k in handle.assumed_or_bound() if _group_of(handle.pod(k)) == (pod.namespace, name)]
        if len(members) >= group.min_member:
            for key in handle.waiting_pods():
                if _group_of(handle.pod(key)) == (pod.namespace, name):
                    handle.allow(key)
            return Allow()
        return Wait(group.timeout)

    def on_timeout(self, key, handle):
        """The gang did not assemble: every pod of it still waiting is rejected too."""
        group = _group_of(handle.pod(key))
        return [k for k in handle.waiting_pods() if k != key and _group_of(handle.pod(k)) == group]


def _group_of(pod):
    name = pod.labels.get(POD_GROUP_LABEL)
    return None if name is None else (pod.namespace, name)
