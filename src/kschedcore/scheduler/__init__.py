"""The scheduler: the public Scheduler, its scheduling cycle, the loop on a virtual clock and
live mode (pkg/scheduler: scheduler.go, schedule_one.go, eventhandlers.go)."""
from .result import GATED_MESSAGE, NO_PROFILE_ERROR, ScheduleResult
from .scheduler import TIE_BREAKS, Scheduler

__all__ = ["GATED_MESSAGE", "NO_PROFILE_ERROR", "ScheduleResult", "Scheduler", "TIE_BREAKS"]
