"""Each node row's placed pods by priority, as arrays (DefaultPreemption's victim search on
resources reads them; the Cache keeps them current)."""
import numpy as np

_EMPTY = np.iinfo(np.int64).max       # an empty slot's priority: below no preemptor's
_STALE = np.iinfo(np.int64).min       # a row never built: stale for every preemptor


class PodsByPriority:
    """Per node row, its placed pods from the most important down -- higher priority first,
    then earlier started: the order SelectVictimsOnNode reprieves them in when no budget is
    broken -- with their priorities and requests as arrays, laid out so that a column over
    many rows is one contiguous take: prio[slot, row], start[slot, row] (GetPodStartTime, ns),
    use[resource, row, slot], and after[resource, row, slot] = the requests of the row's slots
    from `slot` on.

    Rebuilt lazily, row by row: `changed[row]` is the lowest priority of a pod placed on or
    taken off the row since it was built, so a preemptor of priority P only needs rows where
    it is below P rebuilt (the pods below P, and their order, are otherwise as built).
    Nominated pods counted for a cycle come and go without making any row stale for the
    pods of lower priority that count them."""

    def __init__(self, shape, slots=4):
        n, r = shape
        self.shape = shape              # the node table's (rows, resources) it was laid out for
        self.prio = np.full((slots, n), _EMPTY, np.int64)
        self.start = np.zeros((slots, n), np.int64)
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
        prio, start, use, after = self.prio, self.start, self.use, self.after
        self.prio = np.full((slots, prio.shape[1]), _EMPTY, np.int64)
        self.start = np.zeros((slots, prio.shape[1]), np.int64)
        self.start[:s] = start
        self.use = np.zeros(use.shape[:2] + (slots,), np.int64)
        self.after = np.zeros(use.shape[:2] + (slots + 1,), np.int64)
        self.prio[:s], self.use[:, :, :s], self.after[:, :, :s + 1] = prio, use, after

    def build(self, rows, placements, start_time):
        """`rows` (distinct) from their placements (placements[i]: rows[i]'s, in placement
        order); start_time(pod key) -> its start (ns). All rows at once: one stable sort by
        (row, -priority, start), the slots' requests added in one call."""
        rows = np.asarray(rows, np.int64)
        counts = np.fromiter((len(p) for p in placements), np.int64, len(rows))
        if counts.size and counts.max() > self.slots:
            self.widen(max(int(counts.max()), 2 * self.slots))
        flat = [pl for pls in placements for pl in pls]
        total = len(flat)
        owner = np.repeat(rows, counts)                          # each placement's row
        prio = np.fromiter((pl.pod.priority for pl in flat), np.int64, total)
        start = np.fromiter((start_time(pl.pod.key) for pl in flat), np.int64, total)
        order = np.lexsort((start, -prio, np.repeat(np.arange(len(rows)), counts)))
        first = np.repeat(np.cumsum(counts) - counts, counts)    # each sorted position's row offset
        slot = np.empty(total, np.int64)
        slot[order] = np.arange(total) - first
        self.prio[:, rows] = _EMPTY
        self.prio[slot, owner] = prio
        self.start[slot, owner] = start
        self.use[:, rows] = 0
        if total:
            n_cols = np.fromiter((len(pl.cols) for pl in flat), np.int64, total)
            each = np.repeat(np.arange(total), n_cols)
            np.add.at(self.use, (np.concatenate([pl.cols for pl in flat]), owner[each], slot[each]),
                      np.concatenate([pl.vals for pl in flat]))
        self.after[:, rows, :-1] = np.cumsum(self.use[:, rows, ::-1], axis=2)[:, :, ::-1]
        self.after[:, rows, -1] = 0
        self.count[rows] = counts
        ranked = [flat[i].pod for i in order.tolist()]
        at = 0
        for row, n in zip(rows.tolist(), counts.tolist()):
            self.pods[row] = ranked[at:at + n]
            at += n
        self.changed[rows] = _EMPTY

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

    def start_at(self, rows, slots):
        """The start times of the pods in `slots` of `rows` (one slot per row, or rows x slots)."""
        return self.start.reshape(-1).take(slots * self.start.shape[1] + rows)

    def use_at(self, col, rows, slots):
        """Resource `col` requested in `slots` (rows x slots) of `rows`."""
        use = self.use[col]
        return use.reshape(-1).take(rows[:, None] * use.shape[1] + slots)
