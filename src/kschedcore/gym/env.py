"""SchedulingEnv: kube-scheduler's scheduling decisions as a Gymnasium environment.

Each step places the pod kube-scheduler is deciding now on the node the action names (an index
in the workload's node order). The Scheduler is built once; every episode runs in a fork of it
(`Scheduler.fork`), so `reset()` reverts what the last episode changed instead of reloading.
Batch mode walks the pending pods (episode.py), loop mode runs kube-scheduler's loop over the
workload's timeline (loop.py).
"""
from __future__ import annotations

import inspect
from os import PathLike
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from ..errors import StateError, UnsupportedError, ValidationError
from ..framework.config import SchedulerConfig, load_config
from ..objects.pod import Pod
from ..replay import (ARRIVALS, Replay, WatchEvent, default_arrival, read_inputs,
                      workload_events)
from ..scheduler import Scheduler
from ..sources.files import Workload, load_workload, workload_from_documents
from ..util.collector import Frozen
from .episode import BatchEpisode
from .loop import LoopEpisode, Replays
from .nodes import NodeIndex
from .observations import Observer, observation_space
from .rewards import Reward, resolve

MODES = ("batch", "loop")
"""The environment's modes: the pending pods once each in order, or kube-scheduler's loop."""


def _workload(workload: Any) -> Workload:
    if isinstance(workload, Workload):
        return workload
    if isinstance(workload, (str, PathLike)):
        return load_workload(workload)
    if isinstance(workload, dict):
        return workload_from_documents([workload])
    raise ValidationError("environment", "workload", "must be a file path, a list of paths (loop mode), a Workload "
                          f"or a workload document, got {type(workload).__name__}")


def _events(workload: Any) -> tuple[list[WatchEvent], list[WatchEvent]]:
    """Loop mode's input: (the cluster's events, the timeline), as `kschedcore replay` reads them.
    The timeline may add, change and delete pods and nodes; other objects go in the cluster
    (they cannot change inside the episode's fork)."""
    if isinstance(workload, (list, tuple)) or isinstance(workload, (str, PathLike)):
        paths = [workload] if isinstance(workload, (str, PathLike)) else list(workload)
        cluster, timeline = read_inputs(paths)
    else:
        cluster, timeline = workload_events(_workload(workload))
    for ev in timeline:
        if ev.kind not in ("Pod", "Node"):
            raise UnsupportedError(ev.where, "kind", f"loop mode replays pods and nodes over time, not {ev.kind} "
                                   "objects: give them with the cluster")
    return cluster, timeline


def _config(config: Any) -> SchedulerConfig | None:
    if config is None or isinstance(config, SchedulerConfig):
        return config
    if isinstance(config, (str, PathLike)):
        return load_config(config)
    raise ValidationError("environment", "config",
                          f"must be a SchedulerConfig or a file path, got {type(config).__name__}")


#: the keyword arguments an environment passes on to its Scheduler (the rest are its own)
SCHEDULER_OPTIONS = frozenset(inspect.signature(Scheduler).parameters) - {
    "nodes", "pods", "config", "percentage_of_nodes_to_score", "tie_break", "seed"}


