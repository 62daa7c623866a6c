"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): profiles and their plugin sets.

Reproduces v1 defaulting (`apis/config/v1/default_plugins.go` mergePluginSet: an `enabled`
entry replaces a same-named default in place, others are appended; `disabled` drops defaults,
`"*"` all of them) and the framework's MultiPoint expansion (`runtime/framework.go`: plugins
enabled explicitly at an extension point first, then the MultiPoint ones, then the rest), so
the Filter order and the Score weights are kube-scheduler's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, Callable, NoReturn

import yaml

from ..errors import ValidationError
from ..extender.decode import ExtenderDecodeError, decode_extenders, ignored_by_scheduler
from .config_schema import CONFIG, PLUGIN_ARGS, strict_error, unknown_fields, wrong_type
from .registry import IN_TREE, Registry

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "default-scheduler"

#: The v1 default profile: MultiPoint plugins in order, with score weights.
DEFAULT_MULTI_POINT = (
    ("SchedulingGates", 0), ("PrioritySort", 0), ("NodeUnschedulable", 0), ("NodeName", 0),
    ("TaintToleration", 3), ("NodeAffinity", 2), ("NodePorts", 0), ("NodeResourcesFit", 1),
    ("VolumeRestrictions", 0), ("NodeVolumeLimits", 0), ("VolumeBinding", 0), ("VolumeZone", 0),
    ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 0),
    ("DefaultPreemption", 0), ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1),
    ("DefaultBinder", 0))

EXTENSION_POINTS = ("multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter",
                    "preScore", "score", "reserve", "permit", "preBind", "bind", "postBind")


@dataclass
class Profile:
    scheduler_name: str
    #: Filter plugins in the order they run
    filters: list
    #: Score plugin name -> weight
    score_weights: dict
    #: plugin name -> args dict (pluginConfig)
    plugin_args: dict = field(default_factory=dict)
    #: None: the configuration's global value
    percentage_of_nodes_to_score: int | None = None
    #: PostFilter plugins in the order they run
    post_filters: list = field(default_factory=lambda: ["DynamicResources", "DefaultPreemption"])
    #: out-of-tree plugins enabled (framework/registry.py): name -> extension points
    out_of_tree: dict = field(default_factory=dict)
    #: the QueueSort plugin and the PreEnqueue plugins, in order
    queue_sort: str = "PrioritySort"
    pre_enqueue: list = field(default_factory=lambda: ["SchedulingGates", "DynamicResources", "DefaultPreemption"])


@dataclass
class SchedulerConfig:
    """A KubeSchedulerConfiguration as read: its profiles (one Framework each, selected by
    `spec.schedulerName`), the global `percentageOfNodesToScore`, and the Registry its
    out-of-tree plugin names come from. `SchedulerConfig.default()` is kube-scheduler's default."""
    profiles: list
    percentage_of_nodes_to_score: int | None = None
    #: the Registry the out-of-tree plugin names of the profiles come from
    registry: Registry | None = None
    #: where it was read from (errors name it)
    source: str = "KubeSchedulerConfiguration"
    #: `extenders` (extender.ExtenderConfig), in the configuration's order
    extenders: list = field(default_factory=list)

    @classmethod
    def default(cls) -> "SchedulerConfig":
        return parse_config({"apiVersion": API_VERSION, "kind": KIND})


def load_config(path: str | PathLike[str], registry: Registry | None = None) -> SchedulerConfig:
    """Reads a KubeSchedulerConfiguration file (registry: out-of-tree plugins by name)."""
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except OSError as e:
        raise ValidationError(str(path), "", e.strerror or str(e)) from None
    except yaml.YAMLError as e:
        raise ValidationError(str(path), "", f"invalid YAML: {getattr(e, 'problem', e)}") from None
    return parse_config(doc, source=str(path), registry=registry)


