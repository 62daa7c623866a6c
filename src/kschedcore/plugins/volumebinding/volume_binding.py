"""VolumeBinding (plugins/volumebinding): bound claims' PV node affinity, PVs found for
WaitForFirstConsumer claims, provisioning topology and capacity; Reserve binds (semantics §3.7).

Filter is computed for every node at once: claim by claim, PV by PV, with NumPy masks over the
node rows (FindPodVolumes' per-node loop turned inside out). Its Score is off (it needs the
StorageCapacityScoring gate, off in v1.34), so PreScore always skips.
"""
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._native import F_VOLUME_BINDING, VOLUME_UU
from ...errors import UnsupportedError, ValidationError
from ...framework.cluster_events import ActionType as A, EventResource as R, with_hint
from ...framework.interface import PreFilterRejection
from ...objects.storage import NOT_SUPPORTED_PROVISIONER, SELECTED_NODE_ANNOTATION, owner_uid
from ..helper.node_masks import label_selector_mask, requirement_mask, terms_mask
from ..helper.volume import VolumePlugin

REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
NODE_CONFLICT, BIND_CONFLICT, NOT_ENOUGH_SPACE, PV_NOT_EXIST = 1, 2, 4, 8
REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass
class Bindings:
    """What Reserve does on the chosen node: per claim, the PV matched on each row (-1: none)
    and the rows where the claim is to be provisioned."""
    pod: str
    version: int
    matched: list        # [(claim, [PersistentVolume], int32 per row)]
    provisioned: list    # [(claim, bool per row)]