class SchedulingEnv(gymnasium.Env):
    """kube-scheduler's decisions, one per step: the agent places the pod kube-scheduler is
    deciding now (docs/gym.md).

    workload: a workload file's path, a Workload, or a workload document (dict); in loop mode
        also a list of paths (workload files, watch-event streams), as `kschedcore replay` reads them.
    config: a SchedulerConfig or a KubeSchedulerConfiguration file; default: the default profile.
    percentage_of_nodes_to_score: 100 (default: the action mask covers every node), 0 for
        kube-scheduler's adaptive number, None for the configuration's.
    tie_break: "random" (seeded by reset's seed) or "first" (the first node in node order).
    mode: "batch" (the pending pods once each, in order, each assumed before the next) or
        "loop" (kube-scheduler's queue, preemption and binding over the workload's timeline).
    reward: a callable reward(env, pod, node) or a name in kschedcore.gym.REWARDS.
    invalid_action_reward: the reward of an action on a node the pod does not fit (the pod is
        then recorded unschedulable; in loop mode its cycle fails and the loop requeues it).
    views: node arrays of the observation are read-only views of the node table, changed in
        place by later steps (faster; copy what you keep) instead of copies.
    arrival: loop mode's arrivals, one of kschedcore.replay.ARRIVALS (default: timestamps when
        every event has a time, else settle).
    Other keyword arguments go to the Scheduler (plugin_args, weights, plugins).
    """

    metadata = {"render_modes": []}

    def __init__(self, workload: Any, config: Any = None, percentage_of_nodes_to_score: int | None = 100,
                 tie_break: str = "random", mode: str = "batch", reward: str | Reward = "utilization",
                 invalid_action_reward: float = -1.0, views: bool = False, arrival: str | None = None,
                 **scheduler_options: Any) -> None:
        if mode not in MODES:
            raise ValidationError("environment", "mode", f'must be "batch" or "loop", got {mode!r}')
        if arrival is not None and (mode != "loop" or arrival not in ARRIVALS):
            raise ValidationError("environment", "arrival", f"must be one of {', '.join(ARRIVALS)} in loop mode, "
                                  f"got {arrival!r}" + ("" if mode == "loop" else " in batch mode"))
        if "seed" in scheduler_options:
            raise ValidationError("environment", "seed", "the random tie-break is seeded by reset(seed=...)")
        unknown = sorted(set(scheduler_options) - SCHEDULER_OPTIONS)
        if unknown:
            raise ValidationError("environment", unknown[0], "no such option (the Scheduler's: "
                                  + ", ".join(sorted(SCHEDULER_OPTIONS)) + ")")
        if not isinstance(invalid_action_reward, (int, float, np.number)):
            raise ValidationError("environment", "invalid_action_reward",
                                  f"must be a number, got {invalid_action_reward!r}")
        self.mode = mode
        self.reward_fn = resolve(reward)
        self.invalid_action_reward = float(invalid_action_reward)
        options = dict(config=_config(config), percentage_of_nodes_to_score=percentage_of_nodes_to_score,
                       tie_break=tie_break, **scheduler_options)
        # pods are compiled before the first fork: the resources, labels and values they name get
        # their table columns and ids for good (a fork's revert cuts back what it interned)
        if mode == "batch":
            self.scheduler = sched = Scheduler.from_workload(_workload(workload), **options)
            for pod in sched.pending:
                sched.prepare(pod)
        else:
            cluster, self.timeline = _events(workload)
            self.scheduler = sched = Scheduler(**options)
            Replay(sched, cluster, [])      # applies the cluster's events (its loop is not run)
            self.arrival = arrival or default_arrival(self.timeline)
            self._replays = Replays(sched, self.timeline, self.arrival)
            for obj in self._replays().parsed.values():     # the timeline's pods, read and compiled
                if isinstance(obj, Pod):
                    sched.prepare(obj)
        if sched.cycles.extenders:
            raise UnsupportedError("environment", "config", "scheduler extenders are not supported")
        #: the node axis: the workload's nodes in order (loop mode: then those its timeline adds)
        self.node_names: list[str] = sched.node_names
        if mode == "loop":
            for ev in self.timeline:
                if ev.kind == "Node" and ev.type == "ADDED" and ev.key not in self.node_names:
                    self.node_names.append(ev.key)
        t = sched.table
        self.nodes = NodeIndex(t, self.node_names)
        n, k = len(self.node_names), len(t.resources)
        #: the resource names of the observation's resource axis, by column
        self.resource_names: list[str] = list(t.resources.items)
        self.resource_columns = {name: i for i, name in enumerate(self.resource_names)}
        self.action_space = spaces.Discrete(n)
        self.observation_space = observation_space(n, k)
        self.observer = Observer(t, self.nodes, k, views)
        self.fork: Any = None
        self.episode: BatchEpisode | LoopEpisode | None = None
        self._turns = Frozen(False)       # (begin makes each episode's)
        #: the node kube-scheduler chose for the decision being stepped (the rewards read it)
        self.kube_scheduler_node: str | None = None

    # ---- the Gymnasium API ----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        info = self.begin(seed=seed)
        return self._observe(), info

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        reward, terminated, info = self.decide(action)
        return self._observe(), reward, terminated, False, info

    def begin(self, *, seed: int | None = None) -> dict:
        """reset() without the observation: a new episode, and the info of its first decision
        (a vector environment writes the observations itself: write_observation)."""
        super().reset(seed=seed)
        sched = self.scheduler
        self._end_episode()
        self.fork = sched.fork(save_table=True)
        # ties among equal best totals: the Scheduler's generators, seeded from the episode's
        draw = self.np_random.integers(0, 2**63, size=len(sched.profiles) + 1)
        for fw, d in zip(sched.profiles.values(), draw.tolist()):
            fw.kernel.seed(d)
        sched.cycles.rng.seed(int(draw[-1]))
        self.observer.refresh()
        # the scheduler's turns with the objects alive frozen out of the collector's sight (a
        # full pass over a 5,000-node Scheduler costs 100+ ms); whether the process froze
        # objects itself asked once an episode, on the first entry
        self._turns = Frozen()
        with self._turns:
            if self.mode == "batch":
                self.episode = BatchEpisode(sched, self.nodes)
            else:
                self.episode = LoopEpisode(sched, self._replays, self.nodes)
        return self._info()

    def decide(self, action: Any) -> tuple[float, bool, dict]:
        """step() without the observation: the reward, whether the episode is over, the info."""
        ep = self.episode
        if ep is None:
            raise StateError("environment", "", "call reset() before step()")
        d = ep.decision
        if d is None:
            raise StateError("environment", "", "the episode is over: call reset()")
        index = self._index(action)
        self.kube_scheduler_node = self.node_names[d.kube_action]
        with self._turns:
            node = ep.place(index)
        reward = self.invalid_action_reward if node is None else float(self.reward_fn(self, d.pod, node))
        ep.step()
        return reward, ep.decision is None, self._info()

    def write_observation(self) -> None:
        """The observation, written into the arrays the observer was given (Observer.into)."""
        d = self.episode.decision if self.episode is not None else None
        self.observer.write(d.pod if d is not None else None)

    def close(self) -> None:
        self._end_episode()

    def __del__(self) -> None:
        # a loop-mode episode waits in a greenlet that holds the Scheduler and the replay, a
        # cycle the collector cannot free while the greenlet is suspended: unwound here when
        # the environment is dropped without close() (nothing in the greenlet refers to it)
        if getattr(self, "episode", None) is not None:
            try:
                self._end_episode()
            except Exception:   # noqa: BLE001 -- at interpreter exit, or dropped on another thread
                pass

    def _end_episode(self) -> None:
        if self.episode is not None:
            self.episode.stop()
        if self.fork is not None:
            self.fork.revert()
        self.fork = self.episode = None

    # ---- helpers --------------------------------------------------------------------------------
    def _index(self, action: Any) -> int:
        try:
            index = int(action)
        except (TypeError, ValueError):
            raise ValidationError("environment", "action", f"must be a node index, got {action!r}") from None
        if index != action or not 0 <= index < len(self.node_names):
            raise ValidationError("environment", "action",
                                  f"must be a node index in 0..{len(self.node_names) - 1}, got {action!r}")
        return index

    def _observe(self) -> dict:
        d = self.episode.decision if self.episode is not None else None
        return self.observer.observe(d.pod if d is not None else None)

    def _info(self) -> dict:
        """What the next decision is; after the last, the episode's placements."""
        ep = self.episode
        assert ep is not None
        d = ep.decision
        if d is None:
            info = {"action_mask": np.zeros(len(self.node_names), np.int8), "kube_scheduler_action": -1,
                    "pod": None, "placements": dict(ep.placements)}
        else:
            info = {"action_mask": d.mask, "kube_scheduler_action": d.kube_action, "pod": d.pod.key}
        if isinstance(ep, LoopEpisode):
            info["time"] = ep.time
        return info
