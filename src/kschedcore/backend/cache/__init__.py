"""The scheduler cache: node table, placed pods, counters and volume facts."""
from .cache import Cache, Placement
from .node_table import NodeTable

__all__ = ["Cache", "NodeTable", "Placement"]
