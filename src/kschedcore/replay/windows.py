"""A quiet stretch's windows (quiet.py): the next events -- plain arrivals of one profile and
departures of bound pods -- decided by the kernel in one call (ScheduleOne.schedule_batch with
the departures' usage taken off between the pods, NodeKernel.run_batch's removals), then
applied: the cache and the loop take the arrivals bound to their kernel rows and the
departures' deletes in one call each (Cache.place_written, Cache.remove_taken_off,
loop.bound_pods_left), the records and the queue's counts follow the events in order. A window
ends at a step that samples (after a departure, sampled then; before an arrival, sampled
before the next window's kernel call places it), at `until`, before an event the stretch would
not take, an arrival in another profile or with volumes or claims, and before the first
departure one of its own arrivals would make (its lifetime); the kernel ends it before the
first pod that is not node-local or fits nowhere, whose cycle is then its own. Departures popped for the rest go
back to the heap as they were.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..scheduler.loop import Outcome, assigned_pod_deleted, bound_pods_left
from .departures import Departure

if TYPE_CHECKING:
    from .engine import Replay

#: the most events one window takes (arrivals and departures)
EVENTS_AT_ONCE = 256


def take(replay: Replay, order: list, pos: int, times: list, plain_arrival) -> tuple[int, bool, bool]:
    """A window from timeline position order[pos] on: (the next position, whether it took any
    event, whether it stopped before an arrival the kernel left to its own cycle).
    plain_arrival(replay, i, ev) -> Pod or None is the stretch's own (quiet.py)."""
    sampler = replay.sampler
    if sampler.stride <= 1:
        return pos, False, False                 # (every step sampled: each its own)
    u = sampler.unsampled(replay.applied)
    events, popped, at, cps = _plan(replay, order, pos, times, plain_arrival,
                                    min(EVENTS_AT_ONCE, (u or sampler.stride) + 1))
    if not events:
        return pos, False, False
    # a sampled step ends a window: a departure as its last event (sampled after it), an
    # arrival as the next window's first (sampled before the kernel places it)
    first = u == 0 and events[0][1] is not None
    end = sampler.stride if first else u
    if end < len(events):
        keep = end if events[end][1] is not None else end + 1
        events, at = events[:keep], [k for k in at if k < keep]
        cps = cps[:len(at)]
    if first:
        sampler.before_arrival(events[0][0])
    sim = replay.sim
    profiles = sim.sched.profiles
    # (removals alone: any profile's kernel)
    fw = profiles[events[at[0]][2].scheduler_name] if at else next(iter(profiles.values()))
    rows = _decide(sim, fw, cps, events)
    if rows is None:
        _put_back(replay, popped, 0)
        return pos, False, False
    done = len(rows)
    cut = len(events) if done == len(at) else at[done]
    _apply(replay, events[:cut], rows.tolist())
    _put_back(replay, popped, sum(1 for e in events[:cut] if e[1] is None))
    if cut == end + 1:
        sampler.sample()                        # (after a departure)
    return pos + done, cut > 0, done < len(at)


def _plan(replay, order, pos, times, plain_arrival, most: int) -> tuple[list, list, list, list]:
    """The window's first `most` events, in order, each (time, timeline index or None, Pod or Departure,
    then: an arrival's lifetime or None; the departing pod's Placement, or None for a departure
    that is only a step); the departures popped for it; the arrivals' places in the events and
    their compiled pods."""
    sim, departures, timeline = replay.sim, replay._departures, replay.timeline
    placement, records, lifetimes = sim.sched.cache.placement, replay.recorder.records, replay.lifetimes
    heap, n = departures.times, len(order)
    horizon = math.inf if replay.until is None else replay.until     # (and the first departure made here)
    ahead = times[order[pos]] if pos < n else math.inf
    events: list = []
    popped: list = []
    at: list = []
    cps: list = []
    keys: set = set()
    gone: set = set()
    fw = None
    while len(events) < most:
        if heap and heap[0] < ahead:
            t = heap[0]
            if t > horizon:
                break
            dep = departures.pop()
            placed = _departing(sim, placement, records.get(dep.key), dep, gone)
            if placed is False:
                departures.unpop(t, dep)
                break
            popped.append((t, dep))
            if placed is not None:
                gone.add(dep.key)
            events.append((t, None, dep, placed))
            continue
        if pos >= n or ahead > horizon:
            break
        i = order[pos]
        pod = plain_arrival(replay, i, timeline[i])
        if pod is None or pod.key in keys or pod.key in gone or (fw is not None and pod.scheduler_name != first):
            break
        if fw is None:
            first, fw = pod.scheduler_name, sim.sched.profiles[pod.scheduler_name]
        if not fw.plain(pod) or not fw.node_local(pod, cp := fw.compile(pod)):
            break
        keys.add(pod.key)
        at.append(len(events))
        cps.append(cp)
        life = lifetimes.get(pod.key)
        events.append((ahead, i, pod, life))
        if life is not None and ahead + life < horizon:
            horizon = ahead + life
        pos += 1
        ahead = times[order[pos]] if pos < n else math.inf
    return events, popped, at, cps


