"""Each node row's placed pods by priority, as arrays (DefaultPreemption's victim search on
resources reads them; the Cache keeps them current)."""
import numpy as np

_EMPTY = np.iinfo(np.int64).max       # an empty slot's priority: below no preemptor's
_STALE = np.iinfo(np.int64).min       # a row never built: stale for every preemptor


class PodsByPriority:
    """Per node row, its placed pods from the most important down -- higher priority first,
    then earlier started: the order SelectVictimsOnNode reprieves them in when no budget is
    broken -- with their priorities and requests as arrays, laid out so that a column over
    many rows is one contiguous take: prio[slot, row], use[resource, row, slot], and
    after[resource, row, slot] = the requests of the row's slots from `slot` on.

    Rebuilt lazily, row by row: `changed[row]` is the lowest priority of a pod placed on or
    taken off the row since it was built, so a preemptor of priority P only needs rows where
    it is below P rebuilt (the pods below P, and their order, are otherwise as built).
    Nominated pods counted for a cycle come and go without making any row stale for the
    pods of lower priority that count them."""

    def __init__(self, shape, slots=4):
        n, r = shape
        self.shape = shape              # the node table's (rows, resources) it was laid out for
        self.prio = np.full((slots, n), _EMPTY, np.int64)
        self.use = np.zeros((r, n, slots), np.int64)
        self.after = np.zeros((r, n, slots + 1), np.int64)
        self.count = np.zeros(n, np.int64)
        self.pods: list[list] = [[] for _ in range(n)]
        self.changed = np.full(n, _STALE, np.int64)

    @property
    def slots(self) -> int:
        return self.prio.shape[0]

    def widen(self, slots):
        s = self.slots
        prio, use, after = self.prio, self.use, self.after
        self.prio = np.full((slots, prio.shape[1]), _EMPTY, np.int64)
        self.use = np.zeros(use.shape[:2] + (slots,), np.int64)
        self.after = np.zeros(use.shape[:2] + (slots + 1,), np.int64)
        self.prio[:s], self.use[:, :, :s], self.after[:, :, :s + 1] = prio, use, after

    def build(self, row, placements, start_time):
        """The row from its placements; start_time(pod key) -> its start (ns)."""
        pls = sorted(placements, key=lambda pl: (-pl.pod.priority, start_time(pl.pod.key)))
        n = len(pls)
        if n > self.slots:
            self.widen(max(n, 2 * self.slots))
        self.prio[:n, row] = [pl.pod.priority for pl in pls]
        self.prio[n:, row] = _EMPTY
        use = np.zeros((self.use.shape[0], self.slots), np.int64)
        for s, pl in enumerate(pls):
            np.add.at(use[:, s], pl.cols, pl.vals)
        self.use[:, row] = use
        self.after[:, row] = 0
        if n:
            self.after[:, row, :n] = np.cumsum(use[:, n - 1::-1], axis=1)[:, ::-1]
        self.count[row] = n
        self.pods[row] = [pl.pod for pl in pls]
        self.changed[row] = _EMPTY

    def forget(self, row, pod) -> None:
        """A pod taken off the row: its slot holds None from now on. Only preemptors of a
        priority at or below `changed[row]` (now at most the pod's) still read the row as
        built, and they read the slots below their priority -- never this pod's."""
        pods = self.pods[row]
        for i, p in enumerate(pods):
            if p is pod:
                pods[i] = None
                return

    def lower(self, rows, priority):
        """Per row, the first slot of the pods below `priority` and how many there are."""
        n_low = (self.prio.take(rows, axis=1) < priority).sum(axis=0)
        return self.count.take(rows) - n_low, n_low

    def freed(self, col, rows, first):
        """Per row, resource `col` requested by its slots from `first` on."""
        after = self.after[col]
        return after.reshape(-1).take(rows * after.shape[1] + first)

    def prio_at(self, rows, slots):
        """The priorities in `slots` (rows x slots) of `rows`."""
        return self.prio.reshape(-1).take(slots * self.prio.shape[1] + rows[:, None])

    def use_at(self, col, rows, slots):
        """Resource `col` requested in `slots` (rows x slots) of `rows`."""
        use = self.use[col]
        return use.reshape(-1).take(rows[:, None] * use.shape[1] + slots)
