"""SchedulingVectorEnv: a batch of SchedulingEnvs stepped in this process.

`gymnasium.make_vec("kschedcore/Scheduling-v0", num_envs=N, workload=...)` makes one (its
vector entry point); `workloads=[...]` gives each sub-environment a cluster of its own. Each
sub-environment's observer mirrors its node table into its rows of the batch's arrays and
brings them up to date from the rows its table logged as changed, where SyncVectorEnv copies
each sub-environment's whole table twice a step (the observation, then into the batch).
Autoreset as gymnasium's vector environments' default (next step): the step after a
sub-environment's episode ended begins its next one, its action ignored.
"""
from __future__ import annotations

import numbers

from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space, create_empty_array

from ..errors import ValidationError
from .env import SchedulingEnv

try:                    # gymnasium >= 1.1 names the autoreset mode
    from gymnasium.vector import AutoresetMode
    _METADATA: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP}
except ImportError:     # (1.0: next step, the only mode)
    _METADATA = {}


def _seeds(seed: int | list | None, n: int) -> list:
    if seed is None:
        return [None] * n
    if isinstance(seed, int):
        return [seed + i for i in range(n)]
    if len(seed) != n:
        raise ValidationError("vector environment", "seed", f"a list of {n} seeds (one per sub-environment), "
                              f"got {len(seed)}")
    return list(seed)


class SchedulingVectorEnv(VectorEnv):
    """`num_envs` SchedulingEnvs of `workload`, or one per entry of `workloads` (clusters of
    the same number of nodes and resource columns: the batch's arrays have one shape). Other
    keywords go to every SchedulingEnv (mode, config, reward, ...). copy: step() and reset()
    return copies of the batch's arrays (False: the arrays themselves, changed in place by
    the next call)."""

    metadata = _METADATA

    def __init__(self, workload: Any = None, num_envs: int | None = None, *, workloads: list | None = None,
                 copy: bool = True, **env_options: Any) -> None:
        if "views" in env_options:
            raise ValidationError("vector environment", "views", "the batch's arrays are the observations: "
                                  "use copy=False for them without copies")
        if num_envs is not None and (not isinstance(num_envs, numbers.Integral) or isinstance(num_envs, bool)
                                     or num_envs < 1):
            raise ValidationError("vector environment", "num_envs", f"must be a positive integer, got {num_envs!r}")
        num_envs = None if num_envs is None else int(num_envs)      # (a NumPy integer too, as Scheduler's)
        if workloads is None:
            if workload is None:
                raise ValidationError("vector environment", "workload", "give a workload (and num_envs), or workloads")
            workloads = [workload] * (num_envs or 1)
        elif workload is not None:
            raise ValidationError("vector environment", "workloads", "give workload or workloads, not both")
        elif not isinstance(workloads, (list, tuple)) or not workloads:
            raise ValidationError("vector environment", "workloads", "must be a non-empty list of workloads, one per "
                                  f"sub-environment, got {workloads!r}"[:200])
        elif num_envs is not None and num_envs != len(workloads):
            raise ValidationError("vector environment", "num_envs",
                                  f"{num_envs} for {len(workloads)} workloads (one sub-environment per workload)")
        self.envs = [SchedulingEnv(w, **env_options) for w in workloads]
        first = self.envs[0]
        for i, env in enumerate(self.envs):
            if env.observation_space != first.observation_space:
                raise ValidationError("vector environment", f"workloads[{i}]",
                                      f"{len(env.node_names)} nodes and {len(env.resource_names)} resource columns, "
                                      f"the first {len(first.node_names)} and {len(first.resource_names)}: "
                                      "the batch's arrays need one shape")
        self.num_envs = n = len(self.envs)
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.copy = copy
        self._observations: dict[str, np.ndarray] = dict(create_empty_array(self.single_observation_space, n,
                                                                            fn=np.zeros))   # type: ignore[arg-type]
        for i, env in enumerate(self.envs):
            env.observer.into({key: a[i] for key, a in self._observations.items()})
        self._rewards = np.zeros(n, np.float64)
        self._terminations = np.zeros(n, np.bool_)
        self._truncations = np.zeros(n, np.bool_)       # (episodes end, never cut short)
        self._autoreset = np.zeros(n, np.bool_)

    def reset(self, *, seed: int | list | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """Every sub-environment begins an episode (seed: an int for seed, seed + 1, ..., a
        list of one per sub-environment, or None); options {"reset_mask": bool array}: only
        those where it is True (gymnasium's partial reset), the others left as they are."""
        mask = self._reset_mask(options)
        infos: dict = {}
        for i, (env, s) in enumerate(zip(self.envs, _seeds(seed, self.num_envs))):
            if mask is None or mask[i]:
                infos = self._add_info(infos, env.begin(seed=s), i)
                env.write_observation()
                self._terminations[i] = self._autoreset[i] = False
        return self._batch(), infos

    def _reset_mask(self, options: dict | None) -> np.ndarray | None:
        unknown = sorted(set(options or ()) - {"reset_mask"})
        if unknown:
            raise ValidationError("vector environment", "options", f"unknown {unknown} (known: reset_mask)")
        mask = (options or {}).get("reset_mask")
        if mask is None:
            return None
        mask = np.asarray(mask)
        if mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
            raise ValidationError("vector environment", "options.reset_mask",
                                  f"must be {self.num_envs} booleans, got {mask.dtype} of shape {mask.shape}")
        return mask

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        actions = self._checked(actions)
        infos: dict = {}
        for i, env in enumerate(self.envs):
            if self._autoreset[i]:          # the episode ended at the last step: the next begins
                info = env.begin()
                self._rewards[i], self._terminations[i] = 0.0, False
            else:
                self._rewards[i], self._terminations[i], info = env.decide(actions[i])
            env.write_observation()
            infos = self._add_info(infos, info, i)
        self._autoreset[:] = self._terminations
        return (self._batch(), self._rewards.copy(), self._terminations.copy(), self._truncations.copy(), infos)

    def _checked(self, actions: Any) -> np.ndarray:
        """The actions, each a node index where a sub-environment decides -- all checked before
        any sub-environment steps, so a bad one changes none."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValidationError("vector environment", "actions",
                                  f"must be {self.num_envs} node indices, got shape {actions.shape}")
        try:
            index = actions.astype(np.int64)
        except (TypeError, ValueError):
            raise ValidationError("vector environment", "actions", f"must be node indices, got {actions!r}") from None
        n = self.single_action_space.n      # type: ignore[attr-defined]
        bad = ~self._autoreset & ((index != actions) | (index < 0) | (index >= n))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValidationError("vector environment", f"actions[{i}]",
                                  f"must be a node index in 0..{n - 1}, got {actions[i]!r}")
        return index

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()

    def _batch(self) -> dict:
        obs = self._observations
        return {key: a.copy() for key, a in obs.items()} if self.copy else obs
