"""PerfGate: "this workload under this configuration must reach N pods/s, or this
utilisation" as a test in the user's own CI. Each run schedules the workload `rounds` times on
a fresh Scheduler (loading and compiling untimed, as `kschedcore simulate` reports), takes the
median, and times the machine reference in the same run, so that a requirement can also be put
relative to the machine (`relative`: pods/s x reference seconds) and survive a slow runner."""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from os import PathLike

from ..errors import ValidationError
from ..framework.config import SchedulerConfig, load_config
from ..scheduler import Scheduler
from ..scheduler.loop import Simulation
from ..sources.files import load_workload
from .reference import REFERENCE_VERSION, reference_seconds


@dataclass
class GateRun:
    """What one gated workload did: its decisions (identical every round) and its speed."""
    name: str
    pods: int
    scheduled: int
    unschedulable: int
    seconds: float                    # median of the rounds, scheduling only
    reference_seconds: float          # the machine reference, timed in the same run
    utilisation: dict = field(default_factory=dict)    # resource -> requested / allocatable
    rounds: list = field(default_factory=list)

    @property
    def pods_per_second(self) -> float:
        return self.pods / self.seconds if self.seconds > 0 else float("inf")

    @property
    def relative(self) -> float:
        """Pods scheduled per second of reference work: the machine's speed divided out."""
        return self.pods_per_second * self.reference_seconds

    def require(self, pods_per_second: float | None = None, relative: float | None = None,
                utilisation: dict[str, float] | None = None, scheduled: int | float | None = None,
                unschedulable: int | None = None) -> "GateRun":
        """Raises AssertionError naming every requirement missed (all are checked): at least
        `pods_per_second`, at least `relative`, at least `utilisation[resource]` (0..1), at least
        `scheduled` pods (an int, or a float fraction of the pods), at most `unschedulable`."""
        missed = []
        if pods_per_second is not None and self.pods_per_second < pods_per_second:
            missed.append(f"{self.pods_per_second:,.0f} pods/s < {pods_per_second:,} required")
        if relative is not None and self.relative < relative:
            missed.append(f"relative speed {self.relative:.2f} < {relative} required "
                          f"(reference {self.reference_seconds * 1e3:.1f} ms)")
        for resource, floor in (utilisation or {}).items():
            if resource not in self.utilisation:
                raise ValidationError(f"gate {self.name}", f"utilisation.{resource}",
                                      f"no such resource; the cluster has {sorted(self.utilisation)}")
            if self.utilisation[resource] < floor:
                missed.append(f"{resource} utilisation {self.utilisation[resource]:.3f} < {floor}")
        if scheduled is not None:
            need = scheduled * self.pods if isinstance(scheduled, float) else scheduled
            if self.scheduled < need:
                missed.append(f"{self.scheduled} of {self.pods} pods scheduled < {need:g} required")
        if unschedulable is not None and self.unschedulable > unschedulable:
            missed.append(f"{self.unschedulable} pods unschedulable > {unschedulable} allowed")
        if missed:
            raise AssertionError(f"kschedcore gate {self.name}: " + "; ".join(missed))
        return self

    def as_dict(self) -> dict:
        return {"name": self.name, "pods": self.pods, "scheduled": self.scheduled,
                "unschedulable": self.unschedulable, "seconds": self.seconds,
                "podsPerSecond": round(self.pods_per_second, 1), "relative": round(self.relative, 3),
                "referenceSeconds": self.reference_seconds, "referenceVersion": REFERENCE_VERSION,
                "utilization": self.utilisation, "rounds": self.rounds}


class PerfGate:
    """The `kschedcore_perf` fixture's object; every run it made is in `runs` (and in pytest's
    terminal summary)."""

    def __init__(self) -> None:
        self.runs: list[GateRun] = []

    def schedule(self, *workload: str | PathLike[str] | dict, config: str | SchedulerConfig | None = None,
                 name: str | None = None, rounds: int = 3, queue: bool = False,
                 percentage_of_nodes_to_score: int = 0, seed: int = 0) -> GateRun:
        """Schedules the workload (files, or an already loaded workload dict) `rounds` times.
        config: a KubeSchedulerConfiguration file or object; queue: through the whole loop
        (Simulation) instead of schedule_pending()."""
        if rounds < 1:
            raise ValidationError("gate", "rounds", f"must be at least 1, got {rounds}")
        loaded = workload[0] if len(workload) == 1 and isinstance(workload[0], dict) else load_workload(*workload)  # type: ignore[arg-type]  # files here
        cfg = load_config(config) if isinstance(config, str) else config
        ref_before = reference_seconds()
        times: list[float] = []
        outcome: tuple | None = None
        for _ in range(rounds):
            sched = Scheduler.from_workload(loaded, config=cfg, seed=seed,
                                            percentage_of_nodes_to_score=percentage_of_nodes_to_score)
            for pod in sched.pending:
                sched.prepare(pod)
            t0 = time.perf_counter()
            nodes = [o.node for o in Simulation(sched).run_until_idle()] if queue else \
                [r.node for r in sched.schedule_pending(records=False)]
            times.append(time.perf_counter() - t0)
            if outcome is not None and nodes != outcome[0]:
                raise AssertionError(f"kschedcore gate: rounds decided differently (seed {seed})")
            outcome = nodes, sched.utilization()
        reference = statistics.median([ref_before, reference_seconds()])
        nodes, util = outcome  # type: ignore[misc]  # rounds >= 1 set it
        scheduled = sum(n is not None for n in nodes)
        run = GateRun(name or " ".join(map(str, workload))[:60] or "workload", len(nodes), scheduled,
                      len(nodes) - scheduled, statistics.median(times), reference, util, times)
        self.runs.append(run)
        return run
