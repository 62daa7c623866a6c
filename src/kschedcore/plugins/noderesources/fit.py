"""NodeResourcesFit (plugins/noderesources/fit.go): requests vs allocatable; scoring strategies."""
import numpy as np

from ..._kernels import (F_NODE_RESOURCES_FIT, LEAST_ALLOCATED, MOST_ALLOCATED,
                         REQUESTED_TO_CAPACITY_RATIO, S_NODE_RESOURCES_FIT, TOO_MANY_PODS_BIT)
from ...errors import ValidationError
from ...objects import resources as res
from ..base import EMPTY_I64, Plugin

STRATEGIES = {"LeastAllocated": LEAST_ALLOCATED, "MostAllocated": MOST_ALLOCATED,
              "RequestedToCapacityRatio": REQUESTED_TO_CAPACITY_RATIO}
DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})
MAX_CUSTOM_PRIORITY_SCORE = 10


def resource_cols(table, resources):
    """Kernel columns of configured resource names; -1 for names that never count."""
    return np.asarray([table.resource_col(r["name"]) if res.counts(r["name"]) else -1
                       for r in resources], np.int32)


class NodeResourcesFit(Plugin):
    name = "NodeResourcesFit"
    filter_id = F_NODE_RESOURCES_FIT
    score_id = S_NODE_RESOURCES_FIT
    default_weight = 1

    def __init__(self, args=None):
        super().__init__(args)
        strategy = self.args.get("scoringStrategy") or {}
        self.strategy_type = strategy.get("type") or "LeastAllocated"
        if self.strategy_type not in STRATEGIES:
            raise ValidationError("NodeResourcesFitArgs", "scoringStrategy.type",
                                  f'unsupported value "{self.strategy_type}"')
        self.resources = [dict(r, weight=r.get("weight") or 1)
                          for r in (strategy.get("resources") or DEFAULT_RESOURCES)]
        shape = (strategy.get("requestedToCapacityRatio") or {}).get("shape") or []
        if self.strategy_type == "RequestedToCapacityRatio" and not shape:
            raise ValidationError("NodeResourcesFitArgs", "scoringStrategy.requestedToCapacityRatio.shape",
                                  "required for RequestedToCapacityRatio")
        self.shape = [(int(p["utilization"]), int(p["score"]) * (100 // MAX_CUSTOM_PRIORITY_SCORE))
                      for p in shape]
        self.ignored = set(self.args.get("ignoredResources") or ())
        self.ignored_groups = set(self.args.get("ignoredResourceGroups") or ())

    def configure(self, kernel, table):
        kernel.strategy = STRATEGIES[self.strategy_type]
        kernel.strategy_cols = resource_cols(table, self.resources)
        kernel.strategy_weights = np.asarray([r["weight"] for r in self.resources], np.int64)
        kernel.shape_util = np.asarray([u for u, _ in self.shape] or [0], np.int64)
        kernel.shape_score = np.asarray([s for _, s in self.shape] or [0], np.int64)

    def _ignored(self, name):
        return res.is_extended(name) and (name in self.ignored or name.split("/")[0] in self.ignored_groups)

    def compile(self, pod, cp, table):
        r = pod.requests
        cp.cpu, cp.memory, cp.ephemeral = (r.get(n, 0) for n in res.NATIVE)
        scalars = [(table.resource_col(n), v) for n, v in r.items()
                   if res.is_scalar(n) and v > 0 and not self._ignored(n)]
        cp.has_scalar_entry = any(res.is_scalar(n) for n in r)
        cp.scalar_cols = np.asarray([c for c, _ in scalars], np.int64) if scalars else EMPTY_I64
        cp.scalar_vals = np.asarray([v for _, v in scalars], np.int64) if scalars else EMPTY_I64
        # Scoring uses non-zero cpu/memory without pod-level requests (semantics §1.4 quirk).
        score_req = {res.CPU: pod.fit_score_non_zero[0], res.MEMORY: pod.fit_score_non_zero[1]}
        cp.fit_score_req = np.asarray([score_req.get(x["name"], r.get(x["name"], 0))
                                       for x in self.resources], np.int64)

    def reasons(self, detail, table):
        bits = detail & ((1 << 64) - 1)
        out = ["Too many pods"] if bits >> TOO_MANY_PODS_BIT & 1 else []
        out += [f"Insufficient {table.resources[c]}" for c in range(TOO_MANY_PODS_BIT) if bits >> c & 1]
        return out

