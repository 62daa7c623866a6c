"""NodeResourcesBalancedAllocation (plugins/noderesources/balanced_allocation.go)."""
import numpy as np

from ..._native import S_BALANCED_ALLOCATION
from ...errors import ValidationError
from ...framework.kernel_plugin import KernelPlugin
from .fit import DEFAULT_RESOURCES, resource_cols

MAX_RESOURCES = 64    # the kernel's scratch array


class NodeResourcesBalancedAllocation(KernelPlugin):
    name = "NodeResourcesBalancedAllocation"
    score_id = S_BALANCED_ALLOCATION
    default_weight = 1

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.resources = list(self.args.get("resources") or DEFAULT_RESOURCES)
        obj, seen = "NodeResourcesBalancedAllocationArgs", set()
        if len(self.resources) > MAX_RESOURCES:
            raise ValidationError(obj, "resources", f"at most {MAX_RESOURCES} resources are supported")
        for i, r in enumerate(self.resources):
            name = r.get("name") if isinstance(r, dict) else None
            if not isinstance(name, str) or not name:
                raise ValidationError(obj, f"resources[{i}].name", "Required value")
            if name in seen:
                raise ValidationError(obj, f"resources[{i}].name", f'Duplicate value: "{name}"')
            seen.add(name)
            if r.get("weight", 1) != 1:
                raise ValidationError(obj, f"resources[{i}].weight", f"must be 1, got {r.get('weight')}")

    def configure(self, kernel, table):
        kernel.balanced_cols = resource_cols(table, self.resources)

    def compile(self, pod, cp, table):
        req = [pod.requests.get(r["name"], 0) for r in self.resources]
        cp.balanced_req = np.asarray(req, np.int64)
        cp.skip_balanced = self.prescore_skips(pod)

    def prescore_skips(self, pod):
        return all(pod.requests.get(r["name"], 0) == 0 for r in self.resources)
