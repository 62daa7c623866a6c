"""The departures a replay makes itself (a duration ran out, a deletionTimestamp came), soonest
first and, at equal times, in the order they were made."""
from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass


@dataclass(slots=True)
class Departure:
    """A pod leaving on its own (its duration ran out, or its deletionTimestamp came)."""
    key: str
    binding: int | None = None      # only if this is still its n-th binding (None: whatever it is)


class Departures:
    """A heap of bare times with each time's departures in a FIFO: `times[0]` is the next one's
    time. (A heap of (time, sequence, departure) tuples cost ~5% of a churning replay in
    heappop's tuple comparisons alone; floats compare in a few nanoseconds.)"""
    __slots__ = ("times", "_due")

    def __init__(self) -> None:
        self.times: list[float] = []
        self._due: dict[float, deque] = {}

    def __bool__(self) -> bool:
        return bool(self.times)

    def __len__(self) -> int:
        return len(self.times)

    def push(self, t: float, departure: Departure) -> None:
        self._at(t).append(departure)

    def peek(self) -> Departure:
        """The next departure, left in place."""
        return self._due[self.times[0]][0]

    def unpop(self, t: float, departure: Departure) -> None:
        """A departure popped at `t` put back first among those at `t` (undoing pops: last first)."""
        self._at(t).appendleft(departure)

    def _at(self, t: float) -> deque:
        """The FIFO of the departures at `t`, one more time `t` on the heap for the caller's."""
        due = self._due.get(t)
        if due is None:
            due = self._due[t] = deque()
        heapq.heappush(self.times, t)
        return due

    def pop(self) -> Departure:
        """The next departure (the first made of those at the soonest time)."""
        t = heapq.heappop(self.times)
        due = self._due[t]
        departure = due.popleft()
        if not due:
            del self._due[t]
        return departure
