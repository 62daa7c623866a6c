"""CEL's values as DRA's selectors meet them, with cel-go's semantics and error words.

Python values stand for CEL's: ``int`` (bool excluded), :class:`UInt`, ``float``, ``str``,
``bytes``, ``bool``, ``None`` (null), ``list``, ``dict``, the Kubernetes ``Quantity``
(``objects/quantity.py``) and :class:`Semver` (blang/semver v4, as the apiserver's library).
"""
from __future__ import annotations

import math

from ..errors import KSchedCoreError
from ..objects.quantity import Quantity

INT64_MIN, INT64_MAX, UINT64_MAX = -(1 << 63), (1 << 63) - 1, (1 << 64) - 1
NO_SUCH_OVERLOAD = "no such overload"


class CELCompileError(KSchedCoreError):
    """An expression cel-go's DRA environment would not compile; ``str()`` is its message."""


class CELRuntimeError(KSchedCoreError):
    """An evaluation error; ``str()`` is cel-go's message (e.g. ``no such key: model``)."""


class Optional:
    """CEL's ``optional_type`` value: a value or none."""
    __slots__ = ("value", "has")
    cel_type = "optional_type"

    def __init__(self, value=None, has: bool = True):
        self.value, self.has = value, has

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.has else "optional.none()"


NONE = Optional(None, False)


class CELType:
    """A type value (``type(x)``, ``int``, ``string``, ...), equal by name."""
    __slots__ = ("name",)
    cel_type = "type"

    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, CELType) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


TYPE_NAMES = ("int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type")


class UInt(int):
    """CEL's ``uint`` (a distinct type from ``int``)."""
    __slots__ = ()


def compile_error(src: str, offset: int, message: str) -> CELCompileError:
    """cel-go's ``compilation failed: ERROR: <input>:L:C: msg`` with the source line and caret."""
    line = src.count("\n", 0, offset) + 1
    start = src.rfind("\n", 0, offset) + 1
    end = src.find("\n", offset)
    text = src[start:] if end < 0 else src[start:end]
    col = offset - start
    return CELCompileError(f"compilation failed: ERROR: <input>:{line}:{col + 1}: {message}\n"
                           f" | {text}\n | {'.' * col}^")


_NUMBERS = "0123456789"
_ALPHANUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-" + _NUMBERS


def _only(s: str, chars: str) -> bool:
    return all(c in chars for c in s)


def _number(part: str, what: str) -> int:
    if not _only(part, _NUMBERS):
        raise CELRuntimeError(f'Invalid character(s) found in {what} number "{part}"')
    if len(part) > 1 and part[0] == "0":
        raise CELRuntimeError(f'{what.capitalize()} number must not contain leading zeroes "{part}"')
    if part == "" or int(part) > UINT64_MAX:
        raise CELRuntimeError(f'strconv.ParseUint: parsing "{part}": '
                              + ("invalid syntax" if part == "" else "value out of range"))
    return int(part)


class Semver:
    """A semantic version as blang/semver v4 parses and orders it (build metadata ignored)."""
    __slots__ = ("major", "minor", "patch", "pre", "text")

    def __init__(self, text: str):
        if not text:
            raise CELRuntimeError("Version string empty")
        parts = text.split(".", 2)
        if len(parts) != 3:
            raise CELRuntimeError("No Major.Minor.Patch elements found")
        self.major = _number(parts[0], "major")
        self.minor = _number(parts[1], "minor")
        rest, build = parts[2], []
        if "+" in rest:
            rest, meta = rest.split("+", 1)
            build = meta.split(".")
        pre = []
        if "-" in rest:
            rest, p = rest.split("-", 1)
            pre = p.split(".")
        self.patch = _number(rest, "patch")
        self.pre = tuple(_pre_release(p) for p in pre)
        for b in build:
            if not b:
                raise CELRuntimeError("Build meta data is empty")
            if not _only(b, _ALPHANUM):
                raise CELRuntimeError(f'Invalid character(s) found in build meta data "{b}"')
        self.text = text

    def compare(self, other: Semver) -> int:
        """blang's ``Version.Compare``: -1, 0 or 1."""
        a, b = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if a != b:
            return 1 if a > b else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for x, y in zip(self.pre, other.pre):
            if x != y:
                return 1 if x > y else -1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __repr__(self) -> str:
        return f"Semver({self.text!r})"


