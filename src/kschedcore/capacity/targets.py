"""Do these workloads fit, and what is left? Templates with target counts (Deployments at
replica counts), each copy scheduled and assumed before the next, template after template, as
kube-scheduler would schedule them if they were created in that order; gangs all-or-nothing.

A gang is a template whose copies form PodGroups of `min_member` (Coscheduling's minMember):
copies are scheduled a group at a time, and a group with fewer than min_member members placed
gives its placed members back (Permit's timeout rejects the waiting pods), so a gang never
holds resources it cannot use.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING
from dataclasses import dataclass, field

from ..errors import ValidationError
from ..objects.quantity import BINARY_SI, DECIMAL_SI, Quantity
from .estimate import CopyMaker

if TYPE_CHECKING:
    from ..scheduler import Scheduler
    from .podspec import Template

MILLI_RESOURCES = ("cpu",)


@dataclass
class TemplateFit:
    """One template's outcome: how many copies were wanted and placed, where, and why the
    others were not (the first copy's unschedulable message)."""
    name: str
    namespace: str
    wanted: int
    placed: int = 0
    nodes: Counter = field(default_factory=Counter)
    message: str = ""
    min_member: int | None = None

    @property
    def fits(self) -> bool:
        return self.placed >= self.wanted

    def as_dict(self) -> dict:
        return {"name": self.name, "namespace": self.namespace, "wanted": self.wanted, "placed": self.placed,
                "unplaced": self.wanted - self.placed, "fits": self.fits, "minMember": self.min_member,
                "gangs": self.placed // self.min_member if self.min_member else None,
                "message": self.message, "nodes": dict(sorted(self.nodes.items()))}


def free_resources(sched: Scheduler) -> dict:
    """Allocatable minus requested, summed over the nodes, per resource with any allocatable
    (quantities; `pods`: pod slots)."""
    t = sched.cache.table
    rows = list(t.row_of.values())
    if not rows:
        return {}
    alloc, used = t.alloc[rows].sum(axis=0), t.requested[rows].sum(axis=0)
    out = {}
    for name in ("cpu", "memory", "ephemeral-storage", *t.resources.items[3:]):
        col = t.resources.get(name)
        if col is None or col >= len(alloc) or not alloc[col]:
            continue
        free = int(alloc[col]) - int(used[col])
        out[name] = str(Quantity.from_milli(free) if name in MILLI_RESOURCES else
                        Quantity.from_int(free, BINARY_SI if name == "memory" or "storage" in name else DECIMAL_SI))
    out["pods"] = str(int(t.allowed_pods[rows].sum()) - int(t.pod_count[rows].sum()))
    return out


def _place_group(sched: Scheduler, maker: CopyMaker, size: int, fit: TemplateFit, need: int = 0) -> bool:
    """Schedules `size` copies, each assumed before the next. With `need` (a gang): when fewer
    than `need` were placed, the placed ones are given back. Returns whether all were placed."""
    cycles, placed, failed = sched.cycles, [], 0
    for _ in range(size):
        pod = maker.next()
        result = cycles.schedule_pod(pod)
        if result.node is None:
            cycles.post_filter(pod, result)
            fit.message = fit.message or result.message or ""
            failed += 1
            if need and size - failed < need:
                break         # too few left to reach minMember: the gang cannot be placed
            continue
        sched.assume_scheduled(pod, result)
        placed.append((pod, result.node))
    if need and len(placed) < need:
        for pod, _node in placed:
            sched.cache.remove_pod(pod.key)
        return False
    for _pod, node in placed:
        fit.nodes[node] += 1
    fit.placed += len(placed)
    return len(placed) == size


def fit_templates(sched: Scheduler, templates: list[Template]) -> list[TemplateFit]:
    """Each template's `target` copies, template after template (min_member: a gang)."""
    fits = []
    for t in templates:
        if t.target is None:
            raise ValidationError(f"template {t.namespace}/{t.name}", "target", "fit_templates needs a target count")
        maker = CopyMaker(sched, t)
        fit = TemplateFit(t.name, t.namespace, t.target, min_member=t.min_member)
        _place_group(sched, maker, t.target, fit, t.min_member or 0)
        fits.append(fit)
    return fits


def gangs_that_fit(sched: Scheduler, template: Template, max_gangs: int = 0) -> TemplateFit:
    """How many whole gangs of template.min_member copies fit, one after another."""
    if template.min_member is None:
        raise ValidationError(f"template {template.namespace}/{template.name}", "minMember",
                              "not a gang: gangs_that_fit needs a template with minMember")
    maker = CopyMaker(sched, template)
    fit = TemplateFit(template.name, template.namespace, 0, min_member=template.min_member)
    while not max_gangs or fit.placed < max_gangs * template.min_member:
        fit.wanted += template.min_member
        if not _place_group(sched, maker, template.min_member, fit, template.min_member):
            fit.wanted -= template.min_member
            break
    return fit
