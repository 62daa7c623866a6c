"""In-tree plugins. Each module is one kube-scheduler plugin; the kernels do the per-node work."""
from .image_locality import ImageLocality
from .node_affinity import NodeAffinity
from .node_name import NodeName
from .node_ports import NodePorts
from .node_unschedulable import NodeUnschedulable
from .noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from .noderesources.fit import NodeResourcesFit
from .taint_toleration import TaintToleration

#: The implemented plugins of the default profile, in its multiPoint order.
REGISTRY = {cls.name: cls for cls in (
    NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit,
    NodeResourcesBalancedAllocation, ImageLocality)}

#: Default-profile plugins that only act on pod (anti-)affinity, topology spreading, volumes or
#: resource claims. kschedcore rejects input that would make them act (see objects/features.py),
#: so for every accepted pod their PreFilter and PreScore return Skip.
SKIPPING_FILTER_PLUGINS = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
                           "PodTopologySpread", "InterPodAffinity", "DynamicResources")
SKIPPING_SCORE_PLUGINS = ("VolumeBinding", "PodTopologySpread", "InterPodAffinity")