def _pre_release(s: str) -> tuple:
    """A pre-release identifier as an orderable key: numbers before strings."""
    if not s:
        raise CELRuntimeError("Prerelease is empty")
    if _only(s, _NUMBERS):
        if len(s) > 1 and s[0] == "0":
            raise CELRuntimeError(f'Numeric PreRelease version must not contain leading zeroes "{s}"')
        return (0, int(s), "")
    if _only(s, _ALPHANUM):
        return (1, 0, s)
    raise CELRuntimeError(f'Invalid character(s) found in prerelease "{s}"')


def type_name(v) -> str:
    """CEL's name of a value's type, as cel-go prints it."""
    if v is None:
        return "null_type"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, UInt):
        return "uint"
    return _TYPE_NAMES.get(type(v)) or getattr(type(v), "cel_type", type(v).__name__)


_TYPE_NAMES = {int: "int", float: "double", str: "string", bytes: "bytes", list: "list", dict: "map",
               tuple: "list", Quantity: "kubernetes.Quantity", Semver: "kubernetes.Semver"}
_NUMERIC = (int, float)
_SHOWN = {"attrs": "map(string, map(string, any))", "attrmap": "map(string, any)",
          "caps": "map(string, map(string, kubernetes.Quantity))", "capmap": "map(string, kubernetes.Quantity)",
          "device": "kubernetes.DRADevice", "optional_type": "optional_type(google.protobuf.Any)"}


def shown(t: str) -> str:
    """A static type's name as cel-go prints it in a checker message."""
    return _SHOWN.get(t, t)


def is_number(v) -> bool:
    return isinstance(v, _NUMERIC) and not isinstance(v, bool)


def equals(a, b) -> bool:
    """cel-go's heterogeneous equality: numbers by value across int/uint/double, otherwise
    values of one type; values of different types are not equal (no error)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if is_number(a) and is_number(b):
        return a == b           # Python compares int and float exactly, NaN != NaN
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(equals(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        for k, v in a.items():
            other = lookup(b, k)
            if other is MISSING or not equals(v, other):
                return False
        return True
    if isinstance(a, Semver) and isinstance(b, Semver):
        return a.compare(b) == 0
    if isinstance(a, CELType) or isinstance(b, CELType):
        return a == b
    if isinstance(a, Optional) and isinstance(b, Optional):
        return a.has == b.has and (not a.has or equals(a.value, b.value))
    if type(a) is not type(b):
        return False
    return a == b


MISSING = object()


def lookup(m: dict, key):
    """A map entry by CEL key equality (1, 1u and 1.0 find the same entry); MISSING if none."""
    try:
        if key in m and not isinstance(key, bool):
            return m[key]
    except TypeError:
        return MISSING
    for k, v in m.items():
        if equals(k, key):
            return v
    return MISSING


def compare(a, b) -> int:
    """CEL ordering (``<`` and friends) with cross-type numeric comparison; raises
    ``no such overload`` for values that cannot be ordered."""
    if is_number(a) and is_number(b):
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            raise CELRuntimeError("NaN values cannot be ordered")
        return (a > b) - (a < b)
    if type(a) is type(b) and isinstance(a, (str, bytes, bool)):
        return (a > b) - (a < b)
    raise CELRuntimeError(NO_SUCH_OVERLOAD)


def check_int(v: int) -> int:
    if not INT64_MIN <= v <= INT64_MAX:
        raise CELRuntimeError("integer overflow")
    return v


def check_uint(v: int) -> UInt:
    if not 0 <= v <= UINT64_MAX:
        raise CELRuntimeError("unsigned integer overflow")
    return UInt(v)
