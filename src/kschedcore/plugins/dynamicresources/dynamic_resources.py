"""DynamicResources (plugins/dynamicresources), as kube-scheduler v1.34.1 with its default
feature gates: PreEnqueue (the pod's claims exist), PreFilter (claims gathered, allocated
claims' node selectors, the structured allocator made), Filter (per node row, handed to the
kernel as a per-row status the way the volume plugins do: the last in-tree Filter, so only
nodes that pass every other Filter count its verdict), PostFilter (deallocating a claim only
this pod uses), Reserve + PreBind (the allocation and the reservation written to the claim).

Every status but an allocator error is UnschedulableAndUnresolvable (upstream's
statusUnschedulable): preemption passes over the nodes it rejects. Not done here, refused
nowhere because they cannot arise: extended resources backed by DRA (alpha gate, off) and
device binding conditions (alpha, off). DRASchedulerFilterTimeout's 10 s per node is not
enforced (an allocation that long depends on upstream's own speed)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..._native import F_DYNAMIC_RESOURCES, VOLUME_UU
from ...backend.cache.dra import ClaimLookupError
from ...dra.allocator import Allocator, AllocatorError, Features, SelectorCache, spec_memo
from ...dra.pools import selector_matches
from ...errors import StateError
from ...framework.cluster_events import ActionType as A, EventResource as R, Queue, QueueSkip, with_hint
from ...framework.interface import Error, PreFilterRejection, Unschedulable
from ...framework.kernel_plugin import KernelPlugin
from .device_index import DeviceIndex

NO_CLAIMS = "no new claims to deallocate"
STILL_NOT_SCHEDULABLE = "still not schedulable"
DEALLOCATED = "deallocation of ResourceClaim completed"
#: its PostFilter after its PreFilter never ran (an earlier in-tree PreFilter ended the cycle)
NOT_FOUND = "not found"
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"
#: a row's status detail
ALLOCATE_FAILS, UNAVAILABLE, FILTER_ERROR = 1, 2, 3
RESERVED_FOR_MAX = 256


class DynamicResources(KernelPlugin):
    name = "DynamicResources"
    filter_id = F_DYNAMIC_RESOURCES
    dynamic = True
    applies_when = "resource_claims"
    in_tree_post_filter = True      # post_filter gets the failed Cycle, not a statuses map
    ERROR_DETAIL = FILTER_ERROR     # the rows where Filter returns `filter_error`
    FAILS_STATUS = ALLOCATE_FAILS | VOLUME_UU       # a row's status where the claims cannot be allocated

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.features = Features()
        self.cel = SelectorCache()
        self.filter_error = ""
        self.last: Any = None       # _CycleClaims of the last cycle of a pod with claims
        self.index = DeviceIndex()
        self._alloc: Any = None
        self._alloc_key: Any = None
        self._needs: dict = {}

    def reasons(self, detail: int, table) -> list:
        return [{ALLOCATE_FAILS: CANNOT_ALLOCATE, UNAVAILABLE: NOT_AVAILABLE}.get(detail, self.filter_error)]

    def prefilter_skips(self, pod) -> bool:
        return self.last is None or self.last.pod is not pod or not self.last.claims

    # ---- PreEnqueue --------------------------------------------------------------------------------
    def pre_enqueue(self, pod) -> str | None:
        """The pod waits until each of its claims exists (and is its own, for a template's)."""
        if not pod.resource_claims or self.handle is None:
            return None
        try:
            self.handle.cache.dra.pod_claims(pod)
        except ClaimLookupError as e:
            return str(e)
        return None

    # ---- PreFilter + Filter ------------------------------------------------------------------------
    def pre_filter(self, cycle):
        pod, kernel, cache = cycle.pod, cycle.framework.kernel, cycle.cache
        last = self.last
        if cycle.what_if and last is not None and last.pod is pod and last.status is not None:
            # preemption's dry runs keep the cycle's state: the same allocator, the same verdicts
            kernel.set_volume_status(self.filter_id, last.status)
            cycle.acted(self.name, True, False)
            return
        self.armed = True
        self.filter_error = ""
        self.last = None
        kernel.set_volume_status(self.filter_id, None)
        if pod.resource_claims:
            self.last = _CycleClaims(pod, [])        # a rejection below leaves no claims
            try:
                claims = cache.dra.pod_claims(pod)
            except ClaimLookupError as e:
                raise PreFilterRejection(self.name, str(e)) from None
            self._check_claims(pod, claims, cache.dra)
            self.last.claims = claims
        if self.last is None or not self.last.claims:
            self.armed = False
            return
        status = self.last.status = self._statuses(cache)
        kernel.set_volume_status(self.filter_id, status)
        cycle.acted(self.name, True, False)

    def _check_claims(self, pod, claims, dra):
        for claim in claims:
            alloc, reserved = claim.allocation, claim.reserved_for
            if alloc is not None:
                if len(reserved) >= RESERVED_FOR_MAX and not any(uid == pod.uid for _, _, uid in reserved):
                    raise PreFilterRejection(self.name, "resourceclaim in use")
                continue
            for request in (claim.v1.get("spec") or {}).get("devices", {}).get("requests") or ():
                if request.get("exactly") is not None:
                    self._check_class(dra, request["exactly"].get("deviceClassName"), request["name"])
                else:
                    for sub in request.get("firstAvailable") or ():
                        self._check_class(dra, sub.get("deviceClassName"), f"{request['name']}/{sub['name']}")

    def _check_class(self, dra, class_name, request_name):
        if class_name not in dra.classes:
            raise PreFilterRejection(self.name, f"request {request_name}: device class {class_name} does not exist")

    def _statuses(self, cache) -> np.ndarray:
        """Filter on every node row: the claims still to allocate, decided by counting free
        devices where that is exact (DeviceIndex) and by the allocator elsewhere; then, on
        the rows that pass, the allocated claims' node selectors."""
        table, dra, last = cache.table, cache.dra, self.last
        to_allocate = [c.v1 for c in last.claims if c.allocation is None]
        status = np.zeros(table.labels.shape[0], np.int8)
        if to_allocate:
            allocator = last.allocator = self._allocator(dra)
            last.to_allocate = to_allocate
            undecided = self._count_devices(table, dra, allocator, to_allocate, status)
            for row in (range(len(table.nodes)) if undecided is None else undecided):
                node = table.nodes[row]
                if node is None or status[row] != 0:
                    continue
                try:
                    results = allocator.allocate(node.raw, to_allocate)
                except AllocatorError as e:
                    status[row] = FILTER_ERROR | VOLUME_UU
                    self.filter_error = self.filter_error or f'running "{self.name}" filter plugin: {e}'
                    continue
                if results is None:
                    status[row] = self.FAILS_STATUS
                    continue
                last.results[row] = results
        self._unavailable(table, last, status)
        return status

    def _allocator(self, dra) -> Allocator:
        """One allocator per state of the classes and slices; the devices in use are a live view."""
        if self._alloc_key != (id(dra), dra.version):
            self._alloc = Allocator(self.features, dra.allocated_devices(), dra.class_dicts(), dra.slice_dicts(),
                                    self.cel)
            self._alloc_key = (id(dra), dra.version)
            self._needs = {}
        return self._alloc

    def _count_devices(self, table, dra, allocator, claims, status):
        """Rows decided by counting free devices: those that cannot fit get ALLOCATE_FAILS;
        returns the rows left to the allocator (None: every row)."""
        counted = self._counted(claims, dra, table, allocator)
        if counted is None:
            return None
        n, kinds = len(table.nodes), counted[1]
        if len(kinds) == 1:         # one kind of request: enough free devices is enough
            kind, count = kinds[0]
            self.last.kind = kind
            if kind.all_decided:
                status[:n] = kind.short_rows(count, self.FAILS_STATUS)
                return ()
            status[:n][kind.decided() & (kind.free_count < count)] = self.FAILS_STATUS
            return kind.undecided()
        fits, decided = np.ones(n, bool), self.index.row_ok.copy()
        for kind, count in kinds:
            fits &= kind.free_count >= count
            decided &= kind.decided()
        status[:n][decided & ~fits] = self.FAILS_STATUS
        return np.flatnonzero(~decided | fits).tolist()     # several: the allocator matches them

    def _counted(self, claims, dra, table, allocator) -> tuple[list, list] | None:
        """(the claims' specs, their (RequestKind, devices asked) over the DeviceIndex, made
        current) where counting free devices decides their Filter, else None."""
        entry = self._need(claims, dra, allocator)
        index = self.index
        if entry[1] is None or not index.refresh(dra, table, self.cel):
            return None
        if entry[2] is not index.kinds:     # the request kinds, found again once the index is made anew
            entry[3] = [(index.kind(dra.classes[cls].v1, selectors), count)
                        for (cls, selectors), count in entry[1].items()]
            entry[2] = index.kinds
        return entry[0], entry[3]

    def _need(self, claims, dra, allocator) -> list:
        """[claim specs, _exact_counts of the claims if the allocator's checks pass (else None:
        not decided by counting), the DeviceIndex's kinds and those kinds with their counts, as
        _counted found them], kept per claim spec: claims from one template share theirs."""
        key, specs, hit = spec_memo(self._needs, claims)
        if hit is None:
            need = _exact_counts(claims, dra)
            if need is not None:
                try:
                    allocator.check(claims)
                except AllocatorError:
                    need = None             # every row's allocator call says it
            hit = self._needs[key] = [specs, need, None, None]
        return hit

    def _unavailable(self, table, last, status) -> None:
        """Rows that passed, outside an allocated claim's node selector: UNAVAILABLE, with
        those claims."""
        for i, claim in enumerate(last.claims):
            selector = claim.allocation.get("nodeSelector") if claim.allocation is not None else None
            if selector is None:
                continue
            name = _single_node(selector)
            if name is not None:        # node-local: every row but that node's (free rows too)
                outside = np.ones(len(table.nodes), bool)
                if name in table.row_of:
                    outside[table.row_of[name]] = False
                outside[table.free_rows] = False
                rows = np.flatnonzero(outside).tolist()
            else:
                rows = [row for row, node in enumerate(table.nodes)
                        if node is not None and not selector_matches(selector, node.raw)]
            for row in rows:
                if status[row] == 0 or row in last.unavailable:
                    last.unavailable.setdefault(row, []).append(i)
                    status[row] = UNAVAILABLE | VOLUME_UU

    # ---- PostFilter --------------------------------------------------------------------------------
    def post_filter(self, state, pod, cycle):
        rejection = cycle.rejection
        if rejection is not None and rejection.in_tree and rejection.plugin != self.name:
            return Error(NOT_FOUND)       # reading its PreFilter's state fails
        last = self.last
        if last is None or last.pod is not pod or not last.claims:
            return _NO_CLAIMS
        dra = cycle.cache.dra
        for index in sorted(self._unavailable_claims(cycle)):
            claim = dra.claims.get(last.claims[index].key)
            if claim is None:
                continue
            reserved = claim.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0][2] == pod.uid):
                dra.deallocate(claim)
                return Unschedulable(DEALLOCATED)
        return Unschedulable(STILL_NOT_SCHEDULABLE)

    def _unavailable_claims(self, cycle) -> set:
        """The claims whose allocation did not fit a node the Filter reached."""
        if self.last.unavailable and cycle.rejection is None:
            k = cycle.framework.kernel
            rows = cycle.examined_rows()
            hit = rows[(np.asarray(k.st_plugin)[rows] == self.filter_id) & (np.asarray(k.st_detail)[rows] == UNAVAILABLE)]
            return {i for row in hit.tolist() for i in self.last.unavailable.get(row, ())}
        return set()

    def settles(self, pod, below):
        return not pod.resource_claims

    def settled(self, pod, below, unschedulable, n_all):
        """post_filter's answer after a cycle no PreFilter rejected, for a pod without claims."""
        return _NO_CLAIMS

    # ---- Reserve + PreBind ---------------------------------------------------------------------------
    def reserve(self, pod, row, node_name, cache):
        """Reserve + PreBind on the chosen node: each claim allocated (devices now in use for
        the next pods, as the assume cache makes them) and reserved for the pod."""
        last, self.last = self.last, None
        if last is None or last.pod is not pod:
            return
        dra = cache.dra
        found = last.results.get(row)
        if found is None and last.to_allocate:     # a row decided by counting: allocated now
            found = last.allocator.allocate_in_order(cache.table.nodes[row].raw, last.to_allocate,
                                                     last.kind.takeable(row))
        results = iter(found or ())
        for claim in last.claims:
            current = dra.claims.get(claim.key, claim)
            dra.bind(pod, current, next(results) if claim.allocation is None else None)

    # ---- runs of copies (scheduler/claim_runs.py) ---------------------------------------------------
    def copy_claims(self, pod, dra, plan: CopiesPlan | None = None) -> list | None:
        """The claims of `pod`, a copy in a run, when its PreFilter would find them as the
        run's first copy's: each one there (and its own, for a template's: pod_claims), none
        allocated or reserved, their specs the very ones of `plan` (None: the first copy).
        Else None. (The run keeps a claim that two copies name out: claim_runs.py.)"""
        try:
            claims = dra.pod_claims(pod)
        except ClaimLookupError:
            return None
        if not claims or any(c.allocation is not None or c.reserved_for for c in claims):
            return None
        if plan is not None and not (len(claims) == len(plan.specs)
                                     and all(c.v1.get("spec") is s for c, s in zip(claims, plan.specs))):
            return None
        return claims

    def copies_plan(self, claims, cache, kernel) -> CopiesPlan | None:
        """For copies whose claims are like `claims` (copy_claims'): where counting decides every
        row for one kind of request, the Filter's status per row as the next copy's PreFilter
        would make it now, handed to the kernel, and the plan (each row's budget: how many
        copies its free devices take). None where a copy needs its own cycle."""
        dra, table = cache.dra, cache.table
        allocator = self._allocator(dra)
        counted = self._counted([c.v1 for c in claims], dra, table, allocator)
        if counted is None:
            return None
        specs, kinds = counted
        if len(kinds) != 1 or not kinds[0][0].all_decided or kinds[0][1] < 1:
            return None
        kind, count = kinds[0]
        n, rows = len(table.nodes), table.labels.shape[0]
        status = np.zeros(rows, np.int8)
        status[:n] = kind.short_rows(count, self.FAILS_STATUS)
        budget = np.zeros(rows, np.int32)
        budget[:n] = kind.free_count // count
        kernel.set_volume_status(self.filter_id, status)
        return CopiesPlan(specs, allocator, kind, budget)

    def reserve_copy(self, pod, claims, row, cache, plan: CopiesPlan) -> None:
        """reserve() for a copy of a run the kernel placed on `row` (a row decided by counting):
        its claims allocated from the row's free devices, the copies before it counted."""
        dra = cache.dra
        self.index.refresh(dra, cache.table, self.cel)
        found = plan.allocator.allocate_in_order(cache.table.nodes[row].raw, [c.v1 for c in claims],
                                                 plan.kind.takeable(row))
        if found is None:
            raise StateError(f"pod {pod.key}", "spec.resourceClaims", "a copy's claims did not fit the devices "
                             "counted free on its node")
        for claim, result in zip(claims, found):
            dra.bind(pod, dra.claims.get(claim.key, claim), result)

    def after_claim_change(self, pod, old, new):
        """isSchedulableAfterClaimChange: a deallocation retries every pod; otherwise only a
        pod whose claims all exist and include this one, for a new claim or a new status."""
        if self.handle is None:
            return Queue
        try:
            uses = any(c.key == new.key for c in self.handle.cache.dra.pod_claims(pod))
        except ClaimLookupError:
            return QueueSkip
        if old is not None and old.allocation is not None and new.allocation is None:
            return Queue
        if not uses:
            return QueueSkip
        if old is None:
            return Queue
        return QueueSkip if old.v1.get("status") == new.v1.get("status") else Queue

    def events_to_register(self):
        return [with_hint(R.Node, A.Add | A.UpdateNodeLabel | A.UpdateNodeAllocatable),
                with_hint(R.ResourceClaim, A.Add | A.Update, self.after_claim_change),
                with_hint(R.Pod, A.UpdatePodGeneratedResourceClaim),
                with_hint(R.DeviceClass, A.Add | A.Update), with_hint(R.ResourceSlice, A.Add | A.Update)]


