"""The queue's plugins: queueing hints (scheduling_queue.go isEventOfInterest,
isPodWorthRequeuing: which plugins hear an event, and where a pod they rejected goes) and the
PreEnqueue plugins (runPreEnqueuePlugins)."""
from ...framework.cluster_events import ClusterEvent, QueueSkip, Queue, QueueingHintMap, match_cluster_events
from .queued_pod_info import is_pod, pod_uid

# queueingStrategy
QUEUE_SKIP, QUEUE_AFTER_BACKOFF, QUEUE_IMMEDIATELY = 0, 1, 2


class QueueingHints:
    """The profiles' QueueingHintMaps ({schedulerName or None: map})."""

    def __init__(self, hint_maps):
        if hint_maps is None:
            hint_maps = QueueingHintMap()
        if isinstance(hint_maps, QueueingHintMap) or not _is_profile_map(hint_maps):
            hint_maps = {None: hint_maps}
        self.maps = hint_maps
        #: pluginToEventsMap, over every profile
        self.plugin_events: dict[str, list] = {}
        for m in hint_maps.values():
            for event, fns in m.items():
                for f in fns:
                    self.plugin_events.setdefault(f.plugin_name, []).append(event)
        self._matching_cache = {}
        self._event_plugins_cache = {}

    def interested(self, event: ClusterEvent) -> bool:
        """isEventOfInterest: a wildcard, or an event some plugin registered."""
        return event.is_wildcard or bool(self.event_plugins(event))

    def event_plugins(self, event: ClusterEvent) -> frozenset:
        """Plugins with a hint for this event in any profile."""
        plugins = self._event_plugins_cache.get(event)
        if plugins is None:
            plugins = frozenset(f.plugin_name for m in self.maps.values() for f in self._matching(m, event))
            self._event_plugins_cache[event] = plugins
        return plugins

    def _matching(self, hint_map, event: ClusterEvent) -> list:
        """The hint functions registered for events that the incoming event matches."""
        cache_key = (id(hint_map), event)
        fns = self._matching_cache.get(cache_key)
        if fns is None:
            fns = [f for registered, hs in hint_map.items() if match_cluster_events(registered, event) for f in hs]
            self._matching_cache[cache_key] = fns
        return fns

    def worth_requeuing(self, p, event: ClusterEvent, old_obj, new_obj) -> int:
        """isPodWorthRequeuing: the rejector plugins' hints for this event."""
        unschedulable, pending = p.unschedulable_plugins, p.pending_plugins
        if not unschedulable and not pending:
            return QUEUE_AFTER_BACKOFF
        if event.is_wildcard:
            if new_obj is not None and (not is_pod(new_obj) or pod_uid(new_obj) != p.uid):
                return QUEUE_SKIP   # a wildcard aimed at another pod
            return QUEUE_AFTER_BACKOFF
        hint_map = per_profile(self.maps, p)
        if hint_map is None:
            return QUEUE_AFTER_BACKOFF
        strategy = QUEUE_SKIP
        for f in self._matching(hint_map, event):
            name = f.plugin_name
            if name not in unschedulable and name not in pending:
                continue
            if _run_hint(f.hint, p.pod, old_obj, new_obj) == QueueSkip:
                continue
            if name in pending:
                return QUEUE_IMMEDIATELY
            if not pending:
                return QUEUE_AFTER_BACKOFF
            strategy = QUEUE_AFTER_BACKOFF
        return strategy


class PreEnqueue:
    """The profiles' PreEnqueue plugins (a list for every profile, or {schedulerName: [...]})."""

    def __init__(self, plugins, plugin_events):
        if plugins is None:
            plugins = []
        if not isinstance(plugins, dict):
            plugins = {None: list(plugins)}
        self._plugins = plugins
        self._all = plugins[None] if list(plugins) == [None] else None
        self._events = plugin_events

    def run(self, p) -> None:
        """runPreEnqueuePlugins: the gating plugin first, then the rest in order; the first
        rejection gates the pod and joins its rejector plugins."""
        plugins = self._all
        if plugins is None:
            plugins = per_profile(self._plugins, p) or ()
        gating, pod = p.gating_plugin, p.pod
        if gating:
            first = next((pl for pl in plugins if pl.name == gating), None)
            if first is not None and first.pre_enqueue(pod) is not None:
                self._gate(first, p)
                return
        for pl in plugins:
            if pl.name != gating and pl.pre_enqueue(pod) is not None:
                self._gate(pl, p)
                return
        p.gating_plugin = ""

    def _gate(self, plugin, p) -> None:
        """The plugin rejected the pod: it gates it, and joins its rejector plugins."""
        p.unschedulable_plugins = p.unschedulable_plugins | {plugin.name}
        p.gating_plugin = plugin.name
        p.gating_plugin_events = self._events.get(plugin.name, ())


def per_profile(values: dict, p):
    """The value of the pod's profile in {schedulerName or None (every profile): value}."""
    if None in values and len(values) == 1:
        return values[None]
    name = getattr(p.pod, "scheduler_name", None)
    return values.get(name, values.get(None))


def _run_hint(hint, pod, old_obj, new_obj):
    try:
        return hint(pod, old_obj, new_obj)
    except Exception:   # a hint's error counts as Queue, so no pod gets stuck
        return Queue


def _is_profile_map(value) -> bool:
    return isinstance(value, dict) and all(isinstance(v, QueueingHintMap) for v in value.values()) and bool(value)