def _departing(sim, placement, rec, dep: Departure, gone: set):
    """A departure in a window: the Placement of a bound pod leaving (its usage taken off in
    the kernel), None for a step that changes nothing (out of date, or the pod gone already),
    False where the window ends (a pending pod's delete, a pod with resource claims, one bound
    to a node the cluster no longer has)."""
    key = dep.key
    pod, bound = sim.pods.get(key), key in sim.bound
    if pod is None or key in gone or (dep.binding is not None and (rec is None or rec.bindings != dep.binding
                                                                   or not bound)):
        return None
    # (a window's arrivals are plain and node-local: no Filter of theirs reads the ports or
    # volumes a departure frees, which the cache takes off after the kernel)
    if not bound or pod.resource_claims:
        return False
    placed = placement(key)                 # (None: bound to a node the cluster no longer has)
    return False if placed is None else placed


def _decide(sim, fw, cps, events):
    """The kernel's rows for the window's first len(cps) arrivals, the departures before them
    (and after the last) taken off between them; None where the kernel cannot run them."""
    removals: list = []
    cols: list = []
    vals: list = []
    before = offset = 0
    for _, i, _, placed in events:
        if i is not None:
            before += 1
            if before > len(cps):
                break
        elif placed is not None:
            row = sim.sched.cache.table.row_of[placed.node]
            nz = placed.pod.non_zero
            removals.append((before, row, nz[0], nz[1], offset, len(placed.cols)))
            offset += len(placed.cols)
            cols.append(placed.cols)
            vals.append(placed.vals)
    usage = (np.asarray(removals, np.int64).reshape(-1, 6),
             np.concatenate(cols).astype(np.int64) if cols else np.zeros(0, np.int64),
             np.concatenate(vals).astype(np.int64) if vals else np.zeros(0, np.int64))
    counts = np.zeros((len(cps), 2), np.int64)
    out = sim.sched.cycles.schedule_batch(fw, cps, counts, None, usage)
    return None if out is None else out[0]


def _apply(replay, events, rows) -> None:
    """The events the kernel took, in order: each arrival's cycle bound at once to its row,
    each departure's delete (its usage off already). The cache and the loop take the arrivals
    together, then the departures (other pods: their orders of each are kept); the queue counts
    the arrivals' cycles before each departure, whose event reads the count. Nobody hears a
    quiet stretch's events (quiet.quiet), so each departure's event only sets the queue's move
    request cycle to that count: the last one's is sent, the others' would be overwritten."""
    sim, clock, recorder, departures = replay.sim, replay.clock, replay.recorder, replay._departures
    cache, queue, pods, outcomes, bound = sim.sched.cache, sim.queue, sim.pods, sim.outcomes, sim.bound
    nodes = cache.table.nodes
    names = [nodes[row].name for row in rows]
    arrivals = [x for _, i, x, _ in events if i is not None]
    left = [x.key for _, i, x, placed in events if i is None and placed is not None]
    cache.place_written(arrivals, names)
    cache.remove_taken_off(left)
    bound_pods_left(sim, left)
    keys = [p.key for p in arrivals]
    for key, name in zip(keys, names):
        outcomes[key] = Outcome(key, name, 1)
        bound[key] = name
    pods.update(zip(keys, arrivals))
    now, k, popped, gone = clock.now(), 0, 0, 0
    for t, i, x, detail in events:       # (a departure's Placement, an arrival's lifetime)
        if i is None:
            if popped:
                queue.attempted_at_once(popped)     # (at the last arrival's time)
                popped = 0
            if t > now:
                now = clock.advance_to(t)
            if detail is None:
                continue
            replay._changed_at = t
            gone += 1
            if gone == len(left):
                assigned_pod_deleted(sim, detail.pod, detail.node)
            recorder.departed(x.key, True)
            continue
        if t > now:
            now = clock.advance_to(t)
        key = keys[k]
        recorder.placed_at_once(key, i, names[k])
        replay._changed_at = t
        if detail is not None:      # (Replay._bound's departure)
            departures.push(t + detail, Departure(key, 1))
        k += 1
        popped += 1
    sim.cycles += k
    replay.applied += len(events)
    if popped:
        queue.attempted_at_once(popped)


def _put_back(replay, popped, applied: int) -> None:
    """The departures popped for the window after the first `applied`, back as they were."""
    for t, dep in reversed(popped[applied:]):
        replay._departures.unpop(t, dep)
