"""scheduler_perf's throughputCollector (test/integration/scheduler_perf/util.go), on the wall
clock of this process: every `interval` seconds it counts the pods bound in its namespaces; ticks
before the first bound pod are ignored and the first non-zero one is dropped (an outlier); a tick
with no new pod is merged into the next one that has some, whose rate is then recorded once per
elapsed tick. Upstream samples every second; kschedcore schedules a workload in well under a
second, so the interval is shorter (10 ms by default) and the ticks are taken between scheduling
cycles (the loop runs on one thread), with the actual time stamps.
"""
import math
import time


class ThroughputCollector:
    def __init__(self, name: str, namespaces, counts: dict, interval: float):
        self.name = name
        self.namespaces = set(namespaces) if namespaces else None     # None: every namespace
        self.counts = counts             # namespace -> pods bound so far (the runner keeps it)
        self.interval = interval
        self.samples: list[float] = []
        self.started = False
        self.skipped = 0
        self.last_count = self._scheduled()
        self.last_time = self.next_tick = time.perf_counter()
        self.next_tick += interval
        self.first = self.last_count
        self.begin = self.last_time

    def _scheduled(self) -> int:
        if self.namespaces is None:
            return sum(self.counts.values())
        return sum(self.counts.get(ns, 0) for ns in self.namespaces)

    def due(self, now: float) -> bool:
        return now >= self.next_tick

    def tick(self, now: float) -> None:
        """Called between cycles: takes every tick that is due."""
        if now < self.next_tick:
            return
        self.next_tick = now + self.interval
        scheduled = self._scheduled()
        if scheduled == 0:
            return
        if not self.started:
            self.started = True
            self.last_count, self.last_time = scheduled, now
            return
        new = scheduled - self.last_count
        if new == 0:
            self.skipped += 1
            return
        rate = new / (now - self.last_time)
        self.samples += [rate] * (self.skipped + 1)
        self.last_count, self.last_time, self.skipped = scheduled, now, 0

    def summary(self) -> dict:
        """The SchedulingThroughput data: Average and percentiles of the samples (pods/s); empty
        when the window was too short for two ticks."""
        s = sorted(self.samples)
        n = len(s)
        data = {}
        if n:
            data = {"Average": sum(s) / n, **{f"Perc{p}": s[math.ceil(n * p / 100) - 1] for p in (50, 90, 95, 99)}}
        return data

    def window(self) -> tuple:
        """(pods bound in the window, its seconds)."""
        return self._scheduled() - self.first, time.perf_counter() - self.begin
