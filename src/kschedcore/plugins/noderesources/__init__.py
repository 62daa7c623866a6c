from .balanced_allocation import NodeResourcesBalancedAllocation
from .fit import NodeResourcesFit

__all__ = ["NodeResourcesBalancedAllocation", "NodeResourcesFit"]
