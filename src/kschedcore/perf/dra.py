"""scheduler_perf's Dynamic Resource Allocation ops (test/integration/scheduler_perf/dra.go):
a test driver's ResourceSlices for the nodes there are, claims made from a template, and claims
allocated up front (never reserved, so their devices stay in use for the whole workload)."""
from __future__ import annotations

import fnmatch
from typing import Any

import numpy as np

from ..dra.allocator import Allocator, Features, SelectorCache
from ..errors import UnsupportedError, WorkloadError
from ..scheduler.dra_events import resource_object

#: feature gates that change DRA's decisions, alpha and off in kube-scheduler v1.34: a workload
#: turning one on is refused by name (the others a workload sets are reported, not applied)
NOT_IMPLEMENTED_GATES = ("DRADeviceTaints", "DRAPartitionableDevices", "DRADeviceBindingConditions",
                         "DRAConsumableCapacity")


def check_feature_gates(gates: dict, where: str) -> None:
    for gate in NOT_IMPLEMENTED_GATES:
        if gates.get(gate):
            raise UnsupportedError(where, f"featureGates.{gate}",
                                   f"the {gate} feature gate (alpha, off in kube-scheduler v1.34) is not implemented")


def driver_slice(node_name: str, driver: str, devices: int) -> dict:
    """The ResourceSlice createResourceDriver publishes for one node: a pool of its own, named
    after the node, with `devices` identical devices instance-0..N-1 (resource.k8s.io/v1 form)."""
    def device(i):
        return {"name": f"instance-{i}",
                "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                               "driverVersion": {"version": "1.2.3"}, "dra.example.com/numa": {"int": i}},
                "capacity": {"memory": {"value": "1Gi"}}}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": node_name},
            "spec": {"driver": driver, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 0, "resourceSliceCount": 1},
                     "devices": [device(i) for i in range(devices)]}}


class DRAOps:
    """Mixed into the perf Runner: the DRA ops, by opcode."""
    # the Runner's, which these ops use
    where: str
    seed: int
    sched: Any
    sim: Any
    _param: Any
    _template: Any
    _count: Any
    _add_any: Any

    def op_createResourceDriver(self, op, index):
        where = f"workloadTemplate[{index}]"
        driver, pattern = op.get("driverName"), op.get("nodes")
        if not isinstance(driver, str) or not driver:
            raise WorkloadError(self.where, f"{where}.driverName", "required")
        if not isinstance(pattern, str) or not pattern:
            raise WorkloadError(self.where, f"{where}.nodes", "required (a glob of node names)")
        devices = self._param(op, "maxClaimsPerNodeParam") if "maxClaimsPerNodeParam" in op \
            else op.get("maxClaimsPerNode", 0)
        if not isinstance(devices, int) or devices < 0:
            raise WorkloadError(self.where, f"{where}.maxClaimsPerNode",
                                f"must be a non-negative integer, got {devices!r}")
        for name in list(self.sched.cache.node_names):
            if fnmatch.fnmatchcase(name, pattern):
                resource_object(self.sim, "ADDED", "ResourceSlice", driver_slice(name, driver, devices))

    def op_createResourceClaims(self, op, index):
        ns = op.get("namespace")
        if not ns:
            raise WorkloadError(self.where, f"workloadTemplate[{index}].namespace", "required")
        make = self._template(op.get("templatePath"), {})
        for i in range(self._count(op)):
            self._add_any(make(i), ns)

    def op_allocResourceClaims(self, op, index):
        """Each unallocated claim of the namespace (all of them without one), in the API
        server's list order, allocated on the first node of a shuffled list where it fits."""
        dra = self.sched.cache.dra
        ns = op.get("namespace") or None
        claims = sorted((c for c in dra.claims.values() if ns is None or c.namespace == ns),
                        key=lambda c: (c.namespace, c.name))
        # the devices in use: a live view, so each claim allocated here counts for the next
        allocator = Allocator(Features(), dra.allocated_devices(), dra.class_dicts(), dra.slice_dicts(),
                              SelectorCache())
        nodes = [n.raw for n in self.sched.cache.table.nodes if n is not None]
        rng = np.random.default_rng(self.seed)
        for claim in claims:
            if claim.allocation is not None:
                continue
            for i in rng.permutation(len(nodes)).tolist():
                node = nodes[i]
                results = allocator.allocate(node, [claim.v1])
                if results is not None:
                    break
            else:
                raise WorkloadError(self.where, f"workloadTemplate[{index}]",
                                    f"could not allocate claim {claim.key}")
            status = {**(claim.v1.get("status") or {}), "allocation": results[0]}
            resource_object(self.sim, "MODIFIED", "ResourceClaim", {**claim.v1, "status": status})
