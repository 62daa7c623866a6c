"""What a replay applies: watch events (ADDED / MODIFIED / DELETED of an object), read from a
recorded stream or made from a workload's objects, each with its time when it has one.

A stream is JSON values one after another (JSON lines, or pretty-printed as `kubectl get
--watch -o json --output-watch-events` writes them), each `{"type", "object"}` and optionally
`"time"` (RFC 3339, or seconds on the replay's clock). A bare object (`kubectl get --watch -o
json` without `--output-watch-events`) is ADDED the first time its name is seen, MODIFIED after.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from os import PathLike
from typing import TYPE_CHECKING

from ..errors import WorkloadError
from ..objects.fields import parse_time

if TYPE_CHECKING:
    from ..sources.files import Workload

TYPES = ("ADDED", "MODIFIED", "DELETED")
DURATION_ANNOTATION = "kschedcore.io/duration"
"""How long a pod runs once bound (a Go duration, e.g. "90s", "1h30m"); it then departs."""


@dataclass(slots=True)
class WatchEvent:
    """One event of a watch stream: its type, the object's kind and body, where it was read, and
    its time (ns; None when untimed)."""
    type: str                 # ADDED, MODIFIED or DELETED
    kind: str                 # the object's kind: Pod, Node, PodDisruptionBudget, ...
    obj: dict
    where: str                # "file: line N", for messages
    time: int | None = None   # ns since the epoch (RFC 3339) or on the replay clock; None: untimed
    relative: bool = False    # time was given in seconds on the replay's clock, not as a date
    pending: bool = False     # a workload's pending pod (settle mode withdraws it if it settles unplaced)

    @property
    def key(self) -> str:
        meta = self.obj.get("metadata") or {}
        ns = meta.get("namespace") or ("default" if self.kind == "Pod" else "")
        return f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))


def read_watch_stream(path: str | PathLike[str], text: str) -> list[WatchEvent]:
    """The watch events of a stream file's text, in file order."""
    decoder, pos, n, line = json.JSONDecoder(), 0, len(text), 1
    seen: set = set()
    out: list = []
    while True:
        while pos < n and text[pos] in " \t\r\n":
            line += text[pos] == "\n"
            pos += 1
        if pos >= n:
            return out
        where = f"{path}: line {line}"
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise WorkloadError(where, "", f"invalid JSON: {e.msg}") from None
        line += text.count("\n", pos, end)
        pos = end
        out.append(_event(value, where, seen))


def _event(value, where, seen) -> WatchEvent:
    if not isinstance(value, dict):
        raise WorkloadError(where, "", f"expected a watch event object, got {type(value).__name__}")
    if "object" in value or "type" in value:
        typ, obj = value.get("type"), value.get("object")
        if typ == "ERROR":
            raise WorkloadError(where, "type", f"the watch reported an error: {obj!r}"[:300])
        if typ not in TYPES:
            raise WorkloadError(where, "type", f"expected one of {', '.join(TYPES)}, got {typ!r}")
        extra = set(value) - {"type", "object", "time"}
        if extra:
            raise WorkloadError(where, sorted(extra)[0], 'unknown watch-event key (known: type, object, time)')
    else:
        typ, obj = None, value
    if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str) or not obj["kind"]:
        raise WorkloadError(where, "object.kind", "missing: not a Kubernetes object")
    ev = WatchEvent(typ or "ADDED", obj["kind"], obj, where)
    if not isinstance(obj.get("metadata"), dict) or not obj["metadata"].get("name"):
        raise WorkloadError(where, "object.metadata.name", "missing or empty")
    if typ is None and (ev.kind, ev.key) in seen:
        ev.type = "MODIFIED"
    seen.add((ev.kind, ev.key))
    if "time" in value:
        ev.time, ev.relative = _time(value["time"], where)
    return ev


def _time(raw, where):
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise WorkloadError(where, "time", f"expected RFC 3339 or seconds, got {raw!r}")
    if isinstance(raw, str):
        ns = parse_time(raw)
        if ns is None:
            raise WorkloadError(where, "time", f'invalid time "{raw}" (expected RFC 3339, e.g. "2025-01-01T00:00:00Z")')
        return ns, False
    if raw < 0:
        raise WorkloadError(where, "time", f"must not be negative, got {raw}")
    return int(round(raw * 1e9)), True


def object_time(ev: WatchEvent) -> int | None:
    """The time an event happened, as its object shows it: creationTimestamp when ADDED,
    deletionTimestamp when DELETED (None when the object does not say)."""
    field = {"ADDED": "creationTimestamp", "DELETED": "deletionTimestamp"}.get(ev.type)
    return _meta_time(ev, field) if field else None


def deletion_time(ev: WatchEvent) -> int | None:
    """The object's metadata.deletionTimestamp (ns), None if it has none."""
    return _meta_time(ev, "deletionTimestamp")


def _meta_time(ev, field):
    text = (ev.obj.get("metadata") or {}).get(field)
    if text is None:
        return None
    ns = parse_time(text) if isinstance(text, str) else None
    if ns is None:
        raise WorkloadError(ev.where, f"object.metadata.{field}", f"invalid time {text!r}")
    return ns


def workload_events(workload: Workload, source: str = "workload") -> tuple[list[WatchEvent], list[WatchEvent]]:
    """A workload's objects as watch events: (the cluster's -- nodes, bound pods, other objects
    -- applied before anything is timed, the pending pods' arrivals in order)."""
    cluster = []
    for kind, objs in workload.objects.items():
        cluster += [WatchEvent("ADDED", kind, o, f"{source}: {kind}[{i}]") for i, o in enumerate(objs)]
    cluster += [WatchEvent("ADDED", "Node", o, f"{source}: nodes[{i}]") for i, o in enumerate(workload.nodes)]
    cluster += [WatchEvent("ADDED", "Pod", o, f"{source}: pods[{i}]") for i, o in enumerate(workload.pods)]
    arrivals = [WatchEvent("ADDED", "Pod", o, f"{source}: pending[{i}]", pending=True)
                for i, o in enumerate(workload.pending)]
    return cluster, arrivals
