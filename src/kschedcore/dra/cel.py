"""DRA's CEL environment (dynamic-resource-allocation ``cel/compile.go``), in Python.

``compile_selector(expression)`` parses and checks a DeviceClass or request selector once per
expression (cached) into a :class:`Selector` of Python closures; ``Selector.matches`` evaluates
it for one device. The environment is the apiserver's base environment at its newest version
(``StoredExpressions``) plus the ``device`` variable: ``device.driver`` (string),
``device.attributes[domain][id]`` and ``device.capacity[domain][id]`` (Quantity), where a
domain that the device lacks reads as an empty map and an attribute name without a domain is
the driver's. Messages are cel-go's (compile: ``compilation failed: ERROR: <input>:L:C: ...``;
runtime: ``no such key: model``, ``no such overload``, ...). See docs/dra.md, "CEL engine".
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

from ..objects.quantity import parse_quantity
from .cel_check import Checker
from .cel_parse import parse
from .cel_values import CELCompileError, CELRuntimeError, Semver, shown, type_name

__all__ = ["CELCompileError", "CELRuntimeError", "Selector", "compile_selector", "device_input"]

_CACHE: dict[str, "Selector | CELCompileError"] = {}
_CACHE_MAX = 4096


class DomainMap(dict):
    """``device.attributes`` / ``device.capacity``: a missing domain reads as an empty map."""
    __slots__ = ()


class Selector:
    """One compiled selector expression."""
    __slots__ = ("expression", "_fn")

    def __init__(self, expression: str, fn: Callable[[dict], Any]):
        self.expression = expression
        self._fn = fn

    def matches(self, driver: str, attributes: Mapping, capacity: Mapping) -> bool:
        """Whether a device matches: ``attributes`` and ``capacity`` as in the v1 Device
        (``{"model": {"string": "A100"}}``, ``{"memory": {"value": "80Gi"}}``)."""
        return self.eval(device_input(driver, attributes, capacity))

    def eval(self, device: dict) -> bool:
        """``matches`` on a prepared ``device_input`` (the allocator prepares each device once)."""
        if isinstance(device, CELRuntimeError):
            raise device
        result = self._fn({"device": device})
        if type(result) is not bool:
            name = type_name(result)
            raise CELRuntimeError(f"CEL result of type {name} could not be converted to bool: "
                                  f"unsupported native conversion from {name} to 'bool'")
        return result


def compile_selector(expression: str) -> Selector:
    """The compiled selector (cached per expression); raises CELCompileError with upstream's
    message (``CompilationResult.Error``)."""
    hit = _CACHE.get(expression)
    if hit is None:
        try:
            hit = _compile(expression)
        except CELCompileError as err:
            hit = err
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[expression] = hit
    if isinstance(hit, CELCompileError):
        raise hit
    return hit


def _compile(expression: str) -> Selector:
    tree = parse(expression)
    fn, typ = Checker(expression).compile(tree)
    if typ not in ("bool", "dyn", "any"):
        raise CELCompileError(f"must evaluate to bool or the unknown type, not {shown(typ)}")
    return Selector(expression, fn)


def device_input(driver: str, attributes: Mapping | None, capacity: Mapping | None,
                 allow_multiple: bool = False):
    """The ``device`` variable for one device (``DeviceMatches``): attributes by domain and id,
    capacities as Quantities. A version attribute that is not a semantic version makes every
    evaluation fail with ``attribute <name>: parse semantic version: <why>`` (returned here as
    the error, raised by ``Selector.eval``)."""
    attrs: DomainMap = DomainMap()
    for name, attr in (attributes or {}).items():
        try:
            value = _attribute_value(attr)
        except CELRuntimeError as err:
            return CELRuntimeError(f"attribute {name}: {err}")
        domain, ident = _split(name, driver)
        attrs.setdefault(domain, {})[ident] = value
    caps: DomainMap = DomainMap()
    for name, cap in (capacity or {}).items():
        domain, ident = _split(name, driver)
        caps.setdefault(domain, {})[ident] = parse_quantity(cap.get("value", "0"))
    return {"driver": driver, "allowMultipleAllocations": bool(allow_multiple), "attributes": attrs, "capacity": caps}


def _attribute_value(attr: Mapping):
    if "int" in attr:
        return int(attr["int"])
    if "bool" in attr:
        return bool(attr["bool"])
    if "string" in attr:
        return str(attr["string"])
    if "version" in attr:
        try:
            return Semver(attr["version"])
        except CELRuntimeError as err:
            raise CELRuntimeError(f"parse semantic version: {err}") from None
    raise CELRuntimeError("unsupported attribute value")


def _split(name: str, driver: str) -> tuple[str, str]:
    sep = name.find("/")
    if sep < 0:
        return driver, name
    return name[:sep], name[sep + 1:]

