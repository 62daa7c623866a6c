"""The pods popped and not yet Done, and the cluster events received meanwhile (activeQueue's
inFlightPods and inFlightEvents): a pod that comes back after a failed attempt replays the
events it missed through its rejector plugins' queueing hints."""
import itertools
from collections import deque


class InFlight:
    def __init__(self):
        self._pods = {}              # uid -> (sequence number, QueuedPodInfo)
        self._order: deque[tuple[int, str]] = deque()  # (sequence number, uid), lazily pruned
        self._events = []            # (sequence number, event, old, new) while pods are in flight
        self._head = 0
        self._seq = itertools.count()

    def __contains__(self, uid) -> bool:
        return uid in self._pods

    def __bool__(self) -> bool:
        return bool(self._pods)

    def uids(self) -> list:
        return list(self._pods)

    def pods(self) -> list:
        return [p for _, p in self._pods.values()]

    def seq_of(self, uid):
        entry = self._pods.get(uid)
        return None if entry is None else entry[0]

    def start(self, p) -> None:
        seq = next(self._seq)
        self._pods[p.uid] = (seq, p)
        self._order.append((seq, p.uid))

    def done(self, uid: str):
        """The pod's attempt is over: returns its QueuedPodInfo (None if not in flight)."""
        entry = self._pods.pop(uid, None)
        if entry is None:
            return None
        order = self._order
        while order and self._pods.get(order[0][1], (None,))[0] != order[0][0]:
            order.popleft()
        if not order:
            self._events.clear()
            self._head = 0
            return entry[1]
        # events before the oldest in-flight pod concern nobody any more
        oldest, events, head = order[0][0], self._events, self._head
        while head < len(events) and events[head][0] < oldest:
            head += 1
        if head > 1024 and 2 * head > len(events):
            del events[:head]
            head = 0
        self._head = head
        return entry[1]

    def record_if_any(self, event, old_obj, new_obj) -> None:
        if self._pods:
            self._events.append((next(self._seq), event, old_obj, new_obj))

    def record_for(self, uid, old_obj, new_obj, events) -> bool:
        """Events of an in-flight pod's own update; False if the pod is not in flight."""
        if uid not in self._pods:
            return False
        for event in events:
            self._events.append((next(self._seq), event, old_obj, new_obj))
        return True

    def events_since(self, seq: int) -> list:
        return [e for e in itertools.islice(self._events, self._head, None) if e[0] > seq]
