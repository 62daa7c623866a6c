"""Deprecated import path (kept for one release): live mode is kschedcore.scheduler.live."""
import warnings

from ..scheduler.live import LiveScheduler  # noqa: F401

warnings.warn("kschedcore.framework.live is deprecated: import from kschedcore.scheduler.live",
              DeprecationWarning, stacklevel=2)