class VolumeBinding(VolumePlugin):
    name = "VolumeBinding"
    filter_id = F_VOLUME_BINDING
    bit_reasons = {NODE_CONFLICT: REASON_NODE_CONFLICT, BIND_CONFLICT: REASON_BIND_CONFLICT,
                   NOT_ENOUGH_SPACE: REASON_NOT_ENOUGH_SPACE, PV_NOT_EXIST: REASON_PV_NOT_EXIST}

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.last: Any = None      # Bindings of the last cycle
        timeout = self.args.get("bindTimeoutSeconds", 600)   # PreBind's wait: no effect here
        if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 0:
            raise ValidationError("VolumeBindingArgs", "bindTimeoutSeconds",
                                  f"invalid BindTimeoutSeconds, should not be a negative value, got {timeout!r}")
        if self.args.get("shape") is not None:
            raise ValidationError("VolumeBindingArgs", "shape", "unexpected field `shape`, remove it or turn on "
                                  "the feature gate StorageCapacityScoring")

    def prefilter(self, pod, volumes, table):
        self.skipped, self.last = True, None
        claims = self._claims(pod, volumes)
        if not claims:
            return None
        self.skipped = False
        bound, delayed = [], []
        for c in claims:          # GetPodVolumeClaims
            if c.fully_bound:
                bound.append(c)
                continue
            cls = volumes.objects.classes.get(c.storage_class) if c.storage_class else None
            if cls is None or cls.binding_mode != "WaitForFirstConsumer" or c.volume_name:
                raise PreFilterRejection(self.name, REASON_UNBOUND_IMMEDIATE)
            delayed.append(c)
        if not delayed and all(_anywhere(c, volumes) for c in bound):
            return None              # every node passes: no array to build
        n = table.labels.shape[0]
        status = np.zeros(n, np.int8)
        _check_bound(bound, volumes, table, status)
        if delayed:
            self.last = Bindings(pod.key, volumes.version, [], [])
            self._check_delayed(delayed, volumes, table, status)
        if not status.any():
            return None
        status[status != 0] |= VOLUME_UU
        return status

    def passes_everywhere(self, pod, cache, run=None) -> bool:
        """Every claim is fully bound to an existing PV that fits every node: nothing to match,
        provision or reserve (placing the pod changes no claim)."""
        volumes = cache.volumes
        for v in pod.volumes:
            if not v.claim:
                continue
            c = None if v.ephemeral else volumes.claim(pod.namespace, v.claim)
            if (c is None or c.phase == "Lost" or c.terminating or not c.fully_bound
                    or not _anywhere(c, volumes)):
                return False
        return True

    def _claims(self, pod, volumes) -> list:
        """podHasPVCs: the pod's claims, each of which must exist and be usable."""
        out = []
        for v in pod.volumes:
            if not v.claim:
                continue
            c = volumes.claim(pod.namespace, v.claim)
            if c is None:
                raise PreFilterRejection(self.name, (
                    f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{v.claim}"'
                    if v.ephemeral else f'persistentvolumeclaim "{v.claim}" not found'))
            if c.phase == "Lost":
                raise PreFilterRejection(self.name, f'persistentvolumeclaim "{c.name}" bound to non-existent '
                                                    f'persistentvolume "{c.volume_name}"')
            if c.terminating:
                raise PreFilterRejection(self.name, f'persistentvolumeclaim "{c.name}" is being deleted')
            if v.ephemeral and c.controller_uid != owner_uid(pod):
                raise PreFilterRejection(self.name, f"PVC {c.key} was not created for pod {pod.key} (pod is not owner)")
            out.append(c)
        return out

    def _check_delayed(self, delayed, volumes, table, status):
        """FindPodVolumes for WaitForFirstConsumer claims: a claim already given a node only
        fits there; the others take a matching PV, else must be provisionable."""
        n = status.shape[0]
        pending = np.ones(n, bool)           # rows still being examined
        selected, to_match = [], []
        for c in delayed:
            node = c.annotations.get(SELECTED_NODE_ANNOTATION)
            if node is None:
                to_match.append(c)
                continue
            elsewhere = np.ones(n, bool)
            row = table.row_of.get(node)
            if row is not None:
                elsewhere[row] = False
            status[pending & elsewhere] |= BIND_CONFLICT
            pending &= ~elsewhere
            selected.append((c, np.ones(n, bool)))
        unmatched = []
        chosen: dict = {}                    # PV name -> rows where an earlier claim took it
        for c in sorted(to_match, key=lambda c: c.request_nanos):     # byPVCSize (stable here)
            pvs = volumes.candidate_volumes(c)
            match = _find_matching(c, pvs, chosen, table)
            for i in np.unique(match[match >= 0]):
                name = pvs[i].name
                chosen[name] = chosen.get(name, np.zeros(n, bool)) | (match == i)
            self.last.matched.append((c, pvs, match))
            unmatched.append((c, match < 0))
        provision = selected + [(c, rows) for c, rows in unmatched if rows.any()]
        for c, need in provision:            # checkVolumeProvisions: the first failure decides
            rows = pending & need
            if not rows.any():
                continue
            bind_fail, space_fail = _provisioning(c, volumes, table)
            status[rows & bind_fail] |= BIND_CONFLICT
            status[rows & space_fail] |= NOT_ENOUGH_SPACE
            pending &= ~(need & (bind_fail | space_fail))
            self.last.provisioned.append((c, need))

    def events_to_register(self):
        return [with_hint(R.StorageClass, A.Add | A.Update), with_hint(R.PersistentVolumeClaim, A.Add | A.Update),
                with_hint(R.PersistentVolume, A.Add | A.Update), with_hint(R.Node, A.Add | A.UpdateNodeLabel),
                with_hint(R.CSINode, A.Add | A.Update), with_hint(R.CSIDriver, A.Update),
                with_hint(R.CSIStorageCapacity, A.Add | A.Update)]

    def reserve(self, pod, row, node_name, cache):
        """Reserve + PreBind on the chosen node, as the API holds them once binding is done."""
        volumes = cache.volumes
        b = self.last
        if b is None or b.pod != pod.key or b.version != volumes.version:
            return
        self.last = None
        for claim, pvs, match in b.matched:
            if match[row] >= 0:
                volumes.bind_claim(claim, pvs[match[row]])
        for claim, need in b.provisioned:
            if need[row] and not claim.volume_name:
                volumes.select_node(claim, node_name)


def _anywhere(claim, volumes) -> bool:
    """The bound claim's PV exists and fits every node (_fits_anywhere)."""
    pv = volumes.objects.volumes.get(claim.volume_name)
    return pv is not None and _fits_anywhere(pv, volumes)


def _fits_anywhere(pv, volumes) -> bool:
    """The PV has no node affinity, nor one where a node sees it translated to CSI."""
    return pv.node_affinity is None and (
        pv.csi_affinity is None or not pv.in_tree or volumes.migrated_rows(pv.in_tree) is None)


def _check_bound(bound, volumes, table, status):
    """checkBoundClaims: the first claim whose PV is missing or does not fit decides."""
    open_rows = np.ones(status.shape[0], bool)
    for c in bound:
        pv = volumes.objects.volumes.get(c.volume_name)
        if pv is None:
            status[open_rows] |= PV_NOT_EXIST
            return
        fits = _bound_fits(pv, table, volumes)
        if fits is None:
            continue
        misfit = open_rows & ~fits
        status[misfit] |= NODE_CONFLICT
        open_rows &= ~misfit


