"""The structured allocator kube-scheduler v1.34.1 runs (k8s.io/dynamic-resource-allocation
``structured``): its default feature gates (DRAAdminAccess, DRAPrioritizedList,
DRAResourceClaimDeviceStatus on) select the *experimental* variant
(``internal/experimental/allocator_experimental.go``), the only one supporting DeviceStatus.

``Allocator(features, allocated_devices, classes, slices, cel_cache).allocate(node, claims)``
works on validated, API-defaulted resource.k8s.io/v1 dicts and returns one AllocationResult
dict per claim, None when the claims cannot all be allocated on the node, or raises
:class:`AllocatorError` with upstream's words. The search is upstream's: claims, then their
requests, then each request's devices, every candidate device in pool/slice/device order,
the first full solution wins, backtracking on failure.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import is_

from ..errors import UnsupportedError
from .claims import (ALLOCATION_RESULTS_MAX_SIZE, AllocationTimedOut, AllocatorError, allocation_config,
                     claim_node_selector)
from .pools import gather_pools, node_name
from .search import Search
from .selectors import SelectorCache

__all__ = ["ALLOCATION_RESULTS_MAX_SIZE", "AllocationTimedOut", "Allocator", "AllocatorError", "Features",
           "SelectorCache"]

@dataclass(frozen=True, slots=True)
class Features:
    """``structured.Features``: the feature gates that change allocation. The defaults are
    kube-scheduler v1.34.1's."""
    admin_access: bool = True
    prioritized_list: bool = True
    device_status: bool = True
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding: bool = False
    consumable_capacity: bool = False


_UNSUPPORTED = ("partitionable_devices", "device_taints", "device_binding", "consumable_capacity")
_GATES = {"partitionable_devices": "DRAPartitionableDevices", "device_taints": "DRADeviceTaints",
          "device_binding": "DRADeviceBindingConditions", "consumable_capacity": "DRAConsumableCapacity"}


class Allocator:
    """Allocates the devices of a pod's claims on one node at a time, for one cluster state."""

    def __init__(self, features: Features, allocated_devices, classes: Mapping[str, Mapping],
                 slices: Sequence[Mapping], cel_cache: SelectorCache | None = None):
        for name in _UNSUPPORTED:
            if getattr(features, name):
                raise UnsupportedError("DRA", "features", f"the {_GATES[name]} feature gate is not implemented")
        self.features = features
        self.allocated = allocated_devices
        self.classes = classes
        self.slices = list(slices)
        self.cel = cel_cache if cel_cache is not None else SelectorCache()
        self.cel.keep_only(self.slices)
        self._pools: dict = {}
        self._pools_of: dict = {}      # id(node object) -> (node, pools)
        self._prepared_specs: dict = {}
        # node-local slices by node: a node's pools come from its own slices and the others
        self._local: dict[str, list] = {}
        self._shared: list = []
        for s in self.slices:
            spec = s["spec"]
            if spec.get("nodeName") and spec.get("perDeviceNodeSelection") is None:
                self._local.setdefault(spec["nodeName"], []).append(s)
            else:
                self._shared.append(s)

    def pools(self, node: Mapping):
        """The pools reaching the node, gathered once per node-local answer: a node's pools
        depend only on its name and labels."""
        seen = self._pools_of.get(id(node))
        if seen is not None and seen[0] is node:
            return seen[1]
        md = node.get("metadata") or {}
        key = (md.get("name", ""), tuple(sorted((md.get("labels") or {}).items())))
        pools = self._pools.get(key)
        if pools is None:
            mine = self._local.get(key[0], [])
            pools = self._pools[key] = gather_pools(mine + self._shared if self._shared else mine, node)
        if len(self._pools_of) > 100_000:
            self._pools_of.clear()
        self._pools_of[id(node)] = (node, pools)     # the node object held: its id stays its own
        return pools

    def allocate(self, node: Mapping, claims: Sequence[Mapping], deadline: float | None = None) -> list[dict] | None:
        """One v1 AllocationResult per claim, None when they cannot all be allocated on the
        node (including pools being updated); raises AllocatorError, or AllocationTimedOut
        once ``time.monotonic()`` passes ``deadline`` (checked at every search step, as
        upstream checks its context)."""
        return Search(self, node, list(claims), deadline).run()

    def check(self, claims: Sequence[Mapping]) -> None:
        """Raises the AllocatorError every allocate() call of these ExactCount claims would
        raise before looking at a device (a missing class, an empty selector, the claim
        limit), wherever the node."""
        Search(self, None, list(claims)).prepare()

    def allocate_in_order(self, node: Mapping, claims: Sequence[Mapping], devices) -> list[dict]:
        """allocate() for claims whose requests are all ExactCount requests for one kind of
        device, without constraints or admin access, on a node known to have enough of them:
        ``devices`` are (pool, slice, index) of the node's free devices the requests accept, in
        the search's order. The search takes the first ones without backtracking, request by
        request; so does this, with the search's results (its node selector, the classes' and
        the claims' configuration)."""
        claims = list(claims)
        requests, configs = self._prepared(claims)
        picks = iter(devices)
        target = node_name(node)
        out = []
        for ci, claim in enumerate(claims):
            results, slices, specs = [], [], []
            for ri in range(len(claim["spec"]["devices"]["requests"])):
                req = requests[(ci, ri, 0)]
                for _ in range(req.num_devices):
                    pool, s, index = next(picks)
                    dev = s["spec"]["devices"][index]
                    results.append({"request": req.name, "driver": pool.driver, "pool": pool.name,
                                    "device": dev["name"]})
                    slices.append(s)
                    specs.append(dev)
            selector = claim_node_selector(claim, slices, specs, target)
            out.append({"devices": {"results": results, "config": list(configs[ci])}, "nodeSelector": selector})
        return out

    def _prepared(self, claims: list) -> tuple:
        """The requests Search.prepare makes for these claims and each claim's configuration,
        made once per list of claim specs (claims from one template share theirs)."""
        key, specs, hit = spec_memo(self._prepared_specs, claims)
        if hit is None:
            search = Search(self, None, claims)
            search.prepare()
            if len(self._prepared_specs) > 1024:
                self._prepared_specs.clear()
            configs = [allocation_config(search.requests, ci, c) for ci, c in enumerate(claims)]
            hit = self._prepared_specs[key] = (specs, search.requests, configs)
        return hit[1], hit[2]


def spec_memo(memo: dict, claims) -> tuple:
    """(key, the claims' specs, memo[key] or None) for a memo of values made from a list of
    claim specs, entries being (specs, ...): keyed by the specs' ids (claims from one template
    share their spec object), an entry counting only while it holds those very objects."""
    specs = [c["spec"] for c in claims]
    key = tuple(map(id, specs))
    hit = memo.get(key)
    if hit is not None and not all(map(is_, hit[0], specs)):
        hit = None
    return key, specs, hit
