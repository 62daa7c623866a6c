from .node_unschedulable import NodeUnschedulable

__all__ = ["NodeUnschedulable"]
