"""Lists: a kind's objects in pages, and a snapshot of the cluster at one resourceVersion."""
from __future__ import annotations

from ..errors import KSchedCoreError
from ..sources.files import Workload, workload_from_documents
from .client import ApiError, Client
from .resources import RESOURCES, Resource

__all__ = ["list_objects", "snapshot", "snapshot_document", "strip_managed_fields"]

#: objects per page (kubectl's chunk size)
PAGE = 500


def list_objects(client: Client, res: Resource, *, resource_version: str = "", exact: bool = False,
                 query: dict | None = None) -> tuple[list, str]:
    """Every object of a kind, in pages, each with its kind and apiVersion set (a list's items
    carry neither) and without managedFields, and the list's resourceVersion. resource_version with exact: as of that
    resourceVersion (resourceVersionMatch=Exact); none: the latest (a consistent read)."""
    items: list = []
    base = dict(query or {}, limit=PAGE)
    if resource_version:
        base["resourceVersion"] = resource_version
        if exact:
            base["resourceVersionMatch"] = "Exact"
    page = dict(base)
    while True:
        doc = client.get(res.path(), page)
        for item in doc.get("items") or ():
            strip_managed_fields(item)
            item.setdefault("kind", res.kind)
            item.setdefault("apiVersion", res.api_version)
            items.append(item)
        meta = doc.get("metadata") or {}
        token = meta.get("continue")
        if not token:
            return items, str(meta.get("resourceVersion") or "")
        page = {k: v for k, v in base.items() if k not in ("resourceVersion", "resourceVersionMatch")}
        page["continue"] = token          # the token holds the first page's resourceVersion


def strip_managed_fields(obj: dict) -> None:
    """Drops metadata.managedFields, as kube-scheduler's informers do (TransformStripManagedFields)
    and kubectl's output does: nothing reads them, and they are often half of an object."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)


def snapshot_document(client: Client, kinds=None) -> dict:
    """The cluster as a `kind: List` (what `kubectl get -o yaml` dumps), every kind as of one
    resourceVersion: the Pods' list is read first and the others at its resourceVersion. A kind
    the server does not serve (an older release without resource.k8s.io/v1) is left out and named
    in the List's metadata."""
    items: list = []
    missing: list = []
    rv = ""
    for res in RESOURCES:
        if kinds is not None and res.kind not in kinds:
            continue
        try:
            objs, list_rv = list_objects(client, res, resource_version=rv, exact=bool(rv))
        except ApiError as e:
            if e.status == 404:
                missing.append(res.kind)
                continue
            raise KSchedCoreError(f"listing {res.kind} ({res.path()}): {e}") from None
        rv = rv or list_rv
        items += objs
    meta: dict = {"resourceVersion": rv}
    if missing:
        meta["kschedcore.io/not-served"] = ",".join(missing)
    return {"apiVersion": "v1", "kind": "List", "metadata": meta, "items": items}


def snapshot(client: Client, source: str = "cluster") -> Workload:
    """The cluster read into a Workload, as its dump would be (`snapshot_document`)."""
    return workload_from_documents([snapshot_document(client)], source)
