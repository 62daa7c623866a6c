"""scheduler_perf's throughputCollector (test/integration/scheduler_perf/util.go), on the wall
clock of this process: every `interval` seconds it counts the pods bound in its namespaces; ticks
before the first bound pod are ignored and the first non-zero one is dropped (an outlier); a tick
with no new pod is merged into the next one that has some, whose rate is then recorded once per
elapsed tick. Upstream samples every second; kschedcore schedules a workload in well under a
second, so the interval is shorter (10 ms by default) and the ticks are taken between scheduling
cycles (the loop runs on one thread), with the actual time stamps.

A window too short for two ticks with pods (upstream's collector would report nothing) is
sampled again at the end, over the (time, pods bound) points noted between its cycles, with
ticks a twentieth of the time from its first bound pod to its end (upstream drops the first tick
with pods: the finer ticks start there): the same run, as upstream would see it if it took that
long.
"""
import math
import time

#: ticks a window too short for the interval is cut into when it is sampled again
FINER_TICKS = 20


class _Ticks:
    """The collector's arithmetic: samples from (time, pods bound) ticks `interval` apart."""

    def __init__(self, count: int, now: float, interval: float):
        self.interval = interval
        self.samples: list[float] = []
        self.started = False
        self.skipped = 0
        self.last_count, self.last_time = count, now
        self.next_tick = now + interval

    def tick(self, now: float, scheduled: int) -> None:
        self.next_tick = now + self.interval
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


class ThroughputCollector:
    def __init__(self, name: str, namespaces, counts: dict, interval: float):
        self.name = name
        self.namespaces = set(namespaces) if namespaces else None     # None: every namespace
        self._only = next(iter(self.namespaces)) if self.namespaces and len(self.namespaces) == 1 else None
        self.counts = counts             # namespace -> pods bound so far (the runner keeps it)
        self.begin = time.perf_counter()
        self.first = self._scheduled()
        self.ticks = _Ticks(self.first, self.begin, interval)
        self.interval = interval         # the ticks' length the samples were taken with
        self.resampled = False           # taken again with finer ticks (a short window)
        #: (time, pods bound) between cycles, kept until the first sample is taken
        self.points: list | None = [(self.begin, self.first)]

    @property
    def samples(self) -> list[float]:
        return self.ticks.samples

    @property
    def next_tick(self) -> float:
        return self.ticks.next_tick

    def _scheduled(self) -> int:
        if self._only is not None:
            return self.counts.get(self._only, 0)
        if self.namespaces is None:
            return sum(self.counts.values())
        return sum(self.counts.get(ns, 0) for ns in self.namespaces)

    def due(self, now: float) -> bool:
        return now >= self.ticks.next_tick

    def tick(self, now: float) -> None:
        """Called between cycles: takes the tick if one is due."""
        points, due = self.points, now >= self.ticks.next_tick
        if points is None and not due:
            return
        scheduled = self._scheduled()
        if points is not None:
            points.append((now, scheduled))
        if due:
            self.ticks.tick(now, scheduled)
            if points is not None and self.ticks.samples:
                self.points = None

    def summary(self) -> dict:
        """The SchedulingThroughput data: Average and percentiles of the samples (pods/s). A
        window too short for two ticks with pods is sampled again with finer ticks (`interval`
        says which); empty only when its pods were bound between two cycles."""
        if not self.samples and self.points:
            self._resample()
        s = sorted(self.samples)
        n = len(s)
        data = {}
        if n:
            data = {"Average": sum(s) / n, **{f"Perc{p}": s[math.ceil(n * p / 100) - 1] for p in (50, 90, 95, 99)}}
        return data

    def _resample(self) -> None:
        """Ticks a twentieth of the time from the first point with pods (the tick upstream
        would drop, so the one the finer ticks start from) to the window's end."""
        points = self.points
        assert points is not None
        start = next((i for i, (_, scheduled) in enumerate(points) if scheduled), None)
        if start is None:
            return
        (t0, first), end = points[start], points[-1][0]
        if end <= t0:
            return
        ticks = _Ticks(first, t0, (end - t0) / FINER_TICKS)
        ticks.started = True
        for now, scheduled in points[start + 1:]:
            if now >= ticks.next_tick:
                ticks.tick(now, scheduled)
        if ticks.samples:
            self.ticks, self.interval, self.resampled = ticks, ticks.interval, True

    def window(self) -> tuple:
        """(pods bound in the window, its seconds)."""
        return self._scheduled() - self.first, time.perf_counter() - self.begin
