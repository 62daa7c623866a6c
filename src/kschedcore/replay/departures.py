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
    """A heap of bare times with each time's departures: `times[0]` is the next one's time.
    (A heap of (time, sequence, departure) tuples cost ~5% of a churning replay in heappop's
    tuple comparisons alone; floats compare in a few nanoseconds.) A time holds its one
    Departure, or a FIFO where several share it (rare: durations end at distinct times)."""
    __slots__ = ("times", "_due")

    def __init__(self) -> None:
        self.times: list[float] = []
        self._due: dict[float, Departure | deque] = {}   # a time's one departure, or its FIFO

    def __bool__(self) -> bool:
        return bool(self.times)

    def __len__(self) -> int:
        return len(self.times)

    def push(self, t: float, departure: Departure) -> None:
        self._add(t, departure, False)

    def peek(self) -> Departure:
        """The next departure, left in place."""
        due = self._due[self.times[0]]
        if isinstance(due, deque):
            return due[0]
        return due

    def unpop(self, t: float, departure: Departure) -> None:
        """A departure popped at `t` put back first among those at `t` (undoing pops: last first)."""
        self._add(t, departure, True)

    def _add(self, t: float, departure: Departure, first: bool) -> None:
        """One more departure at `t`, last of those there (first: first), and `t` on the heap."""
        due = self._due.get(t)
        if due is None:
            self._due[t] = departure
        elif isinstance(due, deque):
            due.appendleft(departure) if first else due.append(departure)
        else:
            self._due[t] = deque((departure, due) if first else (due, departure))
        heapq.heappush(self.times, t)

    def pop(self) -> Departure:
        """The next departure (the first made of those at the soonest time)."""
        t = heapq.heappop(self.times)
        due = self._due.pop(t)
        if not isinstance(due, deque):
            return due
        departure = due.popleft()
        if due:
            self._due[t] = due
        return departure
