from .node_ports import NodePorts

__all__ = ["NodePorts"]
