"""An HTTP extender: kube-scheduler's HTTPExtender (`pkg/scheduler/extender.go`).

Each verb is a POST of the k8s.io/kube-scheduler/extender/v1 JSON (`wire.py`) to
`urlPrefix + "/" + verb` (`transport.py`); each failure is an ExtenderError whose text is the
error kube-scheduler reports for it.
"""
from __future__ import annotations

from typing import Sequence

from .config import ExtenderConfig
from .interface import Extender, ExtenderError, FilterResult, Victims
from .transport import HTTPTransport, TransportError
from .victims import NodePods, uid, victims_from_answer
from .wire import (NodeBytes, WireError, binding_args, decode_binding_result, decode_filter_result,
                   decode_host_priority_list, decode_preemption_result, extender_args,
                   preemption_args)


class HTTPExtender(Extender):
    """An extender reached over HTTP(S), configured by one `extenders` entry."""

    def __init__(self, config: ExtenderConfig, offline: bool = False):
        """offline: no transport is made (the extender's calls are answered elsewhere, e.g. by
        a recording), so its TLS files need not exist."""
        self.config = config
        self.transport = None if offline else HTTPTransport(config)
        self.node_bytes = NodeBytes()
        self._pod_bytes = NodeBytes(limit=4096)
        self._managed = frozenset(r.name for r in config.managed_resources)

    # ---- what it is
    @property
    def name(self) -> str:
        return self.config.url_prefix

    @property
    def weight(self) -> int:
        return self.config.weight

    def is_ignorable(self) -> bool:
        return self.config.ignorable

    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    def is_interested(self, pod) -> bool:
        """No managedResources: every pod; else a pod whose containers or init containers
        request or limit one of them."""
        if not self._managed:
            return True
        spec = pod.raw.get("spec") or {}
        for key in ("containers", "initContainers"):
            for c in spec.get(key) or ():
                res = (c or {}).get("resources") or {}
                for part in ("requests", "limits"):
                    if not self._managed.isdisjoint(res.get(part) or ()):
                        return True
        return False

    def close(self) -> None:
        """Closes the idle connections."""
        if self.transport is not None:
            self.transport.close()

    # ---- the verbs
    def filter(self, pod, nodes: Sequence) -> FilterResult:
        if not self.config.filter_verb:
            return FilterResult([n.name for n in nodes])
        body = extender_args(self._pod(pod), nodes, self.config.node_cache_capable, self.node_bytes)
        result = self._call(self.config.filter_verb, body, decode_filter_result)
        if result["Error"]:
            raise ExtenderError(result["Error"])
        failed = result["FailedNodes"] or {}
        unresolvable = result["FailedAndUnresolvableNodes"] or {}
        if self.config.node_cache_capable and result["NodeNames"] is not None:
            given = {n.name for n in nodes}
            for name in result["NodeNames"]:
                if name not in given:
                    raise ExtenderError(f'extender "{self.name}" claims a filtered node "{name}" '
                                        f"which is not found in the input node list")
            return FilterResult(list(result["NodeNames"]), failed, unresolvable)
        if result["Nodes"] is not None:
            items = result["Nodes"]
            names = [str(((o.get("metadata") or {}).get("name")) or "") for o in items]
            return FilterResult(names, failed, unresolvable, returned_nodes=items)
        return FilterResult([], failed, unresolvable)

    def prioritize(self, pod, nodes: Sequence) -> list[tuple[str, int]]:
        if not self.config.prioritize_verb:
            return [(n.name, 0) for n in nodes]
        body = extender_args(self._pod(pod), nodes, self.config.node_cache_capable, self.node_bytes)
        return self._call(self.config.prioritize_verb, body, decode_host_priority_list)

    def bind(self, pod, node_name: str) -> None:
        if not self.config.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        body = binding_args(pod.name, pod.namespace, uid(pod), node_name)
        error = self._call(self.config.bind_verb, body, decode_binding_result)
        if error:
            raise ExtenderError(error)

    def process_preemption(self, pod, victims: dict[str, Victims],
                           node_pods: NodePods | None = None) -> dict[str, Victims]:
        """The extender's answer, its UIDs mapped back to pods as convertToVictims does: among
        the pods on each node (`node_pods`; without it, among the victims that were sent)."""
        if not self.config.preempt_verb:
            raise ExtenderError(f"preempt verb is not defined for extender {self.name} "
                                f"but run into ProcessPreemption")
        sent = {node: (v.pods, v.num_pdb_violations) for node, v in victims.items()}
        body = preemption_args(self._pod(pod), sent, self.config.node_cache_capable)
        answer = self._call(self.config.preempt_verb, body, decode_preemption_result)
        return victims_from_answer(self.name, answer or {}, victims, node_pods)

    # ---- helpers
    def _pod(self, pod) -> bytes:
        return self._pod_bytes.get_raw(pod.key, pod.raw)

    def _call(self, verb: str, body: bytes, decode):
        """send(): POST, a non-200 status as Go's error, the answer decoded."""
        if self.transport is None:
            raise ExtenderError(f"extender {self.name} is offline: its calls are answered from a recording")
        try:
            status, data = self.transport.post(verb, body)
        except TransportError as e:
            raise ExtenderError(str(e)) from None
        if status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {self.transport.url(verb)}, code {status}")
        try:
            return decode(data)
        except WireError as e:
            raise ExtenderError(str(e)) from None

