"""PrioritySort (plugins/queuesort): higher priority first, then the earlier queue timestamp.

The scheduling queue orders by this plugin with a structure of its own (a FIFO run per
priority, backend/queue/heaps.py PrioritySortQueue); `less` is the same order for comparison."""
from ...backend.queue.heaps import priority_sort_key


class PrioritySort:
    name = "PrioritySort"

    def __init__(self, args=None, handle=None):
        pass

    def less(self, a, b) -> bool:
        return priority_sort_key(a) < priority_sort_key(b)
