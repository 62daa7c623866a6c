"""What if: a change to the cluster -- nodes drained, removed or added, workloads scaled, another
scheduler configuration -- applied in a fork, and what it displaces or adds scheduled.

The cluster is taken as it is (its pending pods scheduled first); each change runs in a fork of
that state (Scheduler.fork), so the per-node drain answers cost what the node's pods cost, not
what the cluster does. Answers: which pods move where, which become pending and why, what the
new pods got, and utilisation before and after; for --drain, per node, whether it can be removed
alone (cluster-autoscaler's scale-down question: every evicted pod placed elsewhere) and where
its pods would go.
"""
from dataclasses import dataclass, field
from typing import Any

from ..errors import ValidationError
from ..framework.config import SchedulerConfig
from ..scheduler import Scheduler
from .nodes import node_copies


@dataclass
class Change:
    drain: list = field(default_factory=list)          # node names
    remove_nodes: list = field(default_factory=list)
    add_nodes: list = field(default_factory=list)      # (count, raw Node)
    scale: list = field(default_factory=list)          # ("namespace/name", replicas)
    config: SchedulerConfig | None = None               # a SchedulerConfig for the pods to place

    def describe(self) -> list:
        out = [f"drain {n}" for n in self.drain] + [f"remove node {n}" for n in self.remove_nodes]
        out += [f"add {k} x {(n.get('metadata') or {}).get('name')}" for k, n in self.add_nodes]
        out += [f"scale {w} to {r}" for w, r in self.scale]
        return out + (["another scheduler configuration"] if self.config is not None else [])


def _apply(sched: Scheduler, change: Change) -> tuple:
    """The change on `sched` (a fork): (displaced pods with their old node, added pods, removed pods)."""
    for name in [*change.drain, *change.remove_nodes]:
        if sched.cache.node(name) is None:
            raise ValidationError(f"node {name}", "", "no such node in the cluster")
    displaced, added, removed = [], [], []
    for name in change.drain:
        displaced += [(p, name) for p in sched.drain(name)]
    for name in change.remove_nodes:
        displaced += [(p, name) for p in sched.drain(name)]
        sched.remove_node(name)
    for count, node in change.add_nodes:
        for n in node_copies(node, count, sched.node_names):
            sched.add_node(n)
    for workload, replicas in change.scale:
        more, fewer = sched.scale(workload, replicas)
        added += more
        removed += fewer
    return displaced, added, removed


def _schedule(sched: Scheduler, config: SchedulerConfig | None) -> dict:
    """Schedules the pending pods (with `config`: by a scheduler of that configuration holding
    the same nodes and placements); {pod key: ScheduleResult}."""
    if config is None:
        return {r.pod: r for r in sched.schedule_pending(records=False)}
    other = Scheduler(config=config)
    t = sched.cache.table
    for row in sorted(t.row_of.values(), key=lambda r: t.order_key[r]):
        other.add_node(t.nodes[row])
    for pl in sched.cache.placements():
        other.assume(pl.pod, pl.node)
    other.pending = list(sched.pending)
    results = {r.pod: r for r in other.schedule_pending(records=False)}
    for pod in sched.pending:           # the placements carried back, for the report's "after"
        r = results.get(pod.key)
        if r is not None and r.node:
            sched.assume(pod, r.node)
    sched.pending = [p for p in sched.pending if not (results.get(p.key) and results[p.key].node)]
    return results


def whatif(sched: Scheduler, change: Change) -> dict:
    """The answer document (docs/formats.md, "What-if output")."""
    sched.schedule_pending(records=False)
    waiting = {p.key for p in sched.pending}
    before = sched.utilization()
    doc: dict[str, Any] = {"changes": change.describe(), "utilizationBefore": before}
    if change.drain:
        doc["drain"] = [_drain_alone(sched, name, change.config) for name in change.drain]
    with sched.fork():
        displaced, added, removed = _apply(sched, change)
        results = _schedule(sched, change.config)
        doc["moved"] = [{"pod": p.key, "from": old, "to": results[p.key].node} for p, old in displaced
                        if p.key in results and results[p.key].node]
        doc["pending"] = [{"pod": p.key, "from": old, "message": (results[p.key].message or "")} for p, old in displaced
                          if p.key in results and not results[p.key].node]
        doc["added"] = [{"pod": p.key, "node": results[p.key].node,
                         "message": "" if results[p.key].node else (results[p.key].message or "")}
                        for p in added if p.key in results]
        doc["removed"] = [p.key for p in removed]
        doc["stillPending"] = sorted(k for k in waiting if k in results and not results[k].node)
        doc["utilizationAfter"] = sched.utilization()
    doc["fits"] = not doc["pending"] and all(a["node"] for a in doc["added"])
    return doc


def _drain_alone(sched: Scheduler, name: str, config: SchedulerConfig | None) -> dict:
    with sched.fork():
        evicted = sched.drain(name)
        results = _schedule(sched, config)
        pods = [{"pod": p.key, "to": results[p.key].node if p.key in results else None} for p in evicted]
    return {"node": name, "removable": all(p["to"] for p in pods), "pods": pods}


def whatif_text(doc: dict) -> str:
    lines = ["changes: " + "; ".join(doc["changes"])]
    for d in doc.get("drain", ()):
        lines.append(f"node {d['node']}: " + ("can be removed" if d["removable"] else "cannot be removed") +
                     f" ({sum(1 for p in d['pods'] if p['to'])}/{len(d['pods'])} pods placed elsewhere)")
    for m in doc["moved"]:
        lines.append(f"  {m['pod']}: {m['from']} -> {m['to']}")
    for p in doc["pending"]:
        lines.append(f"  {p['pod']}: {p['from']} -> pending: {p['message']}")
    for a in doc["added"]:
        lines.append(f"  {a['pod']} (new): " + (a["node"] or f"pending: {a['message']}"))
    for r in doc["removed"]:
        lines.append(f"  {r}: removed")
    lines.append(f"moved {len(doc['moved'])}, pending {len(doc['pending'])}, new {len(doc['added'])}, "
                 f"removed {len(doc['removed'])}; everything placed: {'yes' if doc['fits'] else 'no'}")
    before, after = doc["utilizationBefore"], doc["utilizationAfter"]
    lines.append("utilization: " + ", ".join(f"{r} {before.get(r, 0):.1%} -> {v:.1%}" for r, v in after.items()))
    return "\n".join(lines) + "\n"
