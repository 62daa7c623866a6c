"""pickOneNodeForPreemption and the order of victims, written once: the kernel path (one
candidate at a time) and the resources path (every candidate at once) both rank with these."""
import numpy as np

NO_VICTIMS = "No preemption victims found for incoming pod"


def victims_in_order(victims, breaking) -> tuple:
    """(victims, how many break a budget); re-sorted by importance when both kinds are in."""
    n = sum(1 for v in victims if v.key in breaking)
    if 0 < n < len(victims):
        victims.sort(key=lambda p: -p.priority)
    return victims, n


def rank_keys(candidates) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """pickOneNodeForPreemption's keys of [(victims, budget violations)]: (violations, highest
    victim priority, sum of (priority + 2^31), number of victims), as arrays."""
    return (np.asarray([n for _, n in candidates], np.int64),
            np.asarray([max(v.priority for v in vs) for vs, _ in candidates], np.int64),
            np.asarray([sum(v.priority + 2 ** 31 for v in vs) for vs, _ in candidates], np.int64),
            np.asarray([len(vs) for vs, _ in candidates], np.int64))


def pick_one_node(violations, top, priority_sum, n_victims, earliest_start) -> int:
    """pickOneNodeForPreemption over candidates given as arrays: the fewest budget violations,
    the lowest highest victim priority, the lowest sum of (priority + 2^31), the fewest victims;
    then the latest start of the most important victims (`earliest_start(tied positions)` ->
    each one's earliest start among those); then the first. Returns the chosen position."""
    best = np.ones(len(top), bool)
    for key in (violations, top, priority_sum, n_victims):
        best &= key == key[best].min()
    tied = np.flatnonzero(best)
    if len(tied) == 1:
        return int(tied[0])
    return int(tied[np.argmax(earliest_start(tied))])
