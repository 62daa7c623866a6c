"""The scheduling queue (pkg/scheduler/backend/queue): activeQ, backoffQ, unschedulablePods,
in-flight pods, the nominator."""
from .nominator import Nominator
from .queued_pod_info import ACTIVE_Q, BACKOFF_Q, IN_FLIGHT, UNSCHEDULABLE_PODS, BarePod, QueuedPodInfo, QueueError
from .scheduling_queue import SchedulingQueue

__all__ = ["ACTIVE_Q", "BACKOFF_Q", "BarePod", "IN_FLIGHT", "Nominator", "QueueError", "QueuedPodInfo",
           "SchedulingQueue", "UNSCHEDULABLE_PODS"]
