"""kschedcore.gym: kube-scheduler's scheduling decisions as a Gymnasium environment.

Importing it registers ``gymnasium.make("kschedcore/Scheduling-v0", workload=...)`` and
``gymnasium.make_vec`` of it, an in-process batch (SchedulingVectorEnv) (docs/gym.md). Needs
the ``gym`` extra: ``pip install 'kschedcore[gym]'``.
"""
try:
    import gymnasium
except ImportError as e:        # an optional extra
    raise ImportError("kschedcore.gym needs gymnasium: pip install 'kschedcore[gym]'") from e

from .env import MODES, SchedulingEnv
from .rewards import REWARDS
from .vector import SchedulingVectorEnv

ENV_ID = "kschedcore/Scheduling-v0"
"""The id gymnasium.make knows the environment by."""

if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point="kschedcore.gym.env:SchedulingEnv",
                       vector_entry_point="kschedcore.gym.vector:SchedulingVectorEnv")

__all__ = ["SchedulingEnv", "SchedulingVectorEnv", "ENV_ID", "MODES", "REWARDS"]