def _bound_fits(pv, table, volumes):
    """CheckNodeAffinity of a bound claim's PV per row (None: every row), where a node whose
    CSINode lists the PV's in-tree plugin as migrated sees it translated to CSI
    (tryTranslatePVToCSI: its zone key becomes the CSI driver's)."""
    if _fits_anywhere(pv, volumes):
        return None
    rows = volumes.migrated_rows(pv.in_tree) if pv.in_tree else None
    if rows is None:
        return _fits(pv, table)
    if isinstance(pv.csi_affinity, str):
        raise UnsupportedError(f"persistentvolume {pv.name}", "spec",
                               f"{pv.csi_affinity}: VolumeBinding's Filter fails with an error on the nodes "
                               f"whose CSINode lists {pv.in_tree} as migrated (not implemented)")
    n = table.labels.shape[0]
    translated = (np.ones(n, bool) if pv.csi_affinity is None
                  else terms_mask(pv.csi_affinity, table, node_names=False))
    return np.where(rows, translated, _fits(pv, table))


def _fits(pv, table) -> np.ndarray:
    """CheckNodeAffinity of a PV on every row, cached on the PV until a node changes."""
    key = (table.node_version, table.labels.shape[0])
    cached = pv.fits
    if cached is None or cached[0] != key:
        n = table.labels.shape[0]
        mask = np.ones(n, bool) if pv.node_affinity is None else terms_mask(pv.node_affinity, table,
                                                                            node_names=False)
        cached = pv.fits = (key, mask)
    return cached[1]


def _find_matching(claim, pvs, chosen, table) -> np.ndarray:
    """FindMatchingVolume on every row: index into `pvs` of the PV pre-bound to the claim or
    the smallest available match (ties: the first by name), -1 for none."""
    n = table.labels.shape[0]
    match = np.full(n, -1, np.int32)
    best = np.full(n, np.iinfo(np.int64).max, np.int64)
    decided = np.zeros(n, bool)            # a pre-bound PV was met: its answer is final
    sizes = sorted({pv.capacity_nanos for pv in pvs})
    rank = {s: i for i, s in enumerate(sizes)}
    for i, pv in enumerate(pvs):
        if pv.claim_ref is not None and not pv.bound_to(claim):
            continue
        if (pv.capacity_nanos < claim.request_nanos or pv.volume_mode != claim.volume_mode
                or pv.attributes_class != claim.attributes_class or pv.terminating):
            continue
        fits = _fits(pv, table)
        open_rows = ~decided
        if pv.name in chosen:
            open_rows &= ~chosen[pv.name]
        if pv.bound_to(claim):
            match[open_rows] = np.where(fits[open_rows], i, -1)
            decided |= open_rows
            continue
        if pv.phase != "Available" or (claim.selector is not None and not claim.selector.matches(pv.labels)):
            continue
        if not set(claim.access_modes) <= set(pv.access_modes):
            continue
        better = open_rows & fits & (rank[pv.capacity_nanos] < best)
        match[better] = i
        best[better] = rank[pv.capacity_nanos]
    return match


def _provisioning(claim, volumes, table):
    """(rows where the claim cannot be provisioned, rows lacking capacity for it)."""
    n = table.labels.shape[0]
    cls = volumes.objects.classes[claim.storage_class]
    if not cls.provisioner or cls.provisioner == NOT_SUPPORTED_PROVISIONER:
        return np.ones(n, bool), np.zeros(n, bool)
    bind_fail = ~_allowed_topologies(cls.allowed_topologies, table)
    driver = volumes.objects.csi_drivers.get(cls.provisioner)
    if not claim.has_request or driver is None or not driver.storage_capacity:
        return bind_fail, np.zeros(n, bool)
    enough = np.zeros(n, bool)
    for cap in volumes.objects.capacities:
        if cap.storage_class == cls.name and cap.limit_bytes is not None and cap.limit_bytes >= claim.request_bytes:
            enough |= label_selector_mask(cap.node_topology, table)
    return bind_fail, ~bind_fail & ~enough


def _allowed_topologies(terms, table) -> np.ndarray:
    """MatchTopologySelectorTerms: no terms allow every node; an empty term allows none."""
    n = table.labels.shape[0]
    if not terms:
        return np.ones(n, bool)
    out = np.zeros(n, bool)
    for term in terms:
        if not term or any(not values for _, values in term):
            continue
        m = np.ones(n, bool)
        for key, values in term:
            m &= requirement_mask(table, key, "In", tuple(values))
        out |= m
    return out
