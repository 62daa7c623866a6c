"""Deprecated import path (kept for one release): the loop is kschedcore.scheduler.loop."""
import warnings

from ..scheduler.loop import Outcome, Simulation  # noqa: F401

warnings.warn("kschedcore.framework.loop is deprecated: import from kschedcore.scheduler.loop",
              DeprecationWarning, stacklevel=2)
