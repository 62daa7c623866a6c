"""Scheduler extenders: kube-scheduler's `pkg/scheduler/extender.go` and the
`k8s.io/kube-scheduler/extender/v1` protocol.

`Extender` is the interface the scheduling cycle calls (kube-scheduler's framework.Extender);
`ExtenderConfig` is one entry of KubeSchedulerConfiguration's `extenders`.
"""
from .config import ExtenderConfig, ExtenderTLSConfig, ManagedResource
from .http import HTTPExtender
from .interface import Extender, ExtenderError, FilterResult, Victims
from .recording import RecordingExtender, ReplayingExtender, wrap_extenders

__all__ = ["Extender", "ExtenderConfig", "ExtenderError", "ExtenderTLSConfig", "FilterResult",
           "HTTPExtender", "ManagedResource", "RecordingExtender", "ReplayingExtender", "Victims",
           "wrap_extenders"]
