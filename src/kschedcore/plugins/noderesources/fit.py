"""NodeResourcesFit (plugins/noderesources/fit.go): requests vs allocatable; scoring strategies."""
import numpy as np

from ..._native import (F_NODE_RESOURCES_FIT, LEAST_ALLOCATED, MOST_ALLOCATED,
                         REQUESTED_TO_CAPACITY_RATIO, S_NODE_RESOURCES_FIT, TOO_MANY_PODS_BIT)
from ...errors import ValidationError
from ...framework.kernel_plugin import EMPTY_I64, KernelPlugin
from ...objects import resources as res
from .events import fit_events

STRATEGIES = {"LeastAllocated": LEAST_ALLOCATED, "MostAllocated": MOST_ALLOCATED,
              "RequestedToCapacityRatio": REQUESTED_TO_CAPACITY_RATIO}
DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})
MAX_CUSTOM_PRIORITY_SCORE = 10


def _validated_strategy(args) -> dict:
    """NodeResourcesFitArgs.scoringStrategy, defaulted and validated as kube-scheduler does
    (config/v1 defaults: weight 0 -> 1; validation_pluginargs.go)."""
    obj = "NodeResourcesFitArgs"
    if not isinstance(args, dict):
        raise ValidationError(obj, "", f"expected an object, got {type(args).__name__}")
    strategy = args.get("scoringStrategy") or {}
    if not isinstance(strategy, dict):
        raise ValidationError(obj, "scoringStrategy", f"expected an object, got {type(strategy).__name__}")
    kind = strategy.get("type") or "LeastAllocated"
    if not isinstance(kind, str) or kind not in STRATEGIES:
        supported = ", ".join(f'"{k}"' for k in sorted(STRATEGIES))
        raise ValidationError(obj, "scoringStrategy.type", f'Unsupported value: "{kind}": supported values: {supported}')
    resources = []
    given = strategy.get("resources") or DEFAULT_RESOURCES
    if not isinstance(given, (list, tuple)):
        raise ValidationError(obj, "scoringStrategy.resources", f"expected a list, got {type(given).__name__}")
    for i, r in enumerate(given):
        path = f"scoringStrategy.resources[{i}]"
        name, weight = (r.get("name"), r.get("weight") or 1) if isinstance(r, dict) else (None, None)
        if not isinstance(name, str) or not name:
            raise ValidationError(obj, path + ".name", "Required value")
        if isinstance(weight, bool) or not isinstance(weight, int) or not 0 < weight <= 100:
            raise ValidationError(obj, path + ".weight",
                                  f"Invalid value: {weight!r}: resource weight of {name} not in valid range (0, 100]")
        resources.append({"name": name, "weight": weight})
    shape: list[tuple] = []
    if kind == "RequestedToCapacityRatio":
        ratio = strategy.get("requestedToCapacityRatio") or {}
        points = (ratio.get("shape") or []) if isinstance(ratio, dict) else None
        if points is None or not isinstance(points, list):
            raise ValidationError(obj, "scoringStrategy.requestedToCapacityRatio", "expected an object with a shape list")
        if not points:
            raise ValidationError(obj, "scoringStrategy.requestedToCapacityRatio.shape",
                                  "Required value: at least one point must be specified")
        for i, p in enumerate(points):
            u, sc = (p.get("utilization"), p.get("score")) if isinstance(p, dict) else (None, None)
            for key, v, hi in (("utilization", u, 100), ("score", sc, MAX_CUSTOM_PRIORITY_SCORE)):
                if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= hi:
                    raise ValidationError(obj, f"scoringStrategy.requestedToCapacityRatio.shape[{i}].{key}",
                                          f"Invalid value: {v!r}: not in valid range [0, {hi}]")
            if shape and shape[-1][0] >= u:
                raise ValidationError(obj, f"scoringStrategy.requestedToCapacityRatio.shape[{i}].utilization",
                                      f"Invalid value: {u}: values must be sorted in increasing order")
            shape.append((u, sc))
    return {"type": kind, "resources": resources, "shape": shape}


def resource_cols(table, resources):
    """Kernel columns of configured resource names; -1 for names that never count."""
    return np.asarray([table.resource_col(r["name"]) if res.counts(r["name"]) else -1
                       for r in resources], np.int32)


class NodeResourcesFit(KernelPlugin):
    name = "NodeResourcesFit"
    static_reasons = True
    filter_id = F_NODE_RESOURCES_FIT
    score_id = S_NODE_RESOURCES_FIT
    default_weight = 1

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        strategy = _validated_strategy(self.args)
        self.strategy_type = strategy["type"]
        self.resources = strategy["resources"]
        self.shape = [(u, s * (100 // MAX_CUSTOM_PRIORITY_SCORE)) for u, s in strategy["shape"]]
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
        scalars = [(table.resource_col(n, pod), v) for n, v in r.items()
                   if res.is_scalar(n) and v > 0 and not self._ignored(n)]
        cp.has_scalar_entry = any(res.is_scalar(n) for n in r)
        cp.scalar_cols = np.asarray([c for c, _ in scalars], np.int64) if scalars else EMPTY_I64
        cp.scalar_vals = np.asarray([v for _, v in scalars], np.int64) if scalars else EMPTY_I64
        # Scoring uses non-zero cpu/memory without pod-level requests (semantics §1.4 quirk).
        score_req = {res.CPU: pod.fit_score_non_zero[0], res.MEMORY: pod.fit_score_non_zero[1]}
        cp.fit_score_req = np.asarray([score_req.get(x["name"], pod.fit_score_requests.get(x["name"], 0))
                                       for x in self.resources], np.int64)

    def reasons(self, detail, table):
        bits = detail & ((1 << 64) - 1)
        out = ["Too many pods"] if bits >> TOO_MANY_PODS_BIT & 1 else []
        out += [f"Insufficient {table.resources[c]}" for c in range(TOO_MANY_PODS_BIT) if bits >> c & 1]
        return out

    def histogram(self, kernel, table):
        """Counted per missing resource (the kernel's status detail is a bit per resource)."""
        return [(self.reasons(1 << int(bit), table)[0], int(kernel.hist_fit[bit]))
                for bit in np.flatnonzero(np.asarray(kernel.hist_fit))]

    def events_to_register(self):
        return fit_events()
