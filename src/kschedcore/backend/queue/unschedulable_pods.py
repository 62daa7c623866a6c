"""unschedulablePods (backend/queue/unschedulable_pods.go): the pods whose last attempt failed,
indexed by their rejector plugins so that a cluster event looks only at the pods a plugin that
hears it rejected, and by time for the periodic leftover flush."""
import itertools

from ...framework.cluster_events import EventUnschedulableTimeout, match_any_cluster_event
from .heaps import Heap


class UnschedulablePods:
    def __init__(self, seq):
        self.pods = {}                      # key -> QueuedPodInfo
        self._by_plugin = {}                # rejector plugin ("" for none) -> {key: QueuedPodInfo}
        self._seq = itertools.count(1)
        self.timeouts = Heap(lambda p: (p.timestamp,), seq)   # the pods the leftover flush may move

    def __len__(self):
        return len(self.pods)

    def get(self, key):
        return self.pods.get(key)

    def insert(self, p) -> None:
        self.pods[p.key] = p
        p.pool_seq = next(self._seq)

    def index(self, p) -> None:
        """Indexes p by its rejector plugins and, unless its gate never times out, by time."""
        p.pool_plugins = tuple(p.unschedulable_plugins | p.pending_plugins) or ("",)
        for name in p.pool_plugins:
            self._by_plugin.setdefault(name, {})[p.key] = p
        if not p.gated or match_any_cluster_event(EventUnschedulableTimeout, p.gating_plugin_events):
            self.timeouts.push(p)

    def unindex(self, p) -> None:
        for name in p.pool_plugins:
            bucket = self._by_plugin[name]
            del bucket[p.key]
            if not bucket:
                del self._by_plugin[name]
        if p.heap_entry is not None:
            self.timeouts.remove(p)

    def remove(self, p) -> None:
        self.unindex(p)
        del self.pods[p.key]

    def candidates(self, plugins) -> list:
        """The pods one of these plugins rejected, or that no plugin rejected, in pool order."""
        by_plugin = self._by_plugin
        buckets = [by_plugin[n] for n in plugins if n in by_plugin]
        if "" in by_plugin:
            buckets.append(by_plugin[""])   # no rejector plugin: any event retries them
        if len(buckets) <= 1:
            return list(buckets[0].values()) if buckets else []
        pods = {p.key: p for b in buckets for p in b.values()}
        return sorted(pods.values(), key=lambda p: p.pool_seq)

    def expired(self, now: float, limit: float) -> list:
        """The pods in the pool longer than `limit`, taken off the time index, in pool order."""
        pods = []
        while (p := self.timeouts.peek()) is not None and now - p.timestamp > limit:
            self.timeouts.remove(p)
            pods.append(p)
        return sorted(pods, key=lambda p: p.pool_seq)
