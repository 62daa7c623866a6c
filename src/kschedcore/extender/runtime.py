"""The calls a scheduling cycle makes to its extenders, as kube-scheduler v1.34 makes them:
findNodesThatPassExtenders (schedule_one.go), the extenders' part of prioritizeNodes,
extendersBinding, and preemption's callExtenders (framework/preemption/preemption.go).

Every call reaches the extender: an extender is a black box, and no answer is remembered
from one cycle to the next.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..errors import UnsupportedError
from .config import ExtenderConfig
from .decode import ordered
from .interface import Extender, ExtenderError, Victims

#: framework.MaxNodeScore / extenderv1.MaxExtenderPriority
SCORE_SCALE = 100 // 10


@dataclass
class FilterOutcome:
    """What the extenders' filters made of a cycle's feasible nodes.

    nodes: the names that passed every interested filter, in the last answer's order.
    statuses: node name -> (unresolvable, message) of the nodes an extender failed (a later
    extender overwrites an earlier one's status for the same node, as NodeToStatus.Set does).
    returned: the nodes last answered as full Node objects (a non-nodeCacheCapable filter):
    kube-scheduler scores NEW NodeInfos made from them -- without their pods.
    dropped: some node left the list (the pod's unschedulable plugins then include "Extender").
    """
    nodes: list
    statuses: dict = field(default_factory=dict)
    returned: dict | None = None
    dropped: bool = False


def make_extenders(configs: Sequence[ExtenderConfig], factory: Callable | None = None) -> list:
    """framework.Extenders from configurations (scheduler.go buildExtenders), ignorable ones
    last. factory(config) makes one; by default the HTTP extender (extender/http.py)."""
    if not configs:
        return []
    if factory is None:
        factory = _http_factory()
    return ordered([factory(c) for c in configs])


def _http_factory():
    try:
        from .http import HTTPExtender
    except ImportError:
        def refuse(config):
            raise UnsupportedError("KubeSchedulerConfiguration", "extenders",
                                   f"{config.url_prefix}: HTTP extenders are not available in this build")
        return refuse
    return HTTPExtender


def interested_by_resources(managed: set, pod) -> bool:
    """HTTPExtender.IsInterested: no managed resources, or one named in a container's or init
    container's requests or limits."""
    if not managed:
        return True
    spec = (pod.raw.get("spec") or {})
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        res = c.get("resources") or {}
        for part in ("requests", "limits"):
            if any(name in managed for name in (res.get(part) or {})):
                return True
    return False


def interested(extenders: Sequence[Extender], pod) -> list:
    """The extenders interested in the pod, in order."""
    return [e for e in extenders if e.is_interested(pod)]


def find_nodes_that_pass_extenders(extenders: Sequence[Extender], pod, nodes: list) -> FilterOutcome:
    """Each interested filter in turn sees the previous one's survivors; an ignorable
    extender's error skips it, another's raises ExtenderError (the cycle fails with it)."""
    out, by_name = FilterOutcome(list(nodes)), None
    for ext in extenders:
        if not out.nodes:
            break
        if not ext.is_filter() or not ext.is_interested(pod):
            continue
        if by_name is None:         # (kept while no extender drops a node)
            by_name = {n.name: n for n in out.nodes}
        try:
            result = ext.filter(pod, out.nodes)
            passed = _passed(ext, result, by_name)
        except ExtenderError:
            if ext.is_ignorable():
                continue
            raise
        for name, msg in result.failed_and_unresolvable.items():
            out.statuses[name] = (True, msg)
        for name, msg in result.failed.items():
            if name not in result.failed_and_unresolvable:
                out.statuses[name] = (False, msg)
        if len(passed) != len(out.nodes):
            out.dropped, by_name = True, None
        out.nodes = passed
        out.returned = dict(zip([n.name for n in passed], result.returned_nodes)) \
            if result.returned_nodes is not None else None
    return out


def _passed(ext, result, by_name: dict) -> list:
    names = [(n.get("metadata") or {}).get("name") for n in result.returned_nodes] \
        if result.returned_nodes is not None else result.node_names
    try:
        return [by_name[name] for name in names or ()]
    except (KeyError, TypeError):
        name = next(n for n in names if n not in by_name)
        raise ExtenderError(f'extender "{ext.name}" claims a filtered node "{name}" which is not found '
                            f'in the input node list') from None


def prioritize(extenders: Sequence[Extender], pod, nodes: list) -> dict:
    """The extenders' part of prioritizeNodes: node name -> [(extender name, score x weight x
    10)], neither clamped nor normalised; an extender's error leaves its scores out."""
    out: dict = {}
    for ext in extenders:
        if not ext.is_prioritizer() or not ext.is_interested(pod):
            continue
        try:
            answer = ext.prioritize(pod, nodes)
        except ExtenderError:
            continue        # "No score given by this extender"
        weight = ext.weight
        for host, score in answer:
            out.setdefault(host, []).append((ext.name, int(score) * weight * SCORE_SCALE))
    return out


def extenders_binding(extenders: Sequence[Extender], pod, node_name: str):
    """extendersBinding: (bound by an extender, its error or None). The first interested
    binder binds; an ignorable binder's error falls through to the next one and then to the
    Bind plugins."""
    for ext in extenders:
        if not ext.is_binder() or not ext.is_interested(pod):
            continue
        try:
            ext.bind(pod, node_name)
        except ExtenderError as e:
            if ext.is_ignorable():
                continue
            return True, str(e)
        return True, None
    return False, None


def preempting(extenders: Sequence[Extender], pod) -> list:
    """The extenders preemption asks about the pod's candidates."""
    return [e for e in extenders if e.supports_preemption() and e.is_interested(pod)]


def call_extenders(extenders: Sequence[Extender], pod, victims: dict, node_pods=None) -> dict:
    """Preemption's callExtenders: the candidates (node name -> Victims) every interested
    extender that supports preemption accepts, each seeing the previous one's answer
    (node_pods(node name): the pods on a node, for answers by UID). Raises ExtenderError (a
    non-ignorable extender's error, or a node answered without victims)."""
    for ext in extenders:
        if not victims:
            break
        if not ext.supports_preemption() or not ext.is_interested(pod):
            continue
        try:
            answer = dict(ext.process_preemption(pod, dict(victims), node_pods))
        except ExtenderError:
            if ext.is_ignorable():
                continue
            raise
        for name in sorted(answer):
            v = answer[name]
            if v is None or not v.pods:
                if ext.is_ignorable():
                    del answer[name]
                    continue
                raise ExtenderError(f'expected at least one victim pod on node "{name}"')
        victims = answer
    return victims


__all__ = ["FilterOutcome", "SCORE_SCALE", "Victims", "call_extenders", "extenders_binding",
           "find_nodes_that_pass_extenders", "interested", "preempting", "interested_by_resources", "make_extenders",
           "prioritize"]
