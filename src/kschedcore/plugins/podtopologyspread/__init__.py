from .pod_topology_spread import PodTopologySpread

__all__ = ["PodTopologySpread"]
