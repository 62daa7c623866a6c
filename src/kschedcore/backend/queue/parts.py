"""The parts a pod waits in -- activeQ, backoffQ (rejections, and errors apart) and
unschedulablePods -- by key, each pod in at most one (scheduling_queue.go's activeQ,
backoffQ and unschedulablePods fields, and their AddOrUpdate / Delete)."""
from .heaps import Heap, LessKey, PrioritySortQueue, as_tuple, priority_sort_key
from .queued_pod_info import ACTIVE_Q, BACKOFF_Q, ERROR_BACKOFF_Q, UNSCHEDULABLE_PODS, QueuedPodInfo
from .unschedulable_pods import UnschedulablePods


class QueueParts:
    """sort_key / less: the QueueSort (both None: PrioritySort); backoff: its expiries order
    backoffQ; on_ready(where): a pod entered activeQ or backoffQ (waiters may pop)."""

    def __init__(self, seq, backoff, pop_from_backoff_q: bool, sort_key=None, less=None, on_ready=None):
        if less is not None:
            sort_key = lambda p: (LessKey(p, less),)
        elif sort_key is not None:
            sort_key = as_tuple(sort_key)
        if sort_key is None:
            sort_key = priority_sort_key
            self.active: PrioritySortQueue | Heap = PrioritySortQueue(seq)
        else:
            self.active = Heap(sort_key, seq)
        if pop_from_backoff_q:   # lessBackoffCompletedWithPriority
            backoff_key = lambda p: (backoff.expiry(p), *sort_key(p))
        else:
            backoff_key = lambda p: (backoff.expiry(p),)
        self.backoff = Heap(backoff_key, seq)
        self.error_backoff = Heap(lambda p: (backoff.expiry(p),), seq)
        self.pool = UnschedulablePods(seq)
        self._heaps = {ACTIVE_Q: self.active, BACKOFF_Q: self.backoff, ERROR_BACKOFF_Q: self.error_backoff}
        self.pods: dict[str, QueuedPodInfo] = {}  # key -> QueuedPodInfo in activeQ, backoffQ or the pool
        self._on_ready = on_ready

    def __len__(self):
        return len(self.pods)

    def get(self, key):
        return self.pods.get(key)

    def where(self, key):
        """activeQ, backoffQ or unschedulablePods, or None."""
        p = self.pods.get(key)
        if p is None:
            return None
        return BACKOFF_Q if p.part == ERROR_BACKOFF_Q else p.part

    def detach(self, p) -> None:
        """Removes p from whichever part holds it."""
        if p.part == UNSCHEDULABLE_PODS:
            self.pool.remove(p)
        else:
            self._heaps[p.part].remove(p)
        del self.pods[p.key]
        p.part = None

    def place(self, p, where: str) -> None:
        """Puts p into a heap part, replacing whatever held its key (AddOrUpdate)."""
        old = self.pods.get(p.key)
        if old is not None:
            self.detach(old)
        self._heaps[where].push(p)
        self.pods[p.key] = p
        p.part = where
        if self._on_ready is not None:
            self._on_ready(where)

    def replace(self, p, pod) -> bool:
        """A newer version of a pod queued in a heap part, kept in its place; False if p is in the pool."""
        if p.part == UNSCHEDULABLE_PODS:
            return False
        heap = self._heaps[p.part]
        heap.remove(p)
        p.set_pod(pod)
        heap.push(p)
        return True

    def put_in_pool(self, p: QueuedPodInfo) -> None:
        """unschedulablePods.addOrUpdate; also re-indexes p after its plugins or gate changed."""
        old = self.pods.get(p.key)
        if old is p and p.part == UNSCHEDULABLE_PODS:
            self.pool.unindex(p)
        else:
            if old is not None:
                self.detach(old)
            self.pods[p.key] = p
            self.pool.insert(p)
            p.part = UNSCHEDULABLE_PODS
        self.pool.index(p)

    def pop(self, from_backoff: bool):
        """The head of activeQ, else (from_backoff) of the rejection backoffQ, taken out."""
        p = self.active.pop()
        if p is None and from_backoff:
            p = self.backoff.pop()
        if p is not None:
            del self.pods[p.key]
            p.part = None
        return p

    def pop_run(self, pinfos) -> bool:
        """pop(False) for each of `pinfos`, activeQ's head run (PrioritySortQueue.pop_run), at
        once; False where activeQ cannot."""
        active = self.active
        if not isinstance(active, PrioritySortQueue) or not active.pop_run(pinfos):
            return False
        pods = self.pods
        for p in pinfos:
            del pods[p.key]
            p.part = None
        return True

    def backoff_heads(self) -> list:
        return [p for p in (self.backoff.peek(), self.error_backoff.peek()) if p is not None]

    def backed_off(self, backing_off) -> list:
        """The backoffQ pods whose backoff ended (backing_off(p) False), taken out."""
        done = []
        for heap in (self.backoff, self.error_backoff):
            while (p := heap.peek()) is not None and not backing_off(p):
                self.detach(p)
                done.append(p)
        return done

    # ---- introspection ---------------------------------------------------------------------------
    def active_pods(self) -> list:
        return [p.pod for p in self.active.items()]

    def backoff_pods(self) -> list:
        return [p.pod for p in self.backoff.items() + self.error_backoff.items()]

    def pool_pods(self) -> list:
        return [p.pod for p in self.pool.pods.values()]
