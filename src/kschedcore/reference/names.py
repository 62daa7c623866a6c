"""Name validation and resource-name classification (semantics §1.2, §3.4).

Written from k8s.io/apimachinery/pkg/util/validation (IsQualifiedName, IsValidLabelValue,
IsDNS1123Subdomain) and pkg/apis/core/v1/helper (IsExtendedResourceName, ...).  Go's
regexps are anchored with ``^...$`` on the whole string, so ``re.fullmatch`` is used here
(Python's ``$`` would also accept a trailing newline).
"""
from __future__ import annotations

import re

# --- apimachinery validation -------------------------------------------------------------

_QUALIFIED_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_QUALIFIED_NAME_MAX = 63
_LABEL_VALUE_RE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_LABEL_VALUE_MAX = 63
_DNS1123_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS1123_SUBDOMAIN_MAX = 253


def is_dns1123_subdomain(value: str) -> bool:
    return len(value) <= _DNS1123_SUBDOMAIN_MAX and _DNS1123_SUBDOMAIN_RE.fullmatch(value) is not None


def is_qualified_name(value: str) -> bool:
    """validation.IsQualifiedName: ``[prefix/]name``; prefix a DNS-1123 subdomain."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if len(prefix) == 0:
            return False
        if not is_dns1123_subdomain(prefix):
            return False
    else:
        return False
    if len(name) == 0 or len(name) > _QUALIFIED_NAME_MAX:
        return False
    return _QUALIFIED_NAME_RE.fullmatch(name) is not None


def is_valid_label_value(value: str) -> bool:
    """validation.IsValidLabelValue: empty, or <= 63 chars of the label-value alphabet."""
    if len(value) > _LABEL_VALUE_MAX:
        return False
    return _LABEL_VALUE_RE.fullmatch(value) is not None


# --- resource names (§1.2) -----------------------------------------------------------------

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

DEFAULT_RESOURCE_REQUESTS_PREFIX = "requests."
RESOURCE_DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
HUGEPAGES_PREFIX = "hugepages-"
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"


def is_prefixed_native_resource(name: str) -> bool:
    """Contains ``kubernetes.io/`` anywhere."""
    return RESOURCE_DEFAULT_NAMESPACE_PREFIX in name


def is_native_resource(name: str) -> bool:
    return "/" not in name or is_prefixed_native_resource(name)


def is_extended_resource_name(name: str) -> bool:
    """Domain-prefixed, not ``*kubernetes.io/*``, and ``requests.<name>`` a qualified name."""
    if is_native_resource(name) or name.startswith(DEFAULT_RESOURCE_REQUESTS_PREFIX):
        return False
    return is_qualified_name(DEFAULT_RESOURCE_REQUESTS_PREFIX + name)


def is_hugepages_resource_name(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_attachable_volume_resource_name(name: str) -> bool:
    return name.startswith(ATTACHABLE_VOLUMES_PREFIX)


def is_scalar_resource_name(name: str) -> bool:
    """schedutil.IsScalarResourceName (§1.2)."""
    return (is_extended_resource_name(name) or is_hugepages_resource_name(name)
            or is_prefixed_native_resource(name) or is_attachable_volume_resource_name(name))


def is_supported_pod_level_resource(name: str) -> bool:
    """cpu, memory and hugepages-* may be set at pod level (§1.1 step 4)."""
    return name in (CPU, MEMORY) or name.startswith(HUGEPAGES_PREFIX)