def parse_config(doc: Any, source: str = "KubeSchedulerConfiguration", registry: Registry | None = None) -> SchedulerConfig:
    """Defaults and validates a KubeSchedulerConfiguration document; `registry`
    (framework.registry.Registry) adds out-of-tree plugin names."""
    def fail(path: str, msg: str) -> NoReturn:
        raise ValidationError(source, path, msg)

    if not isinstance(doc, dict):
        fail("", "expected a KubeSchedulerConfiguration object")
    if doc.get("apiVersion") != API_VERSION or doc.get("kind") != KIND:
        fail("apiVersion", f'expected apiVersion "{API_VERSION}" and kind "{KIND}", '
                           f'got "{doc.get("apiVersion")}" / "{doc.get("kind")}"')
    unknown = unknown_fields(doc, CONFIG)
    if unknown:
        fail("", strict_error(unknown))
    profiles_in = doc.get("profiles") or []
    for i, prof in enumerate(profiles_in if isinstance(profiles_in, list) else []):
        configs = prof.get("pluginConfig") if isinstance(prof, dict) else None
        for j, pc in enumerate(configs if isinstance(configs, list) else []):
            name = pc.get("name") if isinstance(pc, dict) else None
            schema = PLUGIN_ARGS.get(name) if isinstance(name, str) else None
            unknown = unknown_fields(pc.get("args"), schema) if schema else []
            if unknown:
                fail("", f"strict decoding error: decoding .profiles[{i}].pluginConfig[{j}]: strict decoding "
                         f"error: decoding args for plugin {pc['name']}: {strict_error(unknown)}")
            wrong = wrong_type(pc.get("args"), schema) if schema else None
            if wrong:
                where = f"profiles[{i}].pluginConfig[{j}].args" + (f".{wrong[0]}" if wrong[0] else "")
                fail(where, f"expected {wrong[1]}, got {type(wrong[2]).__name__}")
    global_pct = _percentage(doc.get("percentageOfNodesToScore"), "percentageOfNodesToScore", fail)
    raw_profiles = doc.get("profiles") or [{}]
    if not isinstance(raw_profiles, list):
        fail("profiles", "expected a list")
    profiles, names = [], set()
    for i, prof in enumerate(raw_profiles):
        path = f"profiles[{i}]"
        if not isinstance(prof, dict):
            fail(path, "expected an object")
        name = prof.get("schedulerName", DEFAULT_SCHEDULER_NAME)
        if not isinstance(name, str) or not name:
            fail(path + ".schedulerName", "Required value")
        if name in names:
            fail(path + ".schedulerName", f'Duplicate value: "{name}"')
        names.add(name)
        profiles.append(_profile(prof, name, path, fail, registry))
    if len({p.queue_sort for p in profiles}) > 1:   # one queue serves every profile
        fail("profiles", "queueSort must be the same for all profiles")
    try:
        extenders = decode_extenders(doc.get("extenders"))
    except ExtenderDecodeError as e:
        fail(e.path, e.message)
    _ignore_extender_resources(profiles, ignored_by_scheduler(extenders))
    return SchedulerConfig(profiles, global_pct, registry, source, extenders)


def _ignore_extender_resources(profiles, names) -> None:
    """buildExtenders: the extenders' resources ignoredByScheduler become every profile's
    NodeResourcesFit ignoredResources (replacing those the profile configured)."""
    if not names:
        return
    for prof in profiles:
        args = dict(prof.plugin_args.get("NodeResourcesFit") or {})
        args["ignoredResources"] = list(names)
        prof.plugin_args["NodeResourcesFit"] = args


def _percentage(value, path, fail):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        fail(path, f"Invalid value: {value!r}: not in valid range [0-100]")
    return value


def _known(name, registry) -> bool:
    return name in IN_TREE or (registry is not None and name in registry)


def _plugin_set(plugins, point, path, fail, registry=None):
    """(enabled [(name, weight)], disabled {names}) of one extension point."""
    ps = plugins.get(point) or {}
    if not isinstance(ps, dict):
        fail(f"{path}.{point}", "expected an object")
    for part in ("enabled", "disabled"):
        if not isinstance(ps.get(part) or [], list):
            fail(f"{path}.{point}.{part}", f"expected a list, got {type(ps[part]).__name__}")
    enabled = []
    for j, p in enumerate(ps.get("enabled") or []):
        ppath = f"{path}.{point}.enabled[{j}]"
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p["name"]:
            fail(ppath + ".name", "Required value")
        if not _known(p["name"], registry):
            fail(ppath + ".name", f'plugin "{p["name"]}" does not exist')
        weight = p.get("weight", 0)
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            fail(ppath + ".weight", f"Invalid value: {weight!r}: must be a non-negative integer")
        enabled.append((p["name"], weight))
    disabled = set()
    for j, p in enumerate(ps.get("disabled") or []):
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p["name"]:
            fail(f"{path}.{point}.disabled[{j}].name", "Required value")
        disabled.add(p["name"])
    return enabled, disabled


