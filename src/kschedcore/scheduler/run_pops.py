"""The pops of the loop's runs (runs.py, claim_runs.py): a pod the kernel decided in a run,
popped and counted as its own cycle would have been."""
from ..errors import StateError


def pop_decided(sim, want, part: str):
    """Pops `want`, which must be at the head of `part` (activeQ, backoffQ), and counts its
    attempt (the loop's cycles, its Outcome, the listener); returns its Outcome."""
    if sim.queue.pop() is not want:
        raise StateError(f"pod {want.key}", "", f"not at {part}'s head (a run of pops changed)")
    sim.cycles += 1
    outcome = sim.outcomes[want.key]
    outcome.attempts = want.attempts
    sim.listener.attempted(want.key)
    return outcome
