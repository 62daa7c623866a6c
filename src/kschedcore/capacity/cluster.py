"""The cluster as cluster-capacity's simulated API holds it (SyncWithClient): every object of
the input, the excluded nodes left out, Succeeded/Failed pods dropped, nodes listed by name and
pods by namespace and name (the API's list order, which decides the node tree's order), and the
first profile of the configuration serving "default-scheduler"."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from os import PathLike
from typing import Any

from ..errors import ValidationError
from ..framework.config import SchedulerConfig, load_config
from ..scheduler import Scheduler
from ..sources.files import Workload, load_workload
from ..util import collector
from .podspec import DEFAULT_SCHEDULER


def _name(obj: dict) -> str:
    return ((obj.get("metadata") or {}).get("name") or "") if isinstance(obj, dict) else ""


def _pod_key(obj: dict) -> tuple:
    meta = (obj.get("metadata") or {}) if isinstance(obj, dict) else {}
    return (meta.get("namespace") or "default", meta.get("name") or "")


def capacity_config(path: str | PathLike[str] | None = None) -> SchedulerConfig:
    """--default-config (or kube-scheduler's defaults) with profile 0 named default-scheduler."""
    config = load_config(path) if path else SchedulerConfig.default()
    first = replace(config.profiles[0], scheduler_name=DEFAULT_SCHEDULER)
    rest = [p for p in config.profiles[1:] if p.scheduler_name != DEFAULT_SCHEDULER]
    return replace(config, profiles=[first, *rest])


def cluster_workload(paths: Iterable[str | PathLike[str]], exclude_nodes: Iterable[str] = ()) -> Workload:
    """The input files as cluster-capacity's API lists them (module docstring)."""
    return as_listed(load_workload(*paths), exclude_nodes)


def as_listed(workload: Workload, exclude_nodes: Iterable[str] = ()) -> Workload:
    """A Workload as cluster-capacity's API lists it, in place: the excluded nodes left out,
    nodes by name, pods by namespace and name."""
    known = {_name(n) for n in workload.nodes}
    unknown = [n for n in exclude_nodes if n not in known]
    if unknown:
        raise ValidationError("--exclude-nodes", "", f'no node named "{unknown[0]}" in the cluster')
    excluded = set(exclude_nodes)
    with collector.paused():      # a key tuple per pod of a dump: no passes over the loaded heap
        workload.nodes = sorted((n for n in workload.nodes if _name(n) not in excluded), key=_name)
        workload.pods.sort(key=_pod_key)
        workload.pending.sort(key=_pod_key)
    return workload


def build_cluster(workload: Workload, config: SchedulerConfig, seed: int = 0, **options: Any) -> Scheduler:
    """A Scheduler over a loaded Workload under `config`, for capacity questions."""
    return Scheduler.from_workload(workload, config=config, seed=seed, **options)


def load_cluster(paths: Iterable[str | PathLike[str]], exclude_nodes: Iterable[str] = (),
                 config_path: str | PathLike[str] | None = None, seed: int = 0, **options: Any) -> Scheduler:
    """The cluster in the files `paths` as cluster-capacity lists it (`exclude_nodes` left out),
    as a Scheduler under the KubeSchedulerConfiguration at `config_path` (None: the default)."""
    return build_cluster(cluster_workload(paths, exclude_nodes), capacity_config(config_path), seed, **options)
