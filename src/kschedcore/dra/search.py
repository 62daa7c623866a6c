"""One ``Allocate`` call: the depth-first search of the experimental allocator
(``allocateOne``, ``isSelectable``, ``allocateDevice``), step for step, so that the first
solution it finds and the errors it meets on the way are upstream's."""
from __future__ import annotations

import sys
import time
from collections.abc import Mapping

from .claims import (ALLOCATION_RESULTS_MAX_SIZE, AllocationTimedOut, AllocatorError, Request,
                     allocation_result, kobj, make_constraints, validate_request)
from .cel import CELCompileError, CELRuntimeError


#: recursion room for the deepest search: every claim of a pod with 32 devices each
_DEPTH = 20_000


class _MaxSizeExceeded(Exception):
    """``errAllocationResultMaxSizeExceeded``: backtrack further, not fatal."""


class _Picked:
    __slots__ = ("request", "driver", "pool", "device", "admin", "slice", "spec")

    def __init__(self, request, driver, pool, device, admin, slice_, spec):
        self.request, self.driver, self.pool, self.device = request, driver, pool, device
        self.admin, self.slice, self.spec = admin, slice_, spec


class Search:
    """The state of one allocation attempt for a node."""

    def __init__(self, alloc, node: Mapping | None, claims: list, deadline: float | None = None):
        self.alloc = alloc
        self.deadline = deadline
        self.node = node
        self.claims = claims
        self.pools = alloc.pools(node) if node is not None else []
        self.requests: dict[tuple, Request] = {}
        self.constraints: list[list] = []
        self.results: list[list[_Picked]] = [[] for _ in claims]
        self.matched: dict[tuple, bool] = {}
        self.allocating: dict[tuple, set] = {}

    # -- the whole call
    def run(self) -> list[dict] | None:
        self.prepare()
        self.matched = {}           # upstream starts deviceMatchesRequest afresh here
        if sys.getrecursionlimit() < _DEPTH:
            sys.setrecursionlimit(_DEPTH)      # one frame pair per device picked; never lowered
        try:
            done = self._one(ci=0, ri=0, si=0, di=0, in_sub=False)
        except _MaxSizeExceeded:
            done = False
        if not done:
            return None
        return [allocation_result(self, ci, claim) for ci, claim in enumerate(self.claims)]

    def prepare(self) -> None:
        """The claims' requests validated (errors that do not depend on the node's devices,
        except All mode's)."""
        for ci, claim in enumerate(self.claims):
            self._prepare(ci, claim)

    def _prepare(self, ci: int, claim: Mapping) -> None:
        devices = claim["spec"].get("devices") or {}
        min_devices = 0
        for ri, request in enumerate(devices.get("requests") or []):
            subs = request.get("firstAvailable") or []
            exact = request.get("exactly") or {}
            if not self.alloc.features.prioritized_list and subs:
                raise AllocatorError(f"claim {kobj(claim)}, request {request['name']}: has subrequests, "
                                     "but the DRAPrioritizedList feature is disabled")
            if exact.get("capacity") is not None or any(s.get("capacity") is not None for s in subs):
                raise AllocatorError(f"claim {kobj(claim)}, request {request['name']}: has capacity "
                                     "requests, but the DRAConsumableCapacity feature is disabled")
            if subs:
                fewest: int | None = None
                key = (ci, ri, 0)
                for si, sub in enumerate(subs):
                    req = Request(sub["name"], sub, parent=request["name"])
                    validate_request(self, req, request, key, claim)     # upstream's key lags one
                    key = (ci, ri, si)
                    self.requests[key] = req
                    fewest = req.num_devices if fewest is None else min(fewest, req.num_devices)
                min_devices += fewest or 0
            else:
                req = Request(request["name"], exact)
                validate_request(self, req, None, (ci, ri, 0), claim)
                self.requests[(ci, ri, 0)] = req
                min_devices += req.num_devices
        if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
            raise AllocatorError(f"claim {kobj(claim)}: number of requested devices {min_devices} exceeds "
                                 f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
        self.constraints.append(make_constraints(claim))

    # -- allocateOne
    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationTimedOut
        if ci >= len(self.claims):
            return True
        requests = (self.claims[ci]["spec"].get("devices") or {}).get("requests") or []
        if ri >= len(requests):
            try:
                return self._one(ci + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        req = self.requests[(ci, ri, si)]
        if not in_sub and req.parent:
            return self._subrequests(ci, ri, di)
        if req.spec.get("allocationMode", "ExactCount") == "All" and not req.all_devices:
            return False
        if di >= req.num_devices:
            return self._one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + req.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded
        if req.spec.get("allocationMode", "ExactCount") == "All":
            pool, s, index = req.all_devices[di]
            undo = self._allocate_device(ci, ri, si, req, pool, s, index, must=True)
            if undo is None:
                return False
            try:
                # upstream continues with subrequest index 0 here, whichever subrequest this is
                done = self._one(ci, ri, 0, di + 1, in_sub)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        return self._candidates(ci, ri, si, di, in_sub, req)

    def _subrequests(self, ci: int, ri: int, di: int) -> bool:
        all_exceeded = True
        si = 0
        while (ci, ri, si) in self.requests:
            try:
                done = self._one(ci, ri, si, di, True)
            except _MaxSizeExceeded:
                si += 1
                continue
            all_exceeded = False
            if done:
                self.requests[(ci, ri, 0)].selected = si
                return True
            si += 1
        if all_exceeded:
            raise _MaxSizeExceeded
        return False

    def _candidates(self, ci, ri, si, di, in_sub, req) -> bool:
        for pool in self.pools:
            if pool.invalid:
                raise AllocatorError(f"pool {pool.name} is invalid: {pool.invalid_reason}")
            for s in pool.slices:
                for index, dev in enumerate(s["spec"].get("devices") or []):
                    did = (pool.driver, pool.name, dev["name"])
                    if req.admin and ci in self.allocating.get(did, ()):
                        continue
                    if not req.admin and self._in_use(did):
                        continue
                    if not self.selectable((ci, ri, si), req, s, index):
                        continue
                    undo = self._allocate_device(ci, ri, si, req, pool, s, index, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._one(ci, ri, si, di + 1, in_sub)
                    except BaseException:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _in_use(self, did: tuple) -> bool:
        return did in self.alloc.allocated or bool(self.allocating.get(did))

    # -- isSelectable
    def selectable(self, key: tuple, req: Request, s: Mapping, index: int) -> bool:
        dev = s["spec"]["devices"][index]
        if dev.get("bindingConditions"):
            return False            # DRADeviceBindingConditions is off
        did = (s["spec"]["driver"], s["spec"]["pool"]["name"], dev["name"])
        mkey = (did, key)
        hit = self.matched.get(mkey)
        if hit is not None:
            return hit
        cls = req.class_
        assert cls is not None          # set by validate_request before any device is matched
        ok = self._selectors(cls, None, s, index, (cls.get("spec") or {}).get("selectors") or []) and \
            self._selectors(None, key[0], s, index, req.spec.get("selectors") or [])
        self.matched[mkey] = ok
        return ok

    def _selectors(self, cls, ci, s, index, selectors) -> bool:
        for i, sel in enumerate(selectors):
            expression = sel["cel"]["expression"]
            where = f"class {cls['metadata']['name']}" if cls is not None else f"claim {kobj(self.claims[ci])}"
            try:
                if not self.alloc.cel.matches(expression, s, index):
                    return False
            except CELCompileError as err:
                raise AllocatorError(f"{where}: selector #{i}: CEL compile error: {err}") from None
            except CELRuntimeError as err:
                raise AllocatorError(f"{where}: selector #{i}: CEL runtime error: {err}") from None
        return True

    # -- allocateDevice
    def _allocate_device(self, ci, ri, si, req, pool, s, index, must: bool):
        """Takes the device for the request if it is free and the constraints hold; returns
        the function that gives it back, or None."""
        dev = s["spec"]["devices"][index]
        did = (pool.driver, pool.name, dev["name"])
        if req.admin and ci in self.allocating.get(did, ()):
            return None
        if not req.admin and self._in_use(did):
            return None
        if dev.get("consumesCounters"):
            return None             # DRAPartitionableDevices is off
        base, sub = (req.parent, req.name) if req.parent else (req.name, "")
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, dev, pool.driver):
                if must:
                    raise AllocatorError(f"claim {kobj(self.claims[ci])}, request {req.name}: cannot add device "
                                         f"{'/'.join(did)} because a claim constraint would not be satisfied")
                for c2 in constraints[:i]:
                    c2.remove(base, sub)
                return None
        self.allocating.setdefault(did, set()).add(ci)
        name = f"{req.parent}/{req.name}" if req.parent else req.name
        self.results[ci].append(_Picked(name, pool.driver, pool.name, dev["name"], req.admin, s, dev))
        size = len(self.results[ci]) - 1

        def undo():
            for c in constraints:
                c.remove(base, sub)
            self.allocating[did].discard(ci)
            del self.results[ci][size:]
        return undo
