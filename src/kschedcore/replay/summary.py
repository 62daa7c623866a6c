"""A replay's numbers: the time series sampled as it runs (utilisation, pending and running
pods), and the summary at the end -- totals, scheduling latency, preemptions, why pods are left
unschedulable, allocation per node (docs/formats.md, `replay -o json`)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..scheduler import Scheduler
    from .engine import Replay

#: resources reported besides those every node has (cpu, memory, pods)
SHOWN = ("cpu", "memory", "nvidia.com/gpu")


class Sampler:
    """Samples the cluster every `stride` steps (and at the end)."""

    def __init__(self, replay: Replay, stride: int) -> None:
        self.replay, self.stride = replay, stride
        self.series: dict[str, Any] = {"time": [], "step": [], "pending": [], "running": [], "utilization": {},
                                       "peakAllocation": None}
        self._peak: float = 0.0
        self._peak_at: tuple[float, Any] | None = None

    def unsampled(self, applied: int) -> int:
        """How many steps after the first `applied` pass without a sample; the step after them
        samples (every `stride`-th step, the first included)."""
        return -applied % self.stride if self.stride > 1 else 0

    def sample(self, final: bool = False) -> None:
        """One sample now (the replay calls it every `stride` steps, and at the end); a step
        sampled already (before_arrival) is not sampled again."""
        r = self.replay
        if not final and self.series["step"] and self.series["step"][-1] == r.applied:
            return
        self._record(r.clock.now(), r.applied, r.recorder.pending, r.sched.utilization(), lambda: _used(r.sched))

    def before_arrival(self, t: float) -> None:
        """The sample of the next step, a new pod's arrival at `t`, taken before it is applied:
        the cluster as it is now, that pod pending (a replay's window, whose kernel call
        then places it with the pods after it: windows.py)."""
        r = self.replay
        self._record(t, r.applied + 1, r.recorder.pending + 1, r.sched.utilization(), lambda: _used(r.sched))

    def _record(self, now: float, step: int, pending: int, util: dict, used: Any) -> None:
        s = self.series
        s["time"].append(round(now, 6))
        s["step"].append(step)
        s["pending"].append(pending)
        s["running"].append(len(self.replay.sim.bound))
        for name, value in util.items():     # None where the resource had no allocatable
            values = s["utilization"].setdefault(name, [])
            values += [None] * (len(s["time"]) - 1 - len(values))
            values.append(value)
        busy = sum(util.get(name, 0.0) for name in SHOWN)
        if busy > self._peak + 0.01:        # a new peak (by a point at least): per-node use kept
            self._peak = busy
            self._peak_at = (s["time"][-1], used())

    def finish(self) -> dict[str, Any]:
        """The series, with the per-node allocation at the busiest sample."""
        s = self.series
        for values in s["utilization"].values():
            values += [None] * (len(s["time"]) - len(values))
        if self._peak_at is not None:
            t, used = self._peak_at
            s["peakAllocation"] = {"time": t, **node_allocation(self.replay.sched, used)}
        return s


def percentiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {}
    a = np.asarray(values, float)
    return {"p50": float(np.percentile(a, 50)), "p90": float(np.percentile(a, 90)),
            "p99": float(np.percentile(a, 99)), "max": float(a.max()), "mean": float(a.mean())}


def summarize(replay: Replay, wall_seconds: float | None = None) -> dict:
    """The replay's summary (JSON-ready)."""
    recs = list(replay.recorder.records.values())
    arrived = [r for r in recs if r.event is not None]
    bound = [r for r in arrived if r.bound_at is not None]
    sim = replay.sim
    pending = [r for r in arrived if r.departed_at is None and r.pod not in sim.bound and r.pod in sim.pods
               and not r.skipped]
    reasons: dict[str, int] = {}
    for r in pending:
        outcome = sim.outcomes.get(r.pod)
        fit = outcome.result.fit_error if outcome is not None and outcome.result is not None else None
        for reason in (fit.reasons if fit is not None and fit.reasons else {r.messages[-1] if r.messages else "not yet attempted": 1}):
            reasons[reason] = reasons.get(reason, 0) + 1
    out = {
        "arrival": replay.arrival,
        "events": len(replay.timeline),
        "eventsApplied": replay.applied,    # the timeline's, and departures after durations / deletionTimestamps
        "virtualSeconds": round(replay.clock.now(), 6),
        "pods": {"arrived": len(arrived), "bound": len(bound), "runningAtEnd": len(sim.bound),
                 "pendingAtEnd": len(pending), "departed": sum(1 for r in recs if r.departed_at is not None),
                 "preempted": sum(1 for r in recs if r.preempted_by is not None),
                 "skippedBeingDeleted": sum(1 for r in recs if r.skipped)},
        "cycles": sim.cycles,
        "preemptions": len(replay.recorder.preemptions),
        "schedulingLatencySeconds": percentiles([r.bound_at - r.arrival for r in bound]),  # type: ignore[operator]  # both set
        "unschedulableAtEndByReason": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
        "utilizationAtEnd": replay.sched.utilization(),
    }
    if wall_seconds is not None:
        out["wallSeconds"] = round(wall_seconds, 4)
        out["eventsPerSecond"] = round(replay.applied / wall_seconds, 1) if wall_seconds > 0 else None
        out["podsPerSecond"] = round(len(arrived) / wall_seconds, 1) if wall_seconds > 0 else None
    return out


def _used(sched):
    """The shown resources' requested and allocatable columns now, and the rows of the nodes
    (copies, laid out at the end: a sample must be cheap)."""
    t = sched.cache.table
    cols = {}
    for name in SHOWN:
        col = t.resources.get(name)
        if 0 <= col < t.alloc.shape[1]:
            cols[name] = (t.requested[:, col].copy(), t.alloc[:, col].copy())
    return dict(t.row_of), cols


def node_allocation(sched: Scheduler, used: Any = None) -> dict:
    """Per node, requested / allocatable of the shown resources (now, or as `used` saw them)."""
    row_of, cols = used or _used(sched)
    names = sorted(row_of, key=row_of.get)
    idx = np.fromiter(map(row_of.get, names), np.int64, len(names))
    out = {"nodes": names}
    for name, (req_all, alloc_all) in cols.items():
        req, alloc = req_all[idx].astype(float), alloc_all[idx].astype(float)
        if not alloc.any():
            continue
        frac = np.round(np.divide(req, alloc, out=np.zeros_like(req), where=alloc > 0), 4)
        out[name] = [v if a else None for v, a in zip(frac.tolist(), alloc.tolist())]
    return out


def run_document(replay: Replay, wall_seconds: float | None = None) -> dict:
    """Everything `replay -o json` writes and `report` reads."""
    return {"summary": summarize(replay, wall_seconds), "series": replay.sampler.finish(),
            "preemptions": [{"time": t, "preemptor": p, "node": n, "victims": v}
                            for t, p, n, v in replay.recorder.preemptions],
            "allocation": node_allocation(replay.sched),
            "pods": [r.as_dict() for r in replay.recorder.records.values()]}
