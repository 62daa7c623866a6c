"""VolumeBinding: PreFilter, Filter and Reserve (semantics §3.7): the pod's claims, PV
matching (FindMatchingVolume), dynamic provisioning checks (allowed topologies, CSI storage
capacity) and the commit of the chosen bindings.

Written from kube-scheduler v1.34.1 plugins/volumebinding (volume_binding.go, binder.go) and
k8s.io/component-helpers/storage/volume (pv_helpers.go).  Plain loops, recomputed for every
pod and node.

Modelling choices shared with the compiled path (they are not upstream behaviour):

* after a cycle places a pod, its bindings are committed as the API holds them after PreBind:
  a static binding sets the PV's claimRef and the PVC's volumeName and
  ``pv.kubernetes.io/bind-completed``; a dynamic provision sets the PVC's
  ``volume.kubernetes.io/selected-node`` (``reserve``);
* FindMatchingVolume walks a class's PVs in name order (``Storage.list_pvs``), so equal
  capacities go to the first name;
* a bound in-tree PV is checked translated to CSI on the nodes whose CSINode lists its plugin
  as migrated (``csi_topology``); where that translation fails, TranslationError is raised (the
  compiled path refuses such a PV there);
* Score is off (StorageCapacityScoring), so PreScore always skips.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

from . import affinity
from .csi_topology import pv_for_node
from .exactqty import exact_quantity
from .interpod import SelectorError, parse_label_selector, pod_namespace, selector_matches
from .names import is_qualified_name, is_valid_label_value
from .plugins import ERROR, UU, PreFilterOutcome, Status
from .storage import (
    WAIT_FOR_FIRST_CONSUMER, Storage, annotations_of, claim_class, claim_request, class_binding_mode, labels_of,
    meta_of, name_of, node_name_of, pod_volumes, pv_capacity, pv_class, pv_phase, spec_of, volume_claim,
    volume_is_for_pod)

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass
class PodVolumeClaims:
    bound: list[dict] = field(default_factory=list)
    delay: list[dict] = field(default_factory=list)          # unboundClaimsDelayBinding
    immediate: list[dict] = field(default_factory=list)      # unboundClaimsImmediate
    unbound_pvs: dict[str, list[dict]] = field(default_factory=dict)   # class -> PVs


@dataclass
class PodVolumes:
    static: list[tuple[dict, dict]]     # (PV, PVC)
    dynamic: list[dict]                 # PVCs to provision


@dataclass
class BindingState:
    claims: PodVolumeClaims
    by_node: dict[str, PodVolumes] = field(default_factory=dict)


def pod_has_pvcs(pod: dict, storage: Storage) -> tuple[bool, str | None]:
    """VolumeBinding.podHasPVCs: (has a claim, error text)."""
    has = False
    for vol in pod_volumes(pod):
        claim = volume_claim(pod, vol)
        if claim is None:
            continue
        name, ephemeral = claim
        has = True
        err: str | None
        pvc, err = storage.get_pvc(pod_namespace(pod), name)
        if pvc is None:
            if ephemeral:
                err = f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
            return has, err
        if (pvc.get("status") or {}).get("phase") == "Lost":
            return has, (f'persistentvolumeclaim "{name_of(pvc)}" bound to non-existent persistentvolume '
                         f'"{spec_of(pvc).get("volumeName") or ""}"')
        if meta_of(pvc).get("deletionTimestamp") is not None:
            return has, f'persistentvolumeclaim "{name_of(pvc)}" is being deleted'
        if ephemeral:
            err = volume_is_for_pod(pod, pvc)
            if err:
                return has, err
    return has, None


def is_pvc_fully_bound(pvc: dict) -> bool:
    return bool(spec_of(pvc).get("volumeName")) and ANN_BIND_COMPLETED in annotations_of(pvc)


def is_volume_bound(pod: dict, vol: dict, storage: Storage) -> tuple[bool, dict | None, str | None]:
    """volumeBinder.isVolumeBound: (bound, claim, error); a non-claim volume is bound."""
    claim = volume_claim(pod, vol)
    if claim is None:
        return True, None, None
    name, ephemeral = claim
    pvc, _ = storage.get_pvc(pod_namespace(pod), name)
    if pvc is None:
        return False, None, f'error getting PVC "{pod_namespace(pod)}/{name}"'
    if ephemeral:
        err = volume_is_for_pod(pod, pvc)
        if err:
            return False, None, err
    return is_pvc_fully_bound(pvc), pvc, None


def is_delay_binding_mode(pvc: dict, storage: Storage) -> bool:
    name = claim_class(pvc)
    sc = storage.classes.get(name) if name else None
    return sc is not None and class_binding_mode(sc) == WAIT_FOR_FIRST_CONSUMER


def get_pod_volume_claims(pod: dict, storage: Storage) -> tuple[PodVolumeClaims | None, str | None]:
    claims = PodVolumeClaims()
    for vol in pod_volumes(pod):
        bound, pvc, err = is_volume_bound(pod, vol, storage)
        if err:
            return None, err
        if pvc is None:
            continue
        if bound:
            claims.bound.append(pvc)
        elif is_delay_binding_mode(pvc, storage) and not spec_of(pvc).get("volumeName"):
            claims.delay.append(pvc)
        else:
            claims.immediate.append(pvc)     # pre-bound claims are immediate too
    for pvc in claims.delay:
        claims.unbound_pvs[claim_class(pvc)] = storage.list_pvs(claim_class(pvc))
    return claims, None


def binding_pre_filter(pod: dict, storage: Storage, state: dict) -> PreFilterOutcome:
    has, err = pod_has_pvcs(pod, storage)
    if err:
        return PreFilterOutcome(status=Status(UU, [err]))
    if not has:
        return PreFilterOutcome(skip=True)
    claims, err = get_pod_volume_claims(pod, storage)
    if err or claims is None:
        return PreFilterOutcome(status=Status(ERROR, [err or ""]))
    if claims.immediate:
        return PreFilterOutcome(status=Status(UU, [REASON_UNBOUND_IMMEDIATE]))
    state["volume_binding"] = BindingState(claims)
    return PreFilterOutcome()


def check_node_affinity(pv: dict, node_labels: dict) -> bool:
    """volume.CheckNodeAffinity against a node made of the labels only (no name: matchFields
    are not checked)."""
    required = (spec_of(pv).get("nodeAffinity") or {}).get("required")
    if required is None:
        return True
    bare = {"metadata": {"labels": node_labels}}
    terms = [affinity.parse_term(t) for t in required.get("nodeSelectorTerms") or [] if not affinity.is_empty_term(t)]
    return any(t.matches(bare) for t in terms)


def check_bound_claims(claims: list[dict], node: dict, storage: Storage) -> tuple[bool, bool]:
    """(bound volumes satisfied, bound PVs found); the first failure stops. A PV is seen
    translated to CSI on a node whose CSINode lists its in-tree plugin (raises
    TranslationError where that fails)."""
    labels = labels_of(node)
    csi_node = storage.csi_nodes.get(name_of(node))
    for pvc in claims:
        pv = storage.pvs.get(spec_of(pvc).get("volumeName") or "")
        if pv is None:
            return True, False
        if not check_node_affinity(pv_for_node(pv, csi_node), labels):
            return False, True
    return True, True


def is_volume_bound_to_claim(pv: dict, pvc: dict) -> bool:
    ref = spec_of(pv).get("claimRef")
    if ref is None:
        return False
    if (ref.get("name") or "", ref.get("namespace") or "") != (name_of(pvc), meta_of(pvc).get("namespace") or "default"):
        return False
    return not ref.get("uid") or ref.get("uid") == (meta_of(pvc).get("uid") or "")


def check_access_modes(pvc: dict, pv: dict) -> bool:
    pv_modes = set(spec_of(pv).get("accessModes") or [])
    return all(mode in pv_modes for mode in spec_of(pvc).get("accessModes") or [])


def find_matching_volume(pvc: dict, pvs: list[dict], node: dict, excluded: set[str]) -> tuple[dict | None, str | None]:
    """volume.FindMatchingVolume on the scheduler path (delayBinding, VolumeAttributesClass on)."""
    requested = claim_request(pvc)
    requested_class = claim_class(pvc)
    selector = None
    if spec_of(pvc).get("selector") is not None:
        try:
            selector = parse_label_selector(spec_of(pvc)["selector"])
        except SelectorError as e:
            return None, f"error creating internal label selector for claim: {e}"
    claim_mode = spec_of(pvc).get("volumeMode") or "Filesystem"
    claim_vac = spec_of(pvc).get("volumeAttributesClassName") or ""
    smallest, smallest_qty = None, None
    for pv in pvs:
        spec = spec_of(pv)
        if name_of(pv) in excluded:
            continue
        if spec.get("claimRef") is not None and not is_volume_bound_to_claim(pv, pvc):
            continue
        qty = pv_capacity(pv)
        if qty < requested:
            continue
        if (spec.get("volumeMode") or "Filesystem") != claim_mode:
            continue
        if (spec.get("volumeAttributesClassName") or "") != claim_vac:
            continue
        if meta_of(pv).get("deletionTimestamp") is not None:
            continue
        affinity_ok = check_node_affinity(pv, labels_of(node))
        if is_volume_bound_to_claim(pv, pvc):
            return (pv if affinity_ok else None), None
        if pv_phase(pv) != "Available":
            continue
        if selector is not None and not selector_matches(selector, labels_of(pv)):
            continue
        if pv_class(pv) != requested_class or not affinity_ok or not check_access_modes(pvc, pv):
            continue
        if smallest is None or smallest_qty > qty:
            smallest, smallest_qty = pv, qty
    return smallest, None


def find_matching_volumes(claims: list[dict], unbound_pvs: dict[str, list[dict]], node: dict):
    """(found matches, static bindings, claims left unbound, error); smallest request first."""
    found = True
    chosen: set[str] = set()
    bindings, unbound = [], []
    for pvc in sorted(claims, key=claim_request):     # stable, as Go's insertion sort for few claims
        pv, err = find_matching_volume(pvc, unbound_pvs.get(claim_class(pvc), []), node, chosen)
        if err:
            return False, [], [], err
        if pv is None:
            unbound.append(pvc)
            found = False
            continue
        chosen.add(name_of(pv))
        bindings.append((pv, pvc))
    return found, bindings, unbound, None


def match_topology_selector_terms(terms: list[dict], labels: dict) -> bool:
    """v1helper.MatchTopologySelectorTerms: ORed terms of In requirements; an empty list
    matches everything, an empty or invalid term nothing."""
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchLabelExpressions") or []
        if not exprs:
            continue
        valid = all(is_qualified_name(e.get("key") or "") and (e.get("values") or [])
                    and all(is_valid_label_value(v) for v in e.get("values") or []) for e in exprs)
        if valid and all((e.get("key") or "") in labels and labels[e.get("key") or ""] in e["values"] for e in exprs):
            return True
    return False


def _quantity_value(text) -> int:
    """resource.Quantity.Value(): rounded up to an integer."""
    return math.ceil(exact_quantity(text))


def capacity_sufficient(capacity: dict, size: int) -> bool:
    limit = capacity.get("maximumVolumeSize")
    if limit is None:
        limit = capacity.get("capacity")
    return limit is not None and _quantity_value(limit) >= size


def node_has_access(node: dict, capacity: dict) -> bool:
    topology = capacity.get("nodeTopology")
    if topology is None:
        return False
    try:
        selector = parse_label_selector(topology)
    except SelectorError:
        return False
    return selector_matches(selector, labels_of(node))


def has_enough_capacity(provisioner: str, pvc: dict, sc: dict, node: dict, storage: Storage) -> bool:
    requests = (spec_of(pvc).get("resources") or {}).get("requests") or {}
    if "storage" not in requests:
        return True
    driver = storage.csi_drivers.get(provisioner)
    if driver is None or not spec_of(driver).get("storageCapacity"):
        return True
    size = _quantity_value(requests["storage"])
    return any(cap.get("storageClassName") == name_of(sc) and capacity_sufficient(cap, size)
               and node_has_access(node, cap) for cap in storage.capacities.values())


def check_volume_provisions(claims: list[dict], node: dict, storage: Storage):
    """(provision satisfied, sufficient storage, claims to provision, error); the first failing
    claim stops."""
    dynamic = []
    for pvc in claims:
        class_name = claim_class(pvc)
        if not class_name:
            return False, False, [], f'no class for claim "{meta_of(pvc).get("namespace")}/{name_of(pvc)}"'
        sc = storage.classes.get(class_name)
        if sc is None:
            return False, False, [], f'failed to find storage class "{class_name}"'
        provisioner = sc.get("provisioner") or ""
        if provisioner in ("", NOT_SUPPORTED_PROVISIONER):
            return False, True, [], None
        if not match_topology_selector_terms(sc.get("allowedTopologies") or [], labels_of(node)):
            return False, True, [], None
        if not has_enough_capacity(provisioner, pvc, sc, node, storage):
            return True, False, [], None
        dynamic.append(pvc)
    return True, True, dynamic, None


def find_pod_volumes(claims: PodVolumeClaims, node: dict, storage: Storage):
    """volumeBinder.FindPodVolumes: (PodVolumes, conflict reasons, error)."""
    unbound_ok = bound_ok = sufficient = pvs_found = True
    static: list = []
    dynamic: list = []

    def done():
        reasons = [reason for ok, reason in ((bound_ok, REASON_NODE_CONFLICT), (unbound_ok, REASON_BIND_CONFLICT),
                                             (sufficient, REASON_NOT_ENOUGH_SPACE), (pvs_found, REASON_PV_NOT_EXIST))
                   if not ok]
        return PodVolumes(static, dynamic), reasons, None

    if claims.bound:
        bound_ok, pvs_found = check_bound_claims(claims.bound, node, storage)
    if claims.delay:
        to_match, to_provision = [], []
        for pvc in claims.delay:
            selected = annotations_of(pvc).get(ANN_SELECTED_NODE)
            if selected is None:
                to_match.append(pvc)
            elif selected != node_name_of(node):
                unbound_ok = False          # fast path: provisioning was started for another node
                return done()
            else:
                to_provision.append(pvc)
        if to_match:
            unbound_ok, static, unbound, err = find_matching_volumes(to_match, claims.unbound_pvs, node)
            if err:
                return None, [], err
            to_provision += unbound
        if to_provision:
            unbound_ok, sufficient, dynamic, err = check_volume_provisions(to_provision, node, storage)
            if err:
                return None, [], err
    return done()


def binding_filter(pod: dict, ni, storage: Storage, state: dict) -> Status | None:
    bs: BindingState = state["volume_binding"]
    pod_vols, reasons, err = find_pod_volumes(bs.claims, ni.node, storage)
    if err:
        return Status(ERROR, [err])
    if reasons:
        return Status(UU, reasons)
    bs.by_node[ni.name] = pod_vols
    return None


def are_pod_volumes_bound(pod: dict, storage: Storage) -> bool:
    return all(is_volume_bound(pod, vol, storage)[0] for vol in pod_volumes(pod))


def reserve(pod: dict, node_name: str, state: dict, storage: Storage) -> None:
    """Reserve (AssumePodVolumes) and PreBind, committed as the API holds them afterwards."""
    bs: BindingState | None = state.get("volume_binding")
    pod_vols = bs.by_node.get(node_name) if bs is not None else None
    if pod_vols is None or are_pod_volumes_bound(pod, storage):
        return
    for pv, pvc in pod_vols.static:
        bind_volume(storage, name_of(pv), pvc)
    for pvc in pod_vols.dynamic:
        updated = copy.deepcopy(storage.pvcs[_claim_key(pvc)])
        updated["metadata"].setdefault("annotations", {})[ANN_SELECTED_NODE] = node_name
        storage.pvcs[_claim_key(pvc)] = updated


def _claim_key(pvc: dict) -> str:
    return f"{meta_of(pvc).get('namespace') or 'default'}/{name_of(pvc)}"


def bind_volume(storage: Storage, pv_name: str, pvc: dict) -> None:
    """GetBindVolumeToClaim on the PV; the PV controller's binding on the claim."""
    pv = copy.deepcopy(storage.pvs[pv_name])
    claim = copy.deepcopy(storage.pvcs[_claim_key(pvc)])
    if not is_volume_bound_to_claim(pv, claim):
        pv["metadata"].setdefault("annotations", {}).setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
    pv.setdefault("spec", {})["claimRef"] = {
        "kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": meta_of(claim).get("namespace") or "default",
        "name": name_of(claim), "uid": meta_of(claim).get("uid") or ""}
    claim.setdefault("spec", {})["volumeName"] = pv_name
    claim["metadata"].setdefault("annotations", {})[ANN_BIND_COMPLETED] = "yes"
    storage.pvs[pv_name] = pv
    storage.pvcs[_claim_key(claim)] = claim
