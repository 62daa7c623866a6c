"""The in-tree plugins by name (upstream: pkg/scheduler/framework/plugins/registry.go), one line
each: the name, the plugin's class (its factory: `cls(args, handle)`) and the extension points
it implements. The order is the default profile's multiPoint order."""
from ..framework.cluster_events import build_queueing_hint_map
from ..framework.framework import ENQUEUE_POINTS
from ..framework.registry import IN_TREE
from .defaultbinder import DefaultBinder
from .defaultpreemption import DefaultPreemption
from .dynamicresources import DynamicResources
from .imagelocality import ImageLocality
from .interpodaffinity import InterPodAffinity
from .nodeaffinity import NodeAffinity
from .nodename import NodeName
from .nodeports import NodePorts
from .noderesources import NodeResourcesBalancedAllocation, NodeResourcesFit
from .nodeunschedulable import NodeUnschedulable
from .nodevolumelimits import NodeVolumeLimits
from .podtopologyspread import PodTopologySpread
from .queuesort import PrioritySort
from .schedulinggates import SchedulingGates
from .tainttoleration import TaintToleration
from .volumebinding import VolumeBinding
from .volumerestrictions import VolumeRestrictions
from .volumezone import VolumeZone

IN_TREE.register("SchedulingGates", SchedulingGates, ("preEnqueue",))
IN_TREE.register("PrioritySort", PrioritySort, ("queueSort",))
IN_TREE.register("NodeUnschedulable", NodeUnschedulable, ("filter",))
IN_TREE.register("NodeName", NodeName, ("filter",))
IN_TREE.register("TaintToleration", TaintToleration, ("filter", "preScore", "score"))
IN_TREE.register("NodeAffinity", NodeAffinity, ("preFilter", "filter", "preScore", "score"))
IN_TREE.register("NodePorts", NodePorts, ("preFilter", "filter"))
IN_TREE.register("NodeResourcesFit", NodeResourcesFit, ("preFilter", "filter", "preScore", "score"))
IN_TREE.register("VolumeRestrictions", VolumeRestrictions, ("preFilter", "filter"))
IN_TREE.register("NodeVolumeLimits", NodeVolumeLimits, ("preFilter", "filter"))
IN_TREE.register("VolumeBinding", VolumeBinding, ("preFilter", "filter", "preScore", "score", "reserve", "preBind"))
IN_TREE.register("VolumeZone", VolumeZone, ("preFilter", "filter"))
IN_TREE.register("PodTopologySpread", PodTopologySpread, ("preFilter", "filter", "preScore", "score"))
IN_TREE.register("InterPodAffinity", InterPodAffinity, ("preFilter", "filter", "preScore", "score"))
IN_TREE.register("DynamicResources", DynamicResources, ("preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind"))
IN_TREE.register("DefaultPreemption", DefaultPreemption, ("postFilter", "preEnqueue"))
IN_TREE.register("NodeResourcesBalancedAllocation", NodeResourcesBalancedAllocation, ("preScore", "score"))
IN_TREE.register("ImageLocality", ImageLocality, ("score",))
IN_TREE.register("DefaultBinder", DefaultBinder, ("bind",))


def in_tree_events(name: str, args=None):
    """One in-tree plugin's EventsToRegister (made with `args`); None for a name that is not
    an in-tree plugin with EnqueueExtensions (it would hear every event)."""
    if name not in IN_TREE:
        return None
    plugin = IN_TREE.factory(name)(args, None)
    return plugin.events_to_register() if hasattr(plugin, "events_to_register") else None


def default_queueing_hint_map(custom=None):
    """The default profile's QueueingHintMap (buildQueueingHintMap over its in-tree plugins
    with EnqueueExtensions); custom: plugin name -> [ClusterEventWithHint], or None for a
    plugin that hears every event."""
    names = [n for n in IN_TREE if IN_TREE.points(n) & set(ENQUEUE_POINTS)]
    registrations = {n: in_tree_events(n) for n in names}
    registrations.update(custom or {})
    return build_queueing_hint_map(registrations)
