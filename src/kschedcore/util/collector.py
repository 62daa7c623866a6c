"""The cyclic garbage collector around large batches.

Loading a cluster or scheduling a batch allocates millions of small containers, nearly none of
them in a reference cycle; the collector's own passes over the growing heap would cost more
than the work (generating 10^6 pods: 36 us a pod with them, 8 without). `paused()` stops those
passes; a batch that does make cyclic garbage collects its youngest generation itself
(`collect_young`).
"""
import gc
from contextlib import contextmanager

#: cycles between the collections of the youngest generation in a batch (collect_young)
YOUNG_EVERY = 1024


@contextmanager
def paused():
    """No automatic collection inside (nesting is fine); the previous state after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def collect_young(count: int) -> None:
    """Within paused(): collects the youngest generation every YOUNG_EVERY calls' counts (what
    survives it is not looked at again until the batch ends). A failed cycle's record and its
    Diagnosis refer to each other (~1 MB a pair at 100,000 nodes): left to the end of a batch
    they took 24 GB for 10^6 pods on 10^5 nodes."""
    if count % YOUNG_EVERY == 0:
        gc.collect(0)


def keep_for_good() -> None:
    """Moves every object alive to the collector's permanent generation (gc.freeze): for a
    command that has loaded its cluster and keeps it to the end. Objects made while paused()
    are all still in the youngest generation; left there, the next collections would walk
    every one of them -- for a loaded cluster of 10^6 pods, 24 us a pod over the next
    100,000 allocations, measured."""
    gc.freeze()
