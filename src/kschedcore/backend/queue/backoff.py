"""Backoff and the periodic flushes' clock (scheduling_queue.go getBackoffTime,
calculateBackoffDuration, alignToWindow; the flush goroutines' tick times)."""
import math

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
BACKOFF_FLUSH_PERIOD = 1.0            # backoffQOrderingWindowDuration
LEFTOVER_FLUSH_PERIOD = 30.0


class Backoff:
    """A pod's backoff: initial * 2^(attempts-1) capped, from its last failure, aligned to whole
    seconds when pods may be popped from backoffQ."""

    def __init__(self, initial: float, maximum: float, aligned: bool):
        self.initial, self.maximum, self.aligned = initial, maximum, aligned

    def align(self, t: float) -> float:
        """alignToWindow: whole seconds when popping from backoffQ is on."""
        return math.floor(t) if self.aligned else t

    def expiry(self, p) -> float:
        """getBackoffTime: (Timestamp + backoff) aligned, cached until the next failure."""
        if self.maximum == 0:
            return -math.inf
        count = p.consecutive_errors_count or p.unschedulable_count
        if count == 0:
            return -math.inf
        if p.backoff_expiration is None:
            p.backoff_expiration = self.align(p.timestamp + self.duration(count))
        return p.backoff_expiration

    def duration(self, count: int) -> float:
        """initial * 2^(count-1), capped at the maximum."""
        if count <= 0:
            return 0.0
        if count > 64:
            return self.maximum
        return min(self.initial * (1 << (count - 1)), self.maximum)

    def backing_off(self, p, now: float) -> bool:
        return self.expiry(p) >= self.align(now)


class FlushTicks:
    """When the two periodic flushes tick: backoffQ every whole second from start + 1 s, the
    unschedulable leftover flush at start and every 30 s (wait.Until runs at once)."""

    def __init__(self, start: float, align):
        self.backoff_base = align(start + BACKOFF_FLUSH_PERIOD)
        self.leftover_base = start
        self.next_backoff = self.backoff_base
        self.next_leftover = start

    def backoff_after(self, expiry: float) -> float:
        """The first backoff tick at which a pod whose backoff ends at `expiry` is flushed."""
        return max(tick_after(self.backoff_base, BACKOFF_FLUSH_PERIOD, expiry), self.next_backoff)

    def leftover_after(self, deadline: float) -> float:
        return max(tick_after(self.leftover_base, LEFTOVER_FLUSH_PERIOD, deadline), self.next_leftover)

    def ticked_backoff(self, t: float) -> None:
        self.next_backoff = t + BACKOFF_FLUSH_PERIOD

    def ticked_leftover(self, t: float) -> None:
        self.next_leftover = t + LEFTOVER_FLUSH_PERIOD

    def passed(self, now: float) -> None:
        """Ticks up to now had nothing to move: new work can only be due after now."""
        self.next_backoff = max(self.next_backoff, tick_after(self.backoff_base, BACKOFF_FLUSH_PERIOD, now))
        self.next_leftover = max(self.next_leftover, tick_after(self.leftover_base, LEFTOVER_FLUSH_PERIOD, now))


def tick_after(base: float, period: float, t: float) -> float:
    """The first tick base + k*period (k >= 0) strictly after t."""
    if t < base:
        return base
    return base + (math.floor((t - base) / period) + 1) * period
