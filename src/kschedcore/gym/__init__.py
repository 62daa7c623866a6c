"""kschedcore.gym: kube-scheduler's scheduling decisions as a Gymnasium environment.

Importing it registers ``gymnasium.make("kschedcore/Scheduling-v0", workload=...)``
(docs/gym.md). Needs the ``gym`` extra: ``pip install 'kschedcore[gym]'``.
"""
try:
    import gymnasium
except ImportError as e:        # an optional extra
    raise ImportError("kschedcore.gym needs gymnasium: pip install 'kschedcore[gym]'") from e

from .env import MODES, SchedulingEnv
from .rewards import REWARDS

ENV_ID = "kschedcore/Scheduling-v0"
"""The id gymnasium.make knows the environment by."""

if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point="kschedcore.gym.env:SchedulingEnv")

__all__ = ["SchedulingEnv", "ENV_ID", "MODES", "REWARDS"]
