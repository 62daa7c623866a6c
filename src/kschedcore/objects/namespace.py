"""Namespace: what pod affinity's namespaceSelector sees of it (its labels)."""
from typing import Any

from . import validation as apival
from .fields import FieldReader, metadata_name


def parse_namespace(raw: Any, index_hint: str = "") -> tuple[str, dict[str, str]]:
    """(name, labels) of a v1 Namespace, validated as the API server does (a DNS-1123 label)."""
    _, name = metadata_name("namespace", raw, index_hint)
    r = FieldReader(f"namespace {name}")
    labels = r.string_map(raw["metadata"], "labels", "metadata.labels")
    apival.check_meta(r.obj, None, name, raw["metadata"], apival.dns1123_label_errors)
    return name, labels