def _merge(defaults, enabled, disabled):
    """mergePluginSet: defaults minus disabled, re-configured in place, then the custom rest."""
    custom = {name: i for i, (name, _) in enumerate(enabled)}
    out, replaced = [], set()
    if "*" not in disabled:
        for name, weight in defaults:
            if name in disabled:
                continue
            if name in custom:
                name, weight = enabled[custom[name]]
                replaced.add(custom[name])
            out.append((name, weight))
    out += [p for i, p in enumerate(enabled) if i not in replaced]
    return out


def _expand(point_plugins, implementers, multi_point, point_disabled, where, fail):
    """expandMultiPointPlugins for one extension point: the plugin names in run order."""
    explicit = []
    for name, _ in point_plugins:
        if name not in implementers:
            fail(where, f'plugin "{name}" does not extend the extension point')
        if name in explicit:
            fail(where, f'plugin "{name}" already registered')
        explicit.append(name)
    if "*" in point_disabled:
        return explicit
    overrides, from_multi = [], []
    for name, _ in multi_point:
        if name not in implementers or name in point_disabled:
            continue
        if name in explicit:
            overrides.append(name)
            continue
        if name in from_multi:
            fail(where, f'plugin "{name}" already registered')
        from_multi.append(name)
    first = [n for n in explicit if n in overrides]
    return first + from_multi + [n for n in explicit if n not in overrides]


def _profile(prof, name, path, fail, registry=None) -> Profile:
    plugins = prof.get("plugins") or {}
    if not isinstance(plugins, dict):
        fail(path + ".plugins", "expected an object")
    for ext_point in plugins:
        if ext_point not in EXTENSION_POINTS:
            fail(f"{path}.plugins.{ext_point}", "unknown extension point")
    mp_enabled, mp_disabled = _plugin_set(plugins, "multiPoint", path + ".plugins", fail, registry)
    multi_point = _merge(DEFAULT_MULTI_POINT, mp_enabled, mp_disabled)

    def point(name):
        enabled, disabled = _plugin_set(plugins, name, path + ".plugins", fail, registry)
        implementers = IN_TREE.implementing(name) | (registry.implementing(name) if registry is not None else set())
        return enabled, _expand(enabled, implementers, multi_point, disabled, f"{path}.plugins.{name}", fail)

    _, post_filters = point("postFilter")
    _, queue_sort = point("queueSort")
    if len(queue_sort) != 1:
        fail(path + ".plugins.queueSort", f"exactly one queue sort plugin is required, got {queue_sort}")
    _, pre_enqueue = point("preEnqueue")
    _, filters = point("filter")
    s_enabled, scores = point("score")
    out_of_tree: dict = {}
    for p, names in (("queueSort", queue_sort), ("preEnqueue", pre_enqueue), ("filter", filters), ("score", scores),
                     ("postFilter", post_filters), ("preFilter", point("preFilter")[1]),
                     ("preScore", point("preScore")[1]),
                     *((p, point(p)[1]) for p in ("reserve", "permit", "preBind", "bind", "postBind"))):
        for n in names:
            if n not in IN_TREE:
                out_of_tree.setdefault(n, set()).add(p)
    # getScoreWeights: the Score point's weight wins over MultiPoint's; 0 means 1
    weights = {}
    for n, w in s_enabled + multi_point:
        if n in scores and n not in weights:
            weights[n] = w or 1
    args = {}
    if not isinstance(prof.get("pluginConfig") or [], list):
        fail(path + ".pluginConfig", "expected a list")
    for j, pc in enumerate(prof.get("pluginConfig") or []):
        pc_path = f"{path}.pluginConfig[{j}]"
        if not isinstance(pc, dict) or not isinstance(pc.get("name"), str):
            fail(pc_path + ".name", "Required value")
        if pc["name"] in args:
            fail(pc_path + ".name", f'Duplicate value: "{pc["name"]}"')
        if not _known(pc["name"], registry):
            fail(pc_path + ".name", f'plugin "{pc["name"]}" does not exist')
        a = pc.get("args") or {}
        if not isinstance(a, dict):
            fail(pc_path + ".args", "expected an object")
        args[pc["name"]] = {k: v for k, v in a.items() if k not in ("apiVersion", "kind")}
    pct = _percentage(prof.get("percentageOfNodesToScore"), path + ".percentageOfNodesToScore", fail)
    return Profile(name, filters, weights, args, pct, post_filters, out_of_tree, queue_sort[0], pre_enqueue)
