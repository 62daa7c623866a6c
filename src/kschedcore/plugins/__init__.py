"""In-tree plugins. Each module is one kube-scheduler plugin; the kernels do the per-node work."""
from .image_locality import ImageLocality
from .interpod_affinity import InterPodAffinity
from .pod_topology_spread import PodTopologySpread
from .node_affinity import NodeAffinity
from .node_name import NodeName
from .node_ports import NodePorts
from .node_unschedulable import NodeUnschedulable
from .noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from .noderesources.fit import NodeResourcesFit
from .taint_toleration import TaintToleration
from .node_volume_limits import NodeVolumeLimits
from .volume_binding import VolumeBinding
from .volume_restrictions import VolumeRestrictions
from .volume_zone import VolumeZone

#: The implemented plugins of the default profile, in its multiPoint order.
REGISTRY = {cls.name: cls for cls in (
    NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
    VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, PodTopologySpread, InterPodAffinity, NodeResourcesBalancedAllocation, ImageLocality)}
