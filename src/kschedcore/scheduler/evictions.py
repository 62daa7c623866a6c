"""Preemption's victims leaving, after the loop nominated their preemptor (v1.34's asynchronous
preemption, prepareCandidateAsync): all but the last victim deleted at once while
DefaultPreemption's PreEnqueue holds the preemptor, the last one a cycle later.

A victim is deleted here at once (client-go's fake clientset, as the parity data), or, where
the Simulation has a `victim_deleter` (live mode), by whoever deletes it in the API server; the
cache then keeps the victim -- terminating -- until its informer's delete arrives."""
from __future__ import annotations

__all__ = ["evict", "land"]


def evict(sim) -> None:
    """Once the preemptor is back in the queue: all victims but the last are deleted "in
    parallel" while DefaultPreemption's PreEnqueue holds the preemptor (the last of them lands
    as the hold is lifted); the last victim, after a further status patch and delete, only once
    the loop has run a cycle (or had none to run) -- so a preemptor requeued by the earlier
    deletions may try again before it (a two-victim preemption can cost one more failed
    attempt, as kube-scheduler's does)."""
    jobs, sim._preempted = sim._preempted, []
    for key, victims in jobs:
        going = sim.evicting
        victims = [v for v in victims if v not in going]
        if not victims:       # an earlier preemption is deleting them: found gone, the pod is
            sim._activations.append((sim.cycles, key))      # activated (held until then)
            continue
        for v in victims[:-2]:
            _delete(sim, v)
        sim.sched.handle.preempting.discard(key)
        if len(victims) >= 2:
            _delete(sim, victims[-2])
        sim._last_victims.append((sim.cycles, victims[-1]))


def land(sim, cycle) -> None:
    """What the preemptions chosen before `cycle` still had to do: activate preemptors whose
    victims were all gone already, delete the last victims."""
    due, sim._activations = _split_due(sim._activations, cycle)
    for key in due:
        sim.sched.handle.preempting.discard(key)
        if key in sim.pods:
            sim.queue.activate([sim.pods[key]])
    due, sim._last_victims = _split_due(sim._last_victims, cycle)
    for key in due:
        _delete(sim, key)


def _delete(sim, key: str) -> None:
    if sim.victim_deleter is not None:
        sim.victim_deleter(key)
    else:
        sim.delete_pod(key, missing_ok=True)     # a key it no longer knows (deleted already): a no-op


def _split_due(items, cycle):
    """(the keys of the (cycle, key) items chosen before `cycle`, the other items)."""
    return [k for c, k in items if c < cycle], [(c, k) for c, k in items if c >= cycle]
