"""kschedcore's capacity answers beyond cluster-capacity's report: templates with target counts
(and gangs), the nodes to add, what is left. One document for -o json|yaml, one text table."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .pending import ClusterPending, pending_lines
from .targets import free_resources

if TYPE_CHECKING:
    from ..scheduler import Scheduler
    from .nodes import NodesNeeded


def fit_document(fits: list, sched_before_util: dict, sched: Scheduler, nodes_needed: NodesNeeded | None = None,
                 node_template: dict | None = None, cluster_pending: ClusterPending | None = None) -> dict:
    """The answer document (docs/formats.md, "Capacity output"); `cluster_pending`: where the
    cluster's own pending pods went, scheduled before the templates."""
    doc = {
        "fits": all(f.fits for f in fits),
        "templates": [f.as_dict() for f in fits],
        "clusterPendingPods": (cluster_pending or ClusterPending()).as_dict(),
        "utilization": {"before": sched_before_util, "after": sched.utilization()},
        "free": free_resources(sched),
    }
    if nodes_needed is not None:
        name = ((node_template or {}).get("metadata") or {}).get("name")
        doc["nodesToAdd"] = {"nodeTemplate": name, "nodes": nodes_needed.nodes,
                             "tried": {str(k): v for k, v in sorted(nodes_needed.tried.items())}}
    return doc


def fit_text(doc: dict) -> str:
    """The answer document as the table `kschedcore capacity` prints."""
    lines = []
    width = max([len("template")] + [len(f"{t['namespace']}/{t['name']}") for t in doc["templates"]])
    lines.append(f"{'template':<{width}}  {'wanted':>7} {'placed':>7}  fits")
    for t in doc["templates"]:
        gang = f" (gang of {t['minMember']})" if t["minMember"] else ""
        lines.append(f"{t['namespace'] + '/' + t['name']:<{width}}  {t['wanted']:>7} {t['placed']:>7}  "
                     f"{'yes' if t['fits'] else 'no'}{gang}")
    for t in doc["templates"]:
        if not t["fits"] and t["message"]:
            lines.append(f"\n{t['namespace']}/{t['name']}: {t['message']}")
    if doc["clusterPendingPods"]["pods"]:
        lines.append("")
        lines += [line.replace("\t", "  ") for line in pending_lines(doc["clusterPendingPods"])]
    need = doc.get("nodesToAdd")
    if need is not None:
        n = need["nodes"]
        lines.append("")
        lines.append(f"nodes to add ({need['nodeTemplate']}): " +
                     (f"{n} ({n} fit, {n - 1} do not)" if n else "0 (it fits as it is)" if n == 0
                      else f"more than {max(int(k) for k in need['tried'])}"))
    lines.append("")
    lines.append("all fit: " + ("yes" if doc["fits"] else "no"))
    util = doc["utilization"]
    lines.append("utilization: " + ", ".join(f"{r} {util['before'].get(r, 0):.1%} -> {v:.1%}"
                                             for r, v in util["after"].items()))
    lines.append("free: " + ", ".join(f"{r} {v}" for r, v in doc["free"].items()))
    return "\n".join(lines) + "\n"
