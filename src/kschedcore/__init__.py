"""kschedcore: kube-scheduler v1.34's decisions, in process, with a compiled hot path."""
from . import plugins as _plugins  # noqa: F401  (registers the in-tree plugins)
from .errors import (DuplicateError, KSchedCoreError, NotFoundError, ObjectError, QuantityError, StateError,
                     UnsupportedError, ValidationError, WorkloadError)
from .framework.config import SchedulerConfig, load_config, parse_config
from .framework.fit_error import FitError
from .objects.node import Node, parse_node
from .objects.pod import Pod, parse_pod
from .objects.quantity import Quantity, parse_quantity
from .scheduler import ScheduleResult, Scheduler
from .sources.files import Workload, load_workload

__version__ = "0.1.0"
"""The package's version; its decisions are kube-scheduler v1.34.1's."""

__all__ = [
    "Scheduler", "ScheduleResult", "FitError", "SchedulerConfig", "load_config", "parse_config", "Workload", "load_workload", "Node", "Pod",
    "parse_node", "parse_pod", "Quantity", "parse_quantity", "KSchedCoreError", "ValidationError",
    "QuantityError", "ObjectError", "WorkloadError", "UnsupportedError", "NotFoundError", "StateError",
    "DuplicateError", "__version__",
]
