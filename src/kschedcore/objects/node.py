"""Node: the scheduling-relevant view of a v1 Node, validated once when read."""
import json
import marshal
from dataclasses import dataclass, field
from typing import Any

from . import resources as res
from .fields import FieldReader, metadata_name
from .pod import TAINT_EFFECTS, to_ints
from . import validation as apival


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(slots=True, eq=False)
class Node:
    """A validated v1 Node as the scheduler reads it: labels, taints, `spec.unschedulable`,
    allocatable in integer units (cpu in millicores), the allowed pod count and images."""
    name: str
    uid: str
    labels: dict
    unschedulable: bool
    taints: tuple
    #: resource name -> integer allocatable (cpu in millicores); `pods` separately.
    allocatable: dict
    allowed_pods: int
    #: ((names...), sizeBytes) per status.images entry
    images: tuple
    raw: dict = field(repr=False)


#: the facts read from a node's spec and status (taints, allocatable, images) by the fields
#: they come from, as written: nodes of one instance type are read once. Cleared when full.
_FACTS_MEMO: dict = {}
FACTS_MEMO_ENTRIES = 4096


def parse_node(raw: Any, index_hint: str = "") -> Node:
    """Reads and validates a v1 Node (a dict as the API or a manifest writes it); bad input raises
    a ValidationError naming the node and the field."""
    _, name = metadata_name("node", raw, index_hint)
    r = FieldReader(f"node {name}")
    meta = raw["metadata"]
    if meta.get("namespace"):
        r.fail("metadata.namespace", "Forbidden: not allowed on this type")
    apival.check_meta(r.obj, None, name, meta)
    spec = r.mapping(raw, "spec", "spec")
    status = r.mapping(raw, "status", "status")
    key = _facts_key(spec, status)
    facts = _FACTS_MEMO.get(key) if key is not None else None
    if facts is None:
        facts = _facts(r, spec, status)
        if key is not None:
            if len(_FACTS_MEMO) >= FACTS_MEMO_ENTRIES:
                _FACTS_MEMO.clear()
            _FACTS_MEMO[key] = facts
    taints, allocatable, allowed_pods, images = facts
    return Node(
        name=name, uid=r.string(meta, "uid", "metadata.uid") or name,
        labels=r.string_map(meta, "labels", "metadata.labels"),
        unschedulable=r.boolean(spec, "unschedulable", "spec.unschedulable"),
        taints=taints, allocatable=allocatable, allowed_pods=allowed_pods, images=images, raw=raw,
    )


def _facts_key(spec: dict, status: dict) -> bytes | None:
    """The fields _facts reads, as marshal writes them (None where it cannot: then read)."""
    try:
        return marshal.dumps((spec.get("taints"), status.get("allocatable"), status.get("capacity"),
                              status.get("images")), 2)
    except ValueError:
        return None


def _facts(r: FieldReader, spec: dict, status: dict) -> tuple:
    """(taints, allocatable, allowed pods, images) of a node, validated (errors name it).
    Shared by nodes of one shape: nothing writes into them."""
    taints, seen = [], set()
    for i, t in enumerate(r.seq(spec, "taints", "spec.taints")):
        path = f"spec.taints[{i}]"
        # the API server's words; its path says "metadata.taints" (validateNodeTaints is given
        # metadata's path), the field's own path is said here
        api_path = path
        t = r.item(t, path)
        key = r.string(t, "key", path + ".key")
        apival.check(r.obj, api_path + ".key", key, apival.qualified_name_errors(key))
        value = r.string(t, "value", path + ".value")
        apival.check(r.obj, api_path + ".value", value, apival.label_value_errors(value))
        effect = r.string(t, "effect", path + ".effect")
        if not effect:
            r.fail(api_path + ".effect", "Required value")
        if effect not in TAINT_EFFECTS[1:]:
            r.fail(api_path + ".effect", f"Unsupported value: {apival.go_quote(effect)}: supported values: "
                   '"NoSchedule", "PreferNoSchedule", "NoExecute"')
        if (key, effect) in seen:
            shown = {"Key": key, "Value": value, "Effect": effect, "TimeAdded": t.get("timeAdded")}
            r.fail(api_path, f"Duplicate value: {json.dumps(shown, separators=(',', ':'))}: "
                   "taints must be unique by key and effect pair")
        seen.add((key, effect))
        taints.append(Taint(key, value, effect))
    # the API server defaults a missing allocatable to capacity
    source = "allocatable" if status.get("allocatable") is not None else "capacity"
    alloc_q = r.quantities(status, source, f"status.{source}")
    allocatable = r.int64s(to_ints({k: q.nanos for k, q in alloc_q.items()}), f"status.{source}")
    pods_q = alloc_q.get(res.PODS)
    images = []
    for i, img in enumerate(r.seq(status, "images", "status.images")):
        path = f"status.images[{i}]"
        img = r.item(img, path)
        size = r.integer(img, "sizeBytes", path + ".sizeBytes")
        images.append((tuple(r.string_list(img, "names", path + ".names")), size))
    allowed_pods = r.int64s({"pods": pods_q.value() if pods_q is not None else 0}, f"status.{source}")["pods"]
    return tuple(taints), allocatable, allowed_pods, tuple(images)
