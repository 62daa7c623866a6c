from .node_volume_limits import NodeVolumeLimits

__all__ = ["NodeVolumeLimits"]
