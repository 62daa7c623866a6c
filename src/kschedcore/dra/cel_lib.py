"""CEL's operators and the functions of DRA's environment: the standard ones, the apiserver's
Quantity, Semver, Lists and Regex libraries, cel-go's strings (v2), sets and lists (v3)
extensions. Each overload states its receiver and parameter types; the checker rejects known
types no overload takes (cel-go's words), the run time dispatches on the values' types."""
from __future__ import annotations

import math
import re

from ..errors import QuantityError
from ..objects.quantity import Quantity, parse_quantity
from . import cel_net
from .cel_values import (CELRuntimeError, NO_SUCH_OVERLOAD, Semver, UInt, check_int, check_uint,
                         compare, equals, is_number, lookup, shown, type_name, CELType, MISSING, NONE, Optional)

MACRO_NAMES = frozenset({"all", "exists", "exists_one", "existsOne"})
_UNKNOWN = ("dyn", "any")
_MAP_TYPES = {"attrs": "map", "attrmap": "map", "caps": "map", "capmap": "map", "device": "map"}
_NUM = ("int", "uint", "double")
_ORDERED = ("string", "bytes", "bool")
#: functions of Kubernetes' CEL libraries that kschedcore's CEL refuses by name
NOT_IMPLEMENTED = frozenset({"url", "isURL", "format", "authorizer", "quote", "first", "last",
                             "sortBy", "timestamp", "duration", "getHours"})


def _static(t: str) -> str:
    return "list" if t.startswith("list") else _MAP_TYPES.get(t, t)


def _err(checker, pos, name, types, recv=None):
    args = ", ".join(shown(t) for t in types)
    applied = f"{shown(recv)}.({args})" if recv is not None else f"({args})"
    return checker.error(pos, f"found no matching overload for '{name}' applied to '{applied}'")


# -- operators ---------------------------------------------------------------------------

