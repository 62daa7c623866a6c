"""One episode of kube-scheduler's loop as a sequence of decisions: the Simulation
(scheduler/loop.py: queue, cycles, PostFilter and preemption, binding, cluster events) on the
virtual clock, driven by a Replay of the workload's timeline (pods arriving and departing).

The loop runs on a thread of its own and stops inside each cycle that found a feasible node:
the Scheduler's `attempt` (the cycle the Simulation calls) hands the decision over and waits
for the agent's node. Only one of the two threads runs at a time.
"""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..scheduler import ScheduleResult
from .episode import Decision, decision

if TYPE_CHECKING:
    from ..replay import Replay
    from ..scheduler import Scheduler
    from .nodes import NodeIndex

INVALID_ACTION_MESSAGE = "the node chosen for the pod does not pass its Filter plugins"
"""A cycle's error when the action names a node the pod does not fit: the loop requeues the pod."""


class Stopped(BaseException):
    """Unwinds the loop's thread at reset (a BaseException: no `except Exception` stops it)."""


class LoopEpisode:
    """Runs `make_replay()` on a thread, pausing at each decision."""

    def __init__(self, sched: Scheduler, make_replay: Callable[[], Replay], nodes: NodeIndex) -> None:
        self.sched, self.nodes = sched, nodes
        self.cycle = sched.attempt
        self.to_agent: queue.SimpleQueue = queue.SimpleQueue()
        self.to_loop: queue.SimpleQueue = queue.SimpleQueue()
        self.replay: Replay | None = None
        sched.attempt = self.attempt
        self.thread = threading.Thread(target=self.run, args=(make_replay,), name="kschedcore-gym-loop", daemon=True)
        self.thread.start()
        self.decision: Decision | None = self.receive()
        self.next: Decision | None = None

    # ---- the loop's thread ----------------------------------------------------------------------
    def run(self, make_replay: Callable[[], Replay]) -> None:
        try:
            self.replay = make_replay()
            self.replay.run()
        except Stopped:
            return
        except BaseException as e:      # handed to the agent's thread, raised there
            self.to_agent.put(e)
            return
        self.to_agent.put(None)

    def attempt(self, pod: Any, nominator: Any = None, counted: Any = None) -> ScheduleResult:
        """The Simulation's cycle (ScheduleOne.attempt): a feasible node found is the agent's decision."""
        result = self.cycle(pod, nominator, counted)
        if result.node is None or result.cycle is None:
            return result
        d = decision(self.nodes, pod, result)
        self.to_agent.put(d)
        index = self.to_loop.get()
        if index is None:
            raise Stopped
        if d.mask[index]:
            result.node = self.nodes.names[index]
            return result
        return ScheduleResult(pod.key, None, 0, result.evaluated_nodes, error=INVALID_ACTION_MESSAGE)

    # ---- the agent's thread ---------------------------------------------------------------------
    def receive(self) -> Decision | None:
        got = self.to_agent.get()
        if isinstance(got, BaseException):
            self.thread.join()
            self.sched.attempt = self.cycle
            raise got
        return got

    def place(self, index: int) -> str | None:
        """The decision's pod goes to node `index` if the cycle found it feasible (its node
        name), else its cycle fails (None) and the loop requeues it. The loop runs to the next
        decision."""
        d = self.decision
        assert d is not None
        node = self.nodes.names[index] if d.mask[index] else None
        self.to_loop.put(index)
        self.next = self.receive()
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
        """Unwinds the loop's thread (waiting for an action) and gives the Scheduler its cycle back."""
        if self.thread.is_alive():
            self.to_loop.put(None)
            self.thread.join()
        self.sched.attempt = self.cycle
