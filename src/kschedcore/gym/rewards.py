"""The environment's rewards: a callable `reward(env, pod, node) -> float`, called after a pod
was placed (`node`: the node's name), or one of the names in REWARDS.

An action on a node the pod does not fit is not rewarded by these: the environment gives
`invalid_action_reward` instead.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ValidationError
from ..objects.resources import CPU, MEMORY

Reward = Callable[[Any, Any, str], float]


def _fractions(env: Any, node: str) -> tuple[float, float]:
    """The node's requested / allocatable CPU and memory, after the placement."""
    t = env.scheduler.table
    row = t.row_of[node]
    cpu, mem = env.resource_columns[CPU], env.resource_columns[MEMORY]
    alloc, req = t.alloc[row], t.requested[row]
    return (req[cpu] / alloc[cpu] if alloc[cpu] else 1.0, req[mem] / alloc[mem] if alloc[mem] else 1.0)


def utilization(env: Any, pod: Any, node: str) -> float:
    """The chosen node's mean CPU and memory utilisation after the placement, in [0, 1]:
    placing on already busy nodes scores more (bin packing)."""
    cpu, mem = _fractions(env, node)
    return (min(cpu, 1.0) + min(mem, 1.0)) / 2


def fragmentation(env: Any, pod: Any, node: str) -> float:
    """Minus the chosen node's imbalance between free CPU and free memory after the placement,
    in [-1, 0]: capacity left free in one resource and used up in the other is stranded."""
    cpu, mem = _fractions(env, node)
    return -abs(min(cpu, 1.0) - min(mem, 1.0))


def kube_scheduler(env: Any, pod: Any, node: str) -> float:
    """1 when the pod went where kube-scheduler would have placed it, else 0 (imitation)."""
    return 1.0 if node == env.kube_scheduler_node else 0.0


REWARDS: dict[str, Reward] = {"utilization": utilization, "fragmentation": fragmentation,
                              "kube_scheduler": kube_scheduler}
"""The built-in rewards by name; "utilization" is the default."""


def resolve(reward: str | Reward) -> Reward:
    if callable(reward):
        return reward
    if reward not in REWARDS:
        raise ValidationError("environment", "reward",
                              f"must be a callable or one of {', '.join(REWARDS)}, got {reward!r}")
    return REWARDS[reward]
