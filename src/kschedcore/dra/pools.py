"""Resource pools as the structured allocator gathers them for one node
(``structured/internal/experimental/pools_experimental.go``), and the node matching it uses.

Upstream keeps pools in a Go map and ranges over it, so with several pools serving one node
its device order differs from run to run; here pools come in (driver, pool name) order and a
pool's slices in slice name order, fixed whatever order the slices are given in
(docs/dra.md, "Pool order").
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(slots=True)
class Pool:
    """One pool's newest-generation slices that reach the node."""
    driver: str
    name: str
    slices: list = field(default_factory=list)
    generation: int = 0
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""

    @property
    def pool_id(self) -> str:
        """``PoolID.String()``: driver/pool."""
        return f"{self.driver}/{self.name}"


def node_name(node: Mapping | None) -> str:
    return ((node or {}).get("metadata") or {}).get("name", "")


def _requirement_matches(req: Mapping, labels: Mapping) -> bool:
    key, op, values = req.get("key", ""), req.get("operator", ""), req.get("values") or []
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt") and key in labels and len(values) == 1:
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _field_matches(req: Mapping, node: Mapping) -> bool:
    if req.get("key") != "metadata.name":
        return False
    name, values = node_name(node), req.get("values") or []
    if req.get("operator") == "In":
        return name in values
    if req.get("operator") == "NotIn":
        return name not in values
    return False


def selector_matches(selector: Mapping, node: Mapping | None) -> bool:
    """``nodeaffinity.NodeSelector.Match``: any term whose requirements all hold; a term
    without requirements matches nothing."""
    if node is None:
        return False
    labels = (node.get("metadata") or {}).get("labels") or {}
    for term in selector.get("nodeSelectorTerms") or []:
        exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
        if not exprs and not fields:
            continue
        if all(_requirement_matches(r, labels) for r in exprs) and all(_field_matches(r, node) for r in fields):
            return True
    return False


def node_matches(node: Mapping | None, name: str, all_nodes: bool, selector: Mapping | None) -> bool:
    """``nodeMatches``: a node name, all nodes, or a node selector."""
    if name:
        return node is not None and node_name(node) == name
    if all_nodes:
        return True
    if selector is not None:
        return selector_matches(selector, node)
    return False


def _has_binding_conditions(slice_: Mapping) -> bool:
    return any(d.get("bindingConditions") is not None for d in slice_["spec"].get("devices") or [])


def gather_pools(slices: Sequence[Mapping], node: Mapping | None) -> list[Pool]:
    """``GatherPools`` with DRAPartitionableDevices off: the pools with slices for the node;
    outdated slices dropped, pools marked incomplete (fewer slices than resourceSliceCount)
    or invalid (a device name twice); pools with binding conditions last."""
    pools: dict[tuple[str, str], Pool] = {}
    later = []
    for s in slices:
        spec = s["spec"]
        if spec.get("perDeviceNodeSelection") is not None:
            continue
        name, all_nodes, sel = spec.get("nodeName") or "", bool(spec.get("allNodes")), spec.get("nodeSelector")
        if not (name or all_nodes or sel is not None):
            continue
        if node_matches(node, name, all_nodes, sel):
            if _has_binding_conditions(s):
                later.append(s)
            else:
                _add_slice(pools, s)
    for s in later:
        _add_slice(pools, s)
    plain, bound = [], []
    for key in sorted(pools):
        pool = pools[key]
        pool.slices.sort(key=lambda s: s["metadata"].get("name", ""))
        pool.incomplete = len(pool.slices) != pool.slices[0]["spec"]["pool"].get("resourceSliceCount", 1)
        pool.invalid, pool.invalid_reason = _invalid(pool)
        (bound if any(_has_binding_conditions(s) for s in pool.slices) else plain).append(pool)
    return plain + bound


def _add_slice(pools: dict, s: Mapping) -> None:
    spec = s["spec"]
    key = (spec["driver"], spec["pool"]["name"])
    gen = spec["pool"].get("generation", 0)
    pool = pools.get(key)
    if pool is None:
        pools[key] = Pool(key[0], key[1], [s], gen)
        return
    if gen < pool.generation:
        return
    if gen > pool.generation:
        pool.slices, pool.generation = [], gen
    pool.slices.append(s)


def _invalid(pool: Pool) -> tuple[bool, str]:
    seen = set()
    for s in pool.slices:
        for d in s["spec"].get("devices") or []:
            if d["name"] in seen:
                return True, f"duplicate device name {d['name']}"
            seen.add(d["name"])
    return False, ""


def allocation_node_selector(slices: Sequence[Mapping], devices: Sequence[Mapping], target: str) -> dict | None:
    """``createNodeSelector``: the node itself when a device is node-local; the requirements
    of the slices' node selectors (one term each), merged; None when available everywhere."""
    exprs: list = []
    fields: list = []
    for s, d in zip(slices, devices):
        spec = s["spec"]
        if spec.get("nodeName") is not None or d.get("bindsToNode"):
            return {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [target]}]}]}
        sel = spec.get("nodeSelector")
        terms = (sel or {}).get("nodeSelectorTerms") or []
        if len(terms) == 1:
            _merge(terms[0].get("matchFields") or [], fields)
            _merge(terms[0].get("matchExpressions") or [], exprs)
        elif len(terms) > 1:
            raise ValueError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
    if not exprs and not fields:
        return None
    term = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _merge(source: list, into: list) -> None:
    for req in source:
        values = set(req.get("values") or [])
        if not any(r.get("key") == req.get("key") and r.get("operator") == req.get("operator")
                   and set(r.get("values") or []) == values for r in into):
            into.append(req)
