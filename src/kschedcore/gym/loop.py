"""One episode of kube-scheduler's loop as a sequence of decisions: the Simulation
(scheduler/loop.py: queue, cycles, PostFilter and preemption, binding, cluster events) on the
virtual clock, driven by a Replay of the workload's timeline (pods arriving and departing).

The loop runs in a greenlet of its own and stops inside each cycle that found a feasible node:
the Scheduler's `attempt` (the cycle the Simulation calls) switches to the agent's side with
the decision and resumes with the agent's node. A switch costs well under a microsecond where
a hand-over between two threads costs tens (both on the thread that reset the episode).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import UnsupportedError
from ..replay import Replay
from ..scheduler import ScheduleResult
from .episode import Decision, decision

if TYPE_CHECKING:
    from ..replay import ParsedTimeline
    from ..scheduler import Scheduler
    from .nodes import NodeIndex

INVALID_ACTION_MESSAGE = "the node chosen for the pod does not pass its Filter plugins"
"""A cycle's error when the action names a node the pod does not fit: the loop requeues the pod."""


class Stopped(BaseException):
    """Unwinds the loop's greenlet at reset (a BaseException: no `except Exception` stops it)."""


class Replays:
    """Loop mode's episodes: the timeline replayed on the Scheduler (in the episode's fork),
    parsed once, by the first. Refers to no environment: the loop's greenlet holds this, and an
    environment it held could not be collected while the greenlet waits."""

    def __init__(self, sched: Scheduler, timeline: list, arrival: str) -> None:
        self.sched, self.timeline, self.arrival = sched, timeline, arrival
        self.parsed: ParsedTimeline | None = None

    def __call__(self) -> Replay:
        # (samples: the replay's utilisation series, which no episode shows: one, not 500;
        # runs off: every cycle is the agent's decision)
        replay = Replay(self.sched, [], self.timeline, arrival=self.arrival, samples=1, parsed=self.parsed, runs=False)
        if self.parsed is None:
            self.parsed = replay.parsed_timeline()
        return replay


class LoopEpisode:
    """Runs `make_replay()` in a greenlet, pausing at each decision."""

    def __init__(self, sched: Scheduler, make_replay: Callable[[], Replay], nodes: NodeIndex) -> None:
        try:
            import greenlet
        except ImportError:     # (in the gym extra)
            raise UnsupportedError("environment", "mode", 'mode="loop" needs greenlet: '
                                   "pip install 'kschedcore[gym]'") from None
        self.sched, self.nodes = sched, nodes
        self.cycle = sched.attempt
        self.replay: Replay | None = None
        sched.attempt = self.attempt
        self.agent = greenlet.getcurrent()
        self.loop = greenlet.greenlet(self.run, parent=self.agent)
        self.decision: Decision | None = self._resume(make_replay)
        self.next: Decision | None = None

    # ---- the loop's greenlet --------------------------------------------------------------------
    def run(self, make_replay: Callable[[], Replay]) -> None:
        """The episode's replay; its end switches None to the agent (an error: raised there)."""
        try:
            self.replay = make_replay()
            self.replay.run(freeze_gc=False)   # frozen turn by turn (the environment's): it may never be resumed
        except Stopped:         # reset or close unwound it
            pass

    def attempt(self, pod: Any, nominator: Any = None, counted: Any = None, keep: bool = True) -> ScheduleResult:
        """The Simulation's cycle (ScheduleOne.attempt): a feasible node found is the agent's decision."""
        result = self.cycle(pod, nominator, counted, keep)
        if result.node is None or result.cycle is None:
            return result
        d = decision(self.nodes, pod, result)
        index = self.agent.switch(d)
        if d.mask[index]:
            result.node = self.nodes.names[index]
            return result
        return ScheduleResult(pod.key, None, 0, result.evaluated_nodes, error=INVALID_ACTION_MESSAGE)

    # ---- the agent's side -----------------------------------------------------------------------
    def _resume(self, value: Any) -> Decision | None:
        """Runs the loop to its next decision, or None at the episode's end, when the Scheduler
        gets its own cycle back (also when the loop raised: the error is raised here)."""
        try:
            got = self.loop.switch(value)
        except BaseException:
            self.sched.attempt = self.cycle
            raise
        if got is None:
            self.sched.attempt = self.cycle
        return got

    def place(self, index: int) -> str | None:
        """The decision's pod goes to node `index` if the cycle found it feasible (its node
        name), else its cycle fails (None) and the loop requeues it. The loop runs to the next
        decision."""
        d = self.decision
        assert d is not None
        node = self.nodes.names[index] if d.mask[index] else None
        self.next = self._resume(index)
        return node

    def step(self) -> None:
        self.decision, self.next = self.next, None

    @property
    def time(self) -> float:
        """The loop's virtual clock, in seconds (replay time)."""
        return self.replay.clock.now() if self.replay is not None else 0.0

    @property
    def placements(self) -> dict[str, str | None]:
        """Every pod the replay recorded: the node it was last bound to, or None."""
        if self.replay is None:
            return {}
        return {key: rec.node for key, rec in self.replay.recorder.records.items()}

    def stop(self) -> None:
        """Unwinds the loop's greenlet (waiting for an action) and gives the Scheduler its cycle back."""
        if not self.loop.dead:
            self.loop.throw(Stopped)
        self.sched.attempt = self.cycle