def operator(checker, pos, name, fns, types):
    """The closure and static type of an operator call."""
    st = [_static(t) for t in types]
    known = [t for t in st if t not in _UNKNOWN]
    if name == "!_":
        if known and known[0] != "bool":
            raise _err(checker, pos, name, types)
        f = fns[0]
        return (lambda v: _not(f(v))), "bool"
    if name == "-_":
        if known and known[0] not in ("int", "double"):
            raise _err(checker, pos, name, types)
        f = fns[0]
        return (lambda v: _neg(f(v))), st[0] if known else "dyn"
    if len(known) == 2 and not _compatible(name, st[0], st[1]):
        raise _err(checker, pos, name, types)
    a, b = fns
    impl = _BINARY[name]
    if name in ("_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "@in"):
        rtype = "bool"
    else:       # the one overload a known operand leaves
        rtype = known[0] if known else "dyn"
    return (lambda v: impl(a(v), b(v))), rtype


def _compatible(name, x, y) -> bool:
    if name in ("_==_", "_!=_"):
        return x == y or "null_type" in (x, y)
    if name in ("_<_", "_<=_", "_>_", "_>=_"):
        return (x in _NUM and y in _NUM) or (x == y and x in _ORDERED)
    if name == "@in":
        return y in ("list", "map")
    if name == "_+_":
        return x == y and x in (*_NUM, "string", "bytes", "list")
    if name == "_%_":
        return x == y and x in ("int", "uint")
    return x == y and x in _NUM


def _not(x):
    if type(x) is not bool:
        raise CELRuntimeError(NO_SUCH_OVERLOAD)
    return not x


def _neg(x):
    if isinstance(x, bool) or isinstance(x, UInt) or not is_number(x):
        raise CELRuntimeError(NO_SUCH_OVERLOAD)
    return -x if isinstance(x, float) else check_int(-x)


def _kind(a, b):
    """The common arithmetic kind of two values, or raise no such overload."""
    ta, tb = type_name(a), type_name(b)
    if ta != tb:
        raise CELRuntimeError(NO_SUCH_OVERLOAD)
    return ta


def _add(a, b):
    k = _kind(a, b)
    if k == "int":
        return check_int(a + b)
    if k == "uint":
        return check_uint(a + b)
    if k in ("double", "string", "bytes"):
        return a + b
    if k == "list":
        return list(a) + list(b)
    raise CELRuntimeError(NO_SUCH_OVERLOAD)


def _arith(op):
    def run(a, b):
        k = _kind(a, b)
        if k == "int":
            return check_int(op(a, b))
        if k == "uint":
            return check_uint(op(a, b))
        if k == "double":
            return float(op(a, b))
        raise CELRuntimeError(NO_SUCH_OVERLOAD)
    return run


def _div(a, b):
    k = _kind(a, b)
    if k == "double":
        if b == 0:
            return math.copysign(math.inf, a) * math.copysign(1, b) if a != 0 and not math.isnan(a) else math.nan
        return a / b
    if k not in ("int", "uint"):
        raise CELRuntimeError(NO_SUCH_OVERLOAD)
    if b == 0:
        raise CELRuntimeError("division by zero")
    q = abs(a) // abs(b)
    q = q if (a >= 0) == (b >= 0) else -q
    return check_int(q) if k == "int" else UInt(q)


def _mod(a, b):
    k = _kind(a, b)
    if k not in ("int", "uint"):
        raise CELRuntimeError(NO_SUCH_OVERLOAD)
    if b == 0:
        raise CELRuntimeError("modulus by zero")
    if k == "int" and a == -(1 << 63) and b == -1:
        raise CELRuntimeError("integer overflow")
    r = abs(a) % abs(b)
    r = -r if a < 0 else r
    return r if k == "int" else UInt(r)


def _in(x, container):
    if isinstance(container, list):
        return any(equals(x, e) for e in container)
    if isinstance(container, dict):
        return lookup(container, x) is not MISSING
    raise CELRuntimeError(NO_SUCH_OVERLOAD)


_BINARY = {
    "_==_": equals, "_!=_": lambda a, b: not equals(a, b),
    "_<_": lambda a, b: compare(a, b) < 0, "_<=_": lambda a, b: compare(a, b) <= 0,
    "_>_": lambda a, b: compare(a, b) > 0, "_>=_": lambda a, b: compare(a, b) >= 0,
    "_+_": _add, "_-_": _arith(lambda a, b: a - b), "_*_": _arith(lambda a, b: a * b),
    "_/_": _div, "_%_": _mod, "@in": _in,
}


# -- function calls ----------------------------------------------------------------------

def call(checker, pos, name, tf, tt, fns, types):
    """The closure and static type of a function call (``tf`` the receiver's closure)."""
    member = tf is not None
    st = [_static(t) for t in types]
    rt = _static(tt) if member else None
    candidates = [o for o in FUNCTIONS[name] if o[0] == member and len(o[1]) == len(fns) + member]
    sig = ([rt] if member else []) + st
    fitting = [o for o in candidates if all(p is None or t in _UNKNOWN or p == t for p, t in zip(o[1], sig))]
    if not fitting:
        raise _err(checker, pos, name, types, tt if member else None)
    result = fitting[0][3] if len(fitting) == 1 else "dyn"
    if member:
        every = [tf] + list(fns)
    else:
        every = list(fns)

    def run(v):
        args = [f(v) for f in every]
        for _, params, impl, _r in candidates:
            if all(p is None or type_name(a) == p for p, a in zip(params, args)):
                return impl(*args)
        raise CELRuntimeError(NO_SUCH_OVERLOAD)
    return run, result


def _quantity(s):
    try:
        return parse_quantity(s)
    except QuantityError:
        raise CELRuntimeError("quantities must match the regular expression "
                              "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from None


def _is_quantity(s):
    try:
        parse_quantity(s)
        return True
    except QuantityError:
        return False


def _as_integer(q: Quantity):
    if q.nanos % 10**9 or not -(1 << 63) <= q.nanos // 10**9 <= (1 << 63) - 1:
        raise CELRuntimeError("cannot convert value to integer")
    return q.nanos // 10**9


def _q_add(q: Quantity, other):
    n = other.nanos if isinstance(other, Quantity) else other * 10**9
    return Quantity(q.nanos + n, q.format)


def _q_sub(q: Quantity, other):
    n = other.nanos if isinstance(other, Quantity) else other * 10**9
    return Quantity(q.nanos - n, q.format)


def _semver(s, normalize=False):
    if normalize:
        s = _normalize(s)
    return Semver(s)


def _normalize(s: str) -> str:
    """The Semver library's normalizeAndParse: drop a leading v and leading zeros, fill
    missing minor and patch with 0."""
    s = s[1:] if s.startswith("v") else s
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or p[0] not in "0123456789":
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise CELRuntimeError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _is_semver(s, normalize=False):
    try:
        _semver(s, normalize)
        return True
    except CELRuntimeError:
        return False


def _cmp_int(a, b):
    c = a.compare(b) if isinstance(a, Semver) else (a > b) - (a < b)
    return c


def _sorted_check(items):
    for x, y in zip(items, items[1:]):
        if compare(x, y) > 0:
            return False
    return True


def _sum(items):
    """The Lists library's ``sum``: from the zero of the elements' type."""
    acc = {"uint": UInt(0), "double": 0.0}.get(type_name(items[0]), 0) if items else 0
    for x in items:
        acc = _add(acc, x)
    return acc


def _extreme(items, sign):
    if not items:
        raise CELRuntimeError(f"{'min' if sign < 0 else 'max'} called on empty list")
    best = items[0]
    for x in items[1:]:
        if compare(x, best) * sign > 0:
            best = x
    return best


def _index_of(items, x):
    return next((i for i, e in enumerate(items) if equals(e, x)), -1)


def _last_index_of(items, x):
    return next((i for i in range(len(items) - 1, -1, -1) if equals(items[i], x)), -1)


def _regex(pattern):
    try:
        return re.compile(pattern)
    except re.error as err:
        raise CELRuntimeError(f"error parsing regexp: {err}") from None


def _substring(s, start, end=None):
    if end is None:
        if not 0 <= start <= len(s):
            raise CELRuntimeError(f"index out of range: {start}")
        return s[start:]
    if start > end:
        raise CELRuntimeError(f"invalid substring range. start: {start}, end: {end}")
    for i in (start, end):
        if not 0 <= i <= len(s):
            raise CELRuntimeError(f"index out of range: {i}")
    return s[start:end]


def _split(s, sep, n=-1):
    if n == 0:
        return []
    return s.split(sep, n - 1) if n > 0 else s.split(sep)


def _replace(s, old, new, n=-1):
    return s.replace(old, new, n if n >= 0 else -1)


def _char_at(s, i):
    if not 0 <= i <= len(s):
        raise CELRuntimeError(f"index out of range: {i}")
    return s[i:i + 1]


def _index_from(s, sub, off):
    """cel-go's ``indexOf(sub, offset)``."""
    if sub == "":
        return off
    if off < 0:
        raise CELRuntimeError(f"index out of range: {off}")
    if off >= len(s):
        return -1
    return s.find(sub, off)


def _last_index_from(s, sub, off):
    """cel-go's ``lastIndexOf(sub, offset)``: the last match starting at or before offset."""
    if sub == "":
        return off
    if off < 0:
        raise CELRuntimeError(f"index out of range: {off}")
    if off >= len(s):
        return -1
    return s.rfind(sub, 0, min(off, len(s) - len(sub)) + len(sub))


def _slice(items, start, end):
    if start < 0 or end < 0:
        raise CELRuntimeError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CELRuntimeError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if len(items) < end:
        raise CELRuntimeError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return items[start:end]


def _join(items, sep=""):
    if not all(isinstance(x, str) for x in items):
        raise CELRuntimeError(NO_SUCH_OVERLOAD)
    return sep.join(items)


def _flatten(items, depth=1):
    out = []
    for x in items:
        if isinstance(x, list) and depth > 0:
            out.extend(_flatten(x, depth - 1))
        else:
            out.append(x)
    return out


def _distinct(items):
    out = []
    for x in items:
        if not any(equals(x, y) for y in out):
            out.append(x)
    return out


def _sort(items):
    import functools
    return sorted(items, key=functools.cmp_to_key(compare))


def _size(x):
    if isinstance(x, (str, bytes, list, dict)):
        return len(x)
    raise CELRuntimeError(NO_SUCH_OVERLOAD)


_INT_TEXT = re.compile(r"^[+-]?[0-9]+$")
_BOOL_TEXT = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
              "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def _to_bool(x):
    if isinstance(x, bool):
        return x
    if isinstance(x, str) and x in _BOOL_TEXT:
        return _BOOL_TEXT[x]
    raise CELRuntimeError("type conversion error from 'string' to 'bool'")


def _to_int(x):
    if isinstance(x, str):
        if not _INT_TEXT.match(x):
            raise CELRuntimeError("type conversion error from 'string' to 'int'")
        return check_int(int(x, 10))
    if isinstance(x, float):
        if math.isnan(x) or not -2.0**63 < x < 2.0**63:
            raise CELRuntimeError("integer overflow")
        return int(x)
    return check_int(int(x))


def _to_string(x):
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, bytes):
        return x.decode("utf-8")
    if isinstance(x, Quantity):
        return str(x)
    return str(x)


S, I, U, D, B, L, M, Q, V = "string", "int", "uint", "double", "bool", "list", "map", "kubernetes.Quantity", "kubernetes.Semver"
_ANY = None


def _g(params, impl, ret):
    return (False, tuple(params), impl, ret)


def _m(params, impl, ret):
    return (True, tuple(params), impl, ret)


FUNCTIONS = {
    "size": [_g([_ANY], _size, I), _m([_ANY], _size, I)],
    "contains": [_m([S, S], lambda s, x: x in s, B)],
    "startsWith": [_m([S, S], lambda s, x: s.startswith(x), B)],
    "endsWith": [_m([S, S], lambda s, x: s.endswith(x), B)],
    "matches": [_g([S, S], lambda s, p: _regex(p).search(s) is not None, B),
                _m([S, S], lambda s, p: _regex(p).search(s) is not None, B)],
    "int": [_g([_ANY], _to_int, I)],
    "uint": [_g([_ANY], lambda x: check_uint(int(x)), U)],
    "double": [_g([_ANY], lambda x: float(x), D)],
    "string": [_g([_ANY], _to_string, S)],
    "bool": [_g([_ANY], _to_bool, B)],
    "dyn": [_g([_ANY], lambda x: x, "dyn")],
    "type": [_g([_ANY], lambda x: CELType(type_name(x)), "type")],
    "bytes": [_g([S], lambda s: s.encode("utf-8"), "bytes"), _g(["bytes"], lambda b: b, "bytes")],
    # Quantity library
    "quantity": [_g([S], _quantity, Q)],
    "isQuantity": [_g([S], _is_quantity, B)],
    "sign": [_g([Q], lambda q: (q.nanos > 0) - (q.nanos < 0), I)],
    "isInteger": [_m([Q], lambda q: q.nanos % 10**9 == 0, B)],
    "asInteger": [_m([Q], _as_integer, I)],
    "asApproximateFloat": [_m([Q], lambda q: q.nanos / 1e9, D)],
    "add": [_m([Q, Q], _q_add, Q), _m([Q, I], _q_add, Q)],
    "sub": [_m([Q, Q], _q_sub, Q), _m([Q, I], _q_sub, Q)],
    "isGreaterThan": [_m([Q, Q], lambda a, b: a.nanos > b.nanos, B),
                      _m([V, V], lambda a, b: a.compare(b) > 0, B)],
    "isLessThan": [_m([Q, Q], lambda a, b: a.nanos < b.nanos, B),
                   _m([V, V], lambda a, b: a.compare(b) < 0, B)],
    "compareTo": [_m([Q, Q], lambda a, b: (a.nanos > b.nanos) - (a.nanos < b.nanos), I),
                  _m([V, V], _cmp_int, I)],
    # Semver library (version 1: the normalizing overloads)
    "semver": [_g([S], _semver, V), _g([S, B], _semver, V)],
    "isSemver": [_g([S], _is_semver, B), _g([S, B], _is_semver, B)],
    "major": [_m([V], lambda v: v.major, I)],
    "minor": [_m([V], lambda v: v.minor, I)],
    "patch": [_m([V], lambda v: v.patch, I)],
    # Lists library and cel-go's lists extension
    "isSorted": [_m([L], _sorted_check, B)],
    "sum": [_m([L], _sum, "dyn")],
    "min": [_m([L], lambda xs: _extreme(xs, -1), "dyn")],
    "max": [_m([L], lambda xs: _extreme(xs, 1), "dyn")],
    "indexOf": [_m([L, _ANY], _index_of, I), _m([S, S], lambda s, x: s.find(x), I),
                _m([S, S, I], _index_from, I)],
    "lastIndexOf": [_m([L, _ANY], _last_index_of, I), _m([S, S], lambda s, x: s.rfind(x), I),
                    _m([S, S, I], _last_index_from, I)],
    "distinct": [_m([L], _distinct, L)],
    "flatten": [_m([L], _flatten, L), _m([L, I], _flatten, L)],
    "reverse": [_m([L], lambda xs: list(reversed(xs)), L)],
    "slice": [_m([L, I, I], _slice, L)],
    "sort": [_m([L], _sort, L)],
    "lists.range": [_g([I], lambda n: list(range(n)), L)],
    # Regex library
    "find": [_m([S, S], lambda s, p: (lambda m: m.group() if m else "")(_regex(p).search(s)), S)],
    "findAll": [_m([S, S], lambda s, p: [m.group() for m in _regex(p).finditer(s)], L),
                _m([S, S, I], lambda s, p, n: [m.group() for m in _regex(p).finditer(s)][:n if n >= 0 else None], L)],
    # strings extension (version 2)
    "charAt": [_m([S, I], _char_at, S)],
    "lowerAscii": [_m([S], lambda s: "".join(c.lower() if c.isascii() else c for c in s), S)],
    "upperAscii": [_m([S], lambda s: "".join(c.upper() if c.isascii() else c for c in s), S)],
    "replace": [_m([S, S, S], _replace, S), _m([S, S, S, I], _replace, S)],
    "split": [_m([S, S], _split, L), _m([S, S, I], _split, L)],
    "substring": [_m([S, I], _substring, S), _m([S, I, I], _substring, S)],
    "trim": [_m([S], lambda s: s.strip(), S)],
    "join": [_m([L], _join, S), _m([L, S], _join, S)],
    # sets extension
    "sets.contains": [_g([L, L], lambda a, b: all(any(equals(x, y) for y in a) for x in b), B)],
    "sets.equivalent": [_g([L, L], lambda a, b: all(any(equals(x, y) for y in b) for x in a)
                           and all(any(equals(x, y) for y in a) for x in b), B)],
    "sets.intersects": [_g([L, L], lambda a, b: any(equals(x, y) for x in a for y in b), B)],
}
FUNCTIONS.update(cel_net.functions(_g, _m, S, I, B))


def _non_zero(x):
    zero = x is None or x is False or (not isinstance(x, bool) and x == 0 and is_number(x)) or \
        (isinstance(x, (str, bytes, list, dict)) and len(x) == 0)
    return NONE if zero else Optional(x)


def _value(o):
    if not o.has:
        raise CELRuntimeError("optional.none() dereference")
    return o.value


_O = "optional_type"
FUNCTIONS.update({
    "optional.of": [_g([_ANY], Optional, _O)],
    "optional.none": [_g([], lambda: NONE, _O)],
    "optional.ofNonZeroValue": [_g([_ANY], _non_zero, _O)],
    "hasValue": [_m([_O], lambda o: o.has, B)],
    "value": [_m([_O], _value, "dyn")],
    "orValue": [_m([_O, _ANY], lambda o, x: o.value if o.has else x, "dyn")],
    "or": [_m([_O, _O], lambda o, p: o if o.has else p, _O)],
})
