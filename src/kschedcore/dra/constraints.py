"""A claim's device constraints as the structured allocator checks them while it picks
devices (``structured/internal/experimental`` ``matchAttributeConstraint``,
``distinctAttributeConstraint``); constraints are monotonic, so a failed ``add`` ends a branch."""
from __future__ import annotations

from collections.abc import Mapping


def lookup_attribute(device: Mapping, driver: str, name: str):
    """``lookupAttribute``: the attribute by its fully qualified name, or by its id when the
    domain is the driver's; None when the device lacks it."""
    attrs = device.get("attributes") or {}
    if name in attrs:
        return attrs[name]
    sep = name.find("/")
    if sep < 0 or name[:sep] != driver:
        return None
    return attrs.get(name[sep + 1:])


def _applies(names: frozenset, request: str, sub: str) -> bool:
    if not names:
        return True
    return request in names or (bool(sub) and f"{request}/{sub}" in names)


_KINDS = ("string", "int", "bool", "version")


class MatchAttribute:
    """All devices of the named requests share one value of the attribute."""
    __slots__ = ("names", "attribute", "value", "count")

    def __init__(self, requests, attribute: str):
        self.names = frozenset(requests or ())
        self.attribute = attribute
        self.value = None
        self.count = 0

    def add(self, request: str, sub: str, device: Mapping, driver: str) -> bool:
        if not _applies(self.names, request, sub):
            return True
        attr = lookup_attribute(device, driver, self.attribute)
        if attr is None:
            return False
        if self.count == 0:
            self.value = attr
            self.count = 1
            return True
        kind = next((k for k in _KINDS if attr.get(k) is not None), None)
        if kind is None or self.value.get(kind) is None or self.value[kind] != attr[kind]:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if _applies(self.names, request, sub):
            self.count -= 1


class DistinctAttribute:
    """Devices of the named requests must differ in the attribute. v1.34.1 compares the
    values' pointers, which differ for any two devices, so in effect a device only needs to
    have the attribute (one claim never gets a device twice)."""
    __slots__ = ("names", "attribute")

    def __init__(self, requests, attribute: str):
        self.names = frozenset(requests or ())
        self.attribute = attribute

    def add(self, request: str, sub: str, device: Mapping, driver: str) -> bool:
        if not _applies(self.names, request, sub):
            return True
        return lookup_attribute(device, driver, self.attribute) is not None

    def remove(self, request: str, sub: str) -> None:
        pass
