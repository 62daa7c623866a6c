"""The heaps under the queue's parts: a generic one for any QueueSort, and activeQ's own for
PrioritySort (O(1) for the usual arrivals). Both are FIFO among equal keys with O(1) lazy
removal."""
import heapq
import itertools
from collections import deque


def priority_sort_key(p) -> tuple:
    """PrioritySort.Less as a key: higher priority first, then the earlier Timestamp."""
    return -(p.pod.priority or 0), p.timestamp


class LessKey:
    """Turns a QueueSort Less(a, b) into a heap key; ties fall through to FIFO order."""
    __slots__ = ("p", "less")

    def __init__(self, p, less):
        self.p, self.less = p, less

    def __lt__(self, other):
        return self.less(self.p, other.p)

    def __eq__(self, other):
        return not self.less(self.p, other.p) and not self.less(other.p, self.p)


class Heap:
    """A binary heap of QueuedPodInfos, FIFO among equal keys, with O(1) lazy removal.

    Entries are flat lists [*key, seq, pod info] so comparisons stay on plain numbers; a
    removed entry keeps its place with the pod info set to None."""
    __slots__ = ("_h", "_live", "_key", "_seq")

    def __init__(self, key, seq):
        self._h, self._live, self._key, self._seq = [], 0, key, seq

    def __len__(self):
        return self._live

    def push(self, p):
        entry = [*self._key(p), next(self._seq), p]
        p.heap_entry = entry
        heapq.heappush(self._h, entry)
        self._live += 1

    def remove(self, p):
        p.heap_entry[-1] = None
        p.heap_entry = None
        self._live -= 1
        if len(self._h) > 64 and 2 * self._live < len(self._h):
            self._h = [e for e in self._h if e[-1] is not None]
            heapq.heapify(self._h)

    def peek(self):
        h = self._h
        while h and h[0][-1] is None:
            heapq.heappop(h)
        return h[0][-1] if h else None

    def pop(self):
        p = self.peek()
        if p is not None:
            heapq.heappop(self._h)
            p.heap_entry = None
            self._live -= 1
        return p

    def items(self):
        """Live pods in pop order."""
        return [e[-1] for e in sorted(e for e in self._h if e[-1] is not None)]

    def head(self, most: int) -> list:
        """Up to `most` live pods in pop order, not taken out: the heap walked from its root,
        smallest entry first (O(most log most), not a pass over the heap)."""
        h: list = self._h
        out: list = []
        frontier = [(h[0], 0)] if h else []
        while frontier and len(out) < most:
            entry, i = heapq.heappop(frontier)
            if entry[-1] is not None:
                out.append(entry[-1])
            for child in (2 * i + 1, 2 * i + 2):
                if child < len(h):
                    heapq.heappush(frontier, (h[child], child))
        return out


class _Bucket:
    """One priority of the PrioritySort activeQ."""
    __slots__ = ("run", "heap", "live", "listed")

    def __init__(self):
        self.run: deque = deque()
        self.heap: list = []
        self.live, self.listed = 0, False


class PrioritySortQueue:
    """activeQ ordered by PrioritySort in O(1) for the usual arrivals.

    Per priority, entries [timestamp, seq, bucket, pod info] arriving in timestamp order are
    appended to a FIFO run; older ones (pods coming back with their old Timestamp) go to a
    small heap; the head is the smaller of the two. Same order as a heap on
    (-priority, timestamp, seq); removal is lazy as in Heap."""
    __slots__ = ("_buckets", "_prios", "_live", "_entries", "_seq")

    def __init__(self, seq):
        self._buckets, self._prios, self._live, self._entries, self._seq = {}, [], 0, 0, seq

    def __len__(self):
        return self._live

    def push(self, p):
        prio = p.pod.priority or 0
        b = self._buckets.get(prio)
        if b is None:
            b = self._buckets[prio] = _Bucket()
        if not b.listed:
            heapq.heappush(self._prios, -prio)
            b.listed = True
        entry = [p.timestamp, next(self._seq), b, p]
        p.heap_entry = entry
        if not b.run or p.timestamp >= b.run[-1][0]:
            b.run.append(entry)
        else:
            heapq.heappush(b.heap, entry)
        b.live += 1
        self._live += 1
        self._entries += 1

    def remove(self, p):
        entry = p.heap_entry
        entry[-1] = None
        entry[2].live -= 1
        p.heap_entry = None
        self._live -= 1
        if self._entries > 2 * self._live + 1024:
            self._compact()

    def _compact(self):
        for b in self._buckets.values():
            b.run = deque(e for e in b.run if e[-1] is not None)
            b.heap = [e for e in b.heap if e[-1] is not None]
            heapq.heapify(b.heap)
        self._entries = self._live

    def _head(self):
        """The head entry and the container holding it, dropping dead entries on the way."""
        prios = self._prios
        while prios:
            b = self._buckets[-prios[0]]
            if not b.live:
                heapq.heappop(prios)
                self._entries -= len(b.run) + len(b.heap)
                b.run.clear()
                b.heap.clear()
                b.listed = False
                continue
            run, heap = b.run, b.heap
            while run and run[0][-1] is None:
                run.popleft()
                self._entries -= 1
            while heap and heap[0][-1] is None:
                heapq.heappop(heap)
                self._entries -= 1
            if run and (not heap or run[0] < heap[0]):
                return run[0], b
            return heap[0], b
        return None, None

    def peek(self):
        entry, _ = self._head()
        return entry[-1] if entry else None

    def head_run(self, most: int) -> list:
        """Up to `most` live pods from the head in pop order, not taken out: the head bucket's
        FIFO run while its heap holds nothing older (else the head alone)."""
        entry, b = self._head()
        if entry is None:
            return []
        if not b.run or b.run[0] is not entry or b.heap:
            return [entry[-1]]
        out = []
        for e in b.run:
            if e[-1] is not None:
                out.append(e[-1])
                if len(out) >= most:
                    break
        return out

    def pop(self):
        entry, b = self._head()
        if entry is None:
            return None
        if b.run and b.run[0] is entry:
            b.run.popleft()
        else:
            heapq.heappop(b.heap)
        p = entry[-1]
        p.heap_entry = None
        b.live -= 1
        self._live -= 1
        self._entries -= 1
        return p

    def pop_run(self, pods) -> bool:
        """pop() for each of `pods`, head_run's answer (unchanged since) from the head bucket's
        FIFO run, at once; False, nothing taken, where the head is not such a run."""
        entry, b = self._head()
        run = b.run if entry is not None else None
        if not run or run[0] is not entry or b.heap:
            return False
        dead = 0
        for want in pods:
            e = run.popleft()
            while e[-1] is None:
                dead += 1
                e = run.popleft()
            if e[-1] is not want:
                raise LookupError(f"pod {want.key}: not at activeQ's head")
            want.heap_entry = None
        b.live -= len(pods)
        self._live -= len(pods)
        self._entries -= len(pods) + dead
        return True

    def items(self):
        """Live pods in pop order."""
        live = [(-prio, e[0], e[1], e[-1]) for prio, b in self._buckets.items()
                for e in itertools.chain(b.run, b.heap) if e[-1] is not None]
        return [x[-1] for x in sorted(live, key=lambda x: x[:3])]


def as_tuple(sort_key):
    """A user's QueueSort key as the tuple the heaps flatten."""
    def key(p):
        k = sort_key(p)
        return k if isinstance(k, tuple) else (k,)
    return key
