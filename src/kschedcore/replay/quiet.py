"""A timed replay's quiet stretches: while the loop is idle between events -- nothing queued,
binding, nominated or landing, as in a cluster that has room for what arrives -- each arriving
pod is added, popped, scheduled, assumed and bound at once, and each departing pod leaves, with
nothing else to hear either: what the loop's own calls would do (queue Add, Pop, cycle,
binding, Done, the binding's and the departure's events heard by nobody), without the calls
that find nothing to do. The stretch ends before the first event it cannot take so (another
kind of event, a pod it does not know to be plain, `until`) and after a pod that fits nowhere,
whose failure goes the loop's own way; the replay's loop takes it from there. A step that
samples stays in the stretch: sampled as the loop's way samples it, after its event and before
an arrival's cycle.

Where the stretch's next events are node-local arrivals and departures, the kernel decides
them together (windows.py); otherwise one event at a time, each arrival's own cycle.

Exact where the loop would leave nothing behind between two events, which `Simulation.idle`
and the checks below keep true at every event (tests/test_replay.py: records with and without
quiet stretches on churning streams).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..scheduler.loop import Outcome
from . import windows
from .departures import Departure

if TYPE_CHECKING:
    from .engine import Replay

#: PreEnqueue plugins a plain pod passes (no scheduling gates, no resource claims, no
#: preemption of its own landing): the in-tree ones
PLAIN_PRE_ENQUEUE = frozenset({"SchedulingGates", "DynamicResources", "DefaultPreemption"})


#: a stretch returns after about this many steps (its caller tells the progress between)
STEPS_AT_ONCE = 1000


def may_run(replay: Replay) -> bool:
    """Whether stretches can be taken in this replay at all: each cycle's binding ends as the
    pod is assumed, no fork, only the in-tree PreEnqueue plugins."""
    sim = replay.sim
    sched = sim.sched
    return (sim.binds_at_once() and not sched.cache.forked
            and all(pl.name in PLAIN_PRE_ENQUEUE and type(pl).__module__.startswith("kschedcore.plugins.")
                    for fw in sched.profiles.values() for pl in fw.pre_enqueue))


def quiet(sim) -> bool:
    """The loop would do nothing until the next event, and no event would be heard: idle, no
    pod nominated, in flight or waiting for one, no claim change to tell."""
    return (sim.idle() and not sim.nominator.count and not sim.queue.hears_events() and not sim._written_nnn
            and not sim.sched.cache.dra.log)


def run(replay: Replay, order: list, pos: int, times: list) -> int:
    """Events from timeline position order[pos] on (and the departures due meanwhile) while
    the loop stays quiet, in windows the kernel decides at once where it can (windows.py), for
    about STEPS_AT_ONCE steps at most; returns the position of the first timeline event not
    applied. A sampled step is sampled here as the loop's way would: the event applied, an
    arrival not yet cycled."""
    sim, clock, timeline = replay.sim, replay.clock, replay.timeline
    departures, until = replay._departures, replay.until
    heap = departures.times
    cycles = sim.sched.cycles
    batch = cycles.batch_copies and not cycles.extenders
    n, one, stop = len(order), False, replay.applied + STEPS_AT_ONCE
    while quiet(sim) and replay.applied < stop:
        if batch and not one:
            pos, took, one = windows.take(replay, order, pos, times, _plain_arrival)
            if took:
                continue
        one = False
        sampled = replay.sampler.unsampled(replay.applied) == 0     # (after the event, before a cycle)
        if pos < n and not (heap and heap[0] < times[order[pos]]):     # (at equal times the timeline's first)
            t, from_heap = times[order[pos]], False
        elif heap:
            t, from_heap = heap[0], True
        else:
            break
        if until is not None and t > until:
            break
        if from_heap:
            if not _departs(replay, departures.peek(), t):
                break
            departures.pop()
            if sampled:
                replay.sampler.sample()
            continue
        i = order[pos]
        pod = _plain_arrival(replay, i, timeline[i])
        if pod is None:
            break
        pos += 1
        if t > clock.now():
            clock.advance_to(t)
        outcome = arrived(replay, i, pod, t)
        if sampled:
            replay.sampler.sample()
        _cycle(sim, pod, outcome)
    return pos


def arrived(replay: Replay, i: int, pod, t: float) -> Outcome:
    """A plain pod's arrival at `t` (the clock there): its record and the loop's pod; its Outcome."""
    rec, sim = replay.recorder, replay.sim
    rec.event = i
    replay._changed_at = t
    rec.arrived(pod.key, i)
    sim.pods[pod.key] = pod
    outcome = sim.outcomes[pod.key] = Outcome(pod.key, None, 1)
    replay.applied += 1
    return outcome


def _departs(replay, dep: Departure, t) -> bool:
    """The departure at the heap's head taken (True), or left to the loop: a pod that is not
    bound (pending or gone: the loop's delete). A departure that is out of date is a step."""
    sim, rec = replay.sim, replay.recorder.records.get(dep.key)
    key = dep.key
    stale = dep.binding is not None and (rec is None or rec.bindings != dep.binding or key not in sim.bound)
    if not stale and key in sim.pods and (key not in sim.bound or sim.pods[key].resource_claims):
        return False
    if t > replay.clock.now():
        replay.clock.advance_to(t)
    replay.applied += 1
    if stale or key not in sim.pods:
        return True
    replay._changed_at = t
    sim.delete_pod(key)
    replay.recorder.departed(key, True)
    return True


def _plain_arrival(replay, i: int, ev):
    """The timeline's event i as a new pending pod the stretch can take, or None."""
    if ev.kind != "Pod" or ev.type == "DELETED" or i in replay.deletions:
        return None
    pod = replay.parsed[i]
    key = pod.key
    sim = replay.sim
    if (not pod.checked or key in sim.pods or key in replay.recorder.records or pod.terminal or pod.node_name or pod.gated
            or pod.terminating or pod.resource_claims or pod.nominated_node_name
            or key in sim.sched.handle.preempting or pod.scheduler_name not in sim.sched.profiles):
        return None
    return pod


def _cycle(sim, pod, outcome) -> None:
    """Add, Pop, the cycle, then assume and bind at once (Simulation.process); a failure goes
    back into the queue as the pod popped, the loop's own way."""
    sched, queue = sim.sched, sim.queue
    sim.cycles += 1
    result = sched.attempt(pod, None, sim.usage.counted, keep=False)
    sim.listener.attempted(pod.key)
    if result.node is None:
        pinfo = queue.add_and_pop(pod)      # (the attempt reads nothing of the queue)
        sim.after_failure(pod, outcome, result, pinfo)
        sim.land_preemptions()
        return
    queue.attempted_at_once()
    sched.assume_scheduled(pod, result)
    outcome.message = None
    key, node = pod.key, result.node
    sim.bound[key] = outcome.node = node
    outcome.result = None
    sim.listener.bound(key, node)
