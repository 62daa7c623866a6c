"""Capacity questions: how many more copies of a pod fit (cluster-capacity's answer, exactly),
whether a mix of workloads fits, and how many nodes of a shape must be added for it to fit."""
from __future__ import annotations

from collections.abc import Iterable
from os import PathLike

from .cluster import as_listed, build_cluster, capacity_config, cluster_workload, load_cluster
from .nodes import NodesNeeded, node_copies, nodes_needed, read_node_template
from .targets import TemplateFit, fit_templates, free_resources, gangs_that_fit
from .estimate import LIMIT_REACHED, UNSCHEDULABLE, Bound, Estimate, run
from .pending import ClusterPending, schedule_cluster_pending
from .podspec import PROVISIONER_ANNOTATION, Template, read_template
from . import answers
from .review import pending_note, render, review

__all__ = ["Bound", "ClusterPending", "Estimate", "LIMIT_REACHED", "NodesNeeded", "PROVISIONER_ANNOTATION", "Template", "TemplateFit",
           "UNSCHEDULABLE", "as_listed", "build_cluster", "capacity_config", "cluster_capacity", "cluster_workload",
           "fit_templates", "free_resources", "gangs_that_fit", "load_cluster", "node_copies", "nodes_needed",
           "pending_note", "read_node_template", "read_template", "render", "review", "run",
           "schedule_cluster_pending"]


def cluster_capacity(cluster_paths: Iterable[str | PathLike[str]], podspecs: Iterable[str],
                     max_limit: int = 0, exclude_nodes: Iterable[str] = (), default_config: str | PathLike[str] | None = None,
                     seed: int = 0) -> dict:
    """cluster-capacity's ClusterCapacityReview for the cluster in `cluster_paths` (files) and the
    pod templates in `podspecs` (files): the report `-o json` prints, as a dict."""
    templates = [read_template(p) for p in podspecs]
    sched = load_cluster(cluster_paths, exclude_nodes, default_config, seed=seed)
    return review(run(sched, templates, max_limit), max_limit)
