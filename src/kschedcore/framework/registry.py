"""Plugins by name (kube-scheduler's frameworkruntime.Registry): the in-tree ones, and
out-of-tree ones for KubeSchedulerConfiguration profiles (`app.WithPlugin`).

    registry = Registry()
    registry.register("GpuPacking", lambda args: NativeScore("GpuPacking", gpu_packing, resources=[...]),
                      points=("score",))
    registry.register("Coscheduling", lambda args: Coscheduling(args.get("podGroups", ())),
                      points=("permit",))
    config = kschedcore.parse_config(doc, registry=registry)

Profiles then enable the names at those extension points (or through multiPoint), with score
weights and `pluginConfig` args (handed to the factory), like any in-tree plugin. PreFilter,
Filter, PostFilter, PreScore and Score plugins are kschedcore.custom plugins (one object per
name and profile serves all its points); Reserve, Permit, PreBind, Bind and PostBind ones
are binding-cycle plugins of the loop; a QueueSort plugin has `less(a, b)` over QueuedPodInfos
and a PreEnqueue plugin `pre_enqueue(pod)` returning None or why the pod must wait.

IN_TREE is filled by kschedcore.plugins.registry (one line per plugin) when the package is
imported; its factories take (args, handle), out-of-tree ones (args).
"""
from ..errors import ValidationError

__all__ = ["POINTS", "Registry"]

POINTS = ("queueSort", "preEnqueue", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit",
          "preBind", "bind", "postBind")
"""The extension points an out-of-tree plugin may be registered for."""


class Registry:
    """Plugin factories by name (kube-scheduler's frameworkruntime.Registry): `register(name,
    factory, points)`; a factory gets the plugin's `pluginConfig` args. Hand it to `load_config`."""

    def __init__(self):
        self._factories = {}       # name -> (factory, frozenset of points), in registration order

    def register(self, name: str, factory, points) -> None:
        points = frozenset(points)
        unknown = points - set(POINTS)
        if not name or not callable(factory) or not points or unknown:
            raise ValidationError(f"plugin {name!r}", "points",
                                  f"a name, a factory and extension points among {', '.join(POINTS)} "
                                  f"are needed (unknown: {sorted(unknown)})")
        if name in self._factories:
            raise ValidationError(f"plugin {name!r}", "name", "already registered")
        self._factories[name] = (factory, points)

    def __contains__(self, name) -> bool:
        return name in self._factories

    def __iter__(self):
        return iter(self._factories)

    def points(self, name: str) -> frozenset:
        return self._factories[name][1]

    def factory(self, name: str):
        return self._factories[name][0]

    def implementing(self, point: str) -> set:
        return {n for n, (_, points) in self._factories.items() if point in points}

    def create(self, name: str, args: dict):
        plugin = self._factories[name][0](args or {})
        if getattr(plugin, "name", None) != name:
            raise ValidationError(f"plugin {name!r}", "name", f"the factory made a plugin named "
                                                              f"{getattr(plugin, 'name', None)!r}")
        return plugin


#: kube-scheduler's in-tree plugins (kschedcore.plugins.registry registers them)
IN_TREE = Registry()
