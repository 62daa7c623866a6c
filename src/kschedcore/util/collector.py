"""The cyclic garbage collector around large batches and the loop's runs.

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
#: allocations between the youngest generation's collections in a loop's run (Frozen)
LOOP_YOUNG_THRESHOLD = 50_000


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


class Frozen:
    """The objects alive when it is entered out of the cyclic collector's sight until it is
    left (the run's own garbage is still collected): a full collection then walks what the run
    made, not the whole cache -- one such collection cost a 10,000-pod run ~30%. Young
    collections are rarer too (every LOOP_YOUNG_THRESHOLD allocations rather than 700; the batch
    path pauses the collector for the same reason). freeze False: only that (the process froze
    objects itself: its freeze is left alone); None: asked when first entered and kept --
    gc.get_freeze_count walks every frozen object, so one entered once a step asks once.
    A class, not a generator: entering and leaving cost well under a microsecond."""

    def __init__(self, freeze: bool | None = None) -> None:
        self.freeze, self.previous = freeze, (0, 0, 0)

    def __enter__(self) -> None:
        if self.freeze is None:
            self.freeze = not gc.get_freeze_count()
        self.previous = previous = gc.get_threshold()
        gc.set_threshold(max(previous[0], LOOP_YOUNG_THRESHOLD), *previous[1:])
        if self.freeze:
            gc.freeze()

    def __exit__(self, *exc) -> None:
        if self.freeze:
            gc.unfreeze()
        gc.set_threshold(*self.previous)


def gc_frozen() -> Frozen:
    """A run with the objects alive before it frozen, unless the process froze objects itself."""
    return Frozen()
