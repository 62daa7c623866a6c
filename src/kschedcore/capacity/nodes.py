"""How many nodes of a shape must be added for the templates to fit: a search over the count,
each count tried on a fresh cluster, exact at the answer (N nodes fit, N - 1 do not)."""
from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ValidationError
from ..objects.node import parse_node
from ..sources.files import documents, read_text
from .pending import ClusterPending, schedule_cluster_pending
from .targets import fit_templates

if TYPE_CHECKING:
    from ..scheduler import Scheduler
    from .podspec import Template

HOSTNAME = "kubernetes.io/hostname"


def node_copies(node: dict, count: int, taken: Iterable[str] = ()) -> list[dict]:
    """`count` copies of a raw Node named <name>-0, <name>-1, ... (hostname label too),
    skipping names already in the cluster."""
    base = (node.get("metadata") or {}).get("name") or "new-node"
    out: list = []
    i, taken = 0, set(taken)
    while len(out) < count:
        name = f"{base}-{i}"
        i += 1
        if name in taken:
            continue
        n = copy.deepcopy(node)
        meta = n.setdefault("metadata", {})
        meta["name"] = name
        labels = meta.setdefault("labels", {})
        if labels is not None:
            labels[HOSTNAME] = name
        out.append(n)
    return out


def read_node_template(path: str) -> dict:
    """The first document of a file, as the raw Node copies are made from."""
    docs = documents(Path(path), read_text(Path(path)))
    if not docs or not isinstance(docs[0], dict):
        raise ValidationError(path, "", "no Node in the file")
    return docs[0]


@dataclass
class NodesNeeded:
    """The answer: `nodes` to add (None: more than max_nodes), the fits at that count, every
    count tried with its outcome, the scheduler the answer's fits were made on (None when
    there is no answer), and where the cluster's pending pods went at that count."""
    nodes: int | None
    fits: list = field(default_factory=list)
    tried: dict = field(default_factory=dict)
    scheduler: object = None
    cluster_pending: ClusterPending = field(default_factory=ClusterPending)


def nodes_needed(build: Callable[[], Scheduler], templates: list[Template], node: dict,
                 max_nodes: int = 1000) -> NodesNeeded:
    """build(): a fresh Scheduler holding the cluster. Doubling, then bisection, then a walk
    down while one node fewer also fits, so that the answer N fits and N - 1 does not. At each
    count the cluster's pending pods are scheduled first (on the added nodes too)."""
    if max_nodes < 0:
        raise ValidationError("--max-nodes", "", f"must be non-negative, got {max_nodes}")
    parse_node(node_copies(node, 1)[0], "node template")       # a bad template fails here, once
    tried: dict = {}
    results: dict = {}
    kept: dict = {}
    pending: dict = {}

    def fits(k: int) -> bool:
        if k not in tried:
            sched = build()
            for n in node_copies(node, k, sched.node_names):
                sched.add_node(n)
            pending[k] = schedule_cluster_pending(sched)
            results[k] = fit_templates(sched, templates)
            tried[k] = all(f.fits for f in results[k])
            if tried[k] and all(k < j for j in kept):     # the answer is the smallest that fits
                kept.clear()
                kept[k] = sched
        return tried[k]

    if fits(0):
        return NodesNeeded(0, results[0], tried, kept[0], pending[0])
    lo, hi = 0, 1
    while not fits(hi):
        if hi >= max_nodes:
            return NodesNeeded(None, results[hi], tried, None, pending[hi])
        lo, hi = hi, min(2 * hi, max_nodes)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    while hi > 0 and fits(hi - 1):       # not monotone here: walk down to an exact answer
        hi -= 1
    return NodesNeeded(hi, results[hi], tried, kept[hi], pending[hi])
