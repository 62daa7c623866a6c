"""Preemption victims named by UID mapped back to pods (extender.go's convertToVictims)."""
from __future__ import annotations

from typing import Callable, Sequence

from .interface import ExtenderError, Victims

#: node name -> the pods on that node (None: no such node)
NodePods = Callable[[str], "Sequence | None"]


def uid(pod) -> str:
    """The pod's metadata.uid as the API object has it ("" where unset)."""
    return str((pod.raw.get("metadata") or {}).get("uid") or "")


def victims_from_answer(name: str, answer: dict, sent: dict[str, Victims], node_pods) -> dict[str, Victims]:
    """convertToVictims: node -> (UIDs, numPDBViolations) as node -> Victims, each UID found
    among the node's pods (`node_pods(node)`, or the victims sent where it is None)."""
    out: dict[str, Victims] = {}
    for node, (uids, pdb) in answer.items():
        pods = node_pods(node) if node_pods is not None else (sent[node].pods if node in sent else None)
        if pods is None:
            raise ExtenderError(f'nodeinfo not found for node name "{node}"')
        by_uid: dict = {}
        for p in pods:
            by_uid.setdefault(uid(p), p)
        chosen = []
        for pod_uid in uids:
            if pod_uid not in by_uid:
                raise ExtenderError(f"extender: {name} claims to preempt pod (UID: &{{{pod_uid}}}) on node: "
                                    f"{node}, but the pod is not found on that node")
            chosen.append(by_uid[pod_uid])
        out[node] = Victims(chosen, pdb)
    return out
