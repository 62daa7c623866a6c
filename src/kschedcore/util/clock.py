"""Clocks for the scheduling queue: real time for live mode, virtual time for simulation.

Times are float seconds. The queue only reads `now()`; backoff expiries are aligned to whole
seconds of this scale, as kube-scheduler aligns them to whole seconds of wall time (§8.2).
"""
import time


class RealClock:
    """Wall-clock time (time.time), so whole-second alignment matches kube-scheduler's."""
    virtual = False

    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class VirtualClock:
    """Time that moves only when told: backoffs and flushes pass instantly in simulation.

    Whole or binary-fraction steps (1, 0.5, 0.25 ...) keep second boundaries exact; decimal
    fractions such as 0.1 accumulate float rounding like any float sum.
    """
    virtual = True

    def __init__(self, start: float = 0.0):
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError(f"a clock cannot go back: advance({seconds})")
        self._now += seconds
        return self._now

    def advance_to(self, t: float) -> float:
        if t < self._now:
            raise ValueError(f"a clock cannot go back: advance_to({t}) at {self._now}")
        self._now = float(t)
        return self._now

    def sleep(self, seconds: float) -> None:
        """Sleeping in a simulation is advancing the clock."""
        if seconds > 0:
            self._now += seconds