def _exact_counts(claims, dra) -> dict | None:
    """(class, request selectors) -> devices asked, when every request is an ExactCount of an
    existing class without admin access and no claim has a constraint; else None."""
    need: dict = {}
    for claim in claims:
        devices = (claim.get("spec") or {}).get("devices") or {}
        if devices.get("constraints"):
            return None
        for r in devices.get("requests") or ():
            exact = r.get("exactly")
            if exact is None or exact.get("allocationMode", "ExactCount") != "ExactCount" or exact.get("adminAccess") \
                    or exact.get("capacity") is not None or exact.get("deviceClassName") not in dra.classes:
                return None
            try:
                selectors = tuple(sel["cel"]["expression"] for sel in exact.get("selectors") or ())
            except (KeyError, TypeError):
                return None                 # the allocator's error says which
            key = (exact["deviceClassName"], selectors)
            need[key] = need.get(key, 0) + int(exact.get("count", 1))
    return need


def _single_node(selector) -> str | None:
    """The node a selector names when it is one node's name (a node-local allocation)."""
    terms: list = selector.get("nodeSelectorTerms") or []
    if len(terms) != 1 or terms[0].get("matchExpressions"):
        return None
    fields: list = terms[0].get("matchFields") or []
    if len(fields) != 1 or fields[0].get("key") != "metadata.name" or fields[0].get("operator") != "In" \
            or len(fields[0].get("values") or ()) != 1:
        return None
    return fields[0]["values"][0]


class _CycleClaims:
    """What a cycle of a pod with claims found: its claims, per row the allocation results and
    the claims whose allocation does not fit the node."""

    __slots__ = ("pod", "claims", "results", "unavailable", "status", "allocator", "to_allocate", "kind")

    def __init__(self, pod, claims):
        self.pod, self.claims, self.status = pod, claims, None
        self.allocator, self.to_allocate, self.kind = None, [], None
        self.results: dict[int, list] = {}
        self.unavailable: dict[int, list] = {}


class CopiesPlan:
    """A run of copies with claims (copies_plan): the claims' specs, the allocator, the kind of
    request counting decides, each row's budget (copies its free devices take)."""

    __slots__ = ("specs", "allocator", "kind", "budget")

    def __init__(self, specs, allocator, kind, budget):
        self.specs, self.allocator, self.kind, self.budget = specs, allocator, kind, budget


_NO_CLAIMS = Unschedulable(NO_CLAIMS)
