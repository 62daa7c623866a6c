"""Checks a parsed CEL expression as cel-go's checker does where the types are known, and
turns it into Python closures ``fn(vars) -> value``.

Static types are names: the primitives (``int``, ``uint``, ``double``, ``string``, ``bool``,
``bytes``, ``null_type``), ``list``, ``map``, ``kubernetes.Quantity``, ``kubernetes.Semver``,
the ``device`` variable's parts, ``optional_type``, ``type``, ``any`` (an attribute value)
and ``dyn`` (not known). A mismatch between known types is cel-go's compile error; anything
else is decided at run time.
"""
from __future__ import annotations

import re

from .cel_lib import FUNCTIONS, MACRO_NAMES, NOT_IMPLEMENTED, call, operator
from .cel_values import (CELCompileError, CELRuntimeError, NO_SUCH_OVERLOAD, compile_error, is_number,
                         lookup, shown, type_name, MISSING, NONE, TYPE_NAMES, CELType, Optional)

_DEVICE_FIELDS = {"driver": "string", "allowMultipleAllocations": "bool", "attributes": "attrs", "capacity": "caps"}
_INNER = {"attrs": "attrmap", "attrmap": "any", "caps": "capmap", "capmap": "kubernetes.Quantity"}
_UNKNOWN = ("dyn", "any")
_CONVERSIONS = frozenset({"int", "uint", "double", "bool", "string", "bytes"})
_NAMESPACES = ("sets", "lists", "strings", "math", "base64", "ip", "optional")
_EMPTY: dict = {}


def _map_like(t: str) -> bool:
    return t in ("map", "attrs", "attrmap", "caps", "capmap", "device")


class Checker:
    """One expression's checker and closure builder."""

    def __init__(self, src: str):
        self.src = src
        self.scopes: list[dict[str, str]] = [{"device": "device", **{t: "type" for t in TYPE_NAMES}}]

    def error(self, pos: int, msg: str) -> CELCompileError:
        return compile_error(self.src, pos, msg)

    def compile(self, node):
        return getattr(self, "_" + node[0])(node)

    # -- leaves
    def _lit(self, node):
        value = node[2]
        return (lambda v: value), type_name(value)

    def _ident(self, node):
        name = node[2]
        if name in TYPE_NAMES and not any(name in s for s in self.scopes[1:]):
            value = CELType(name)
            return (lambda v: value), "type"
        for scope in reversed(self.scopes):
            if name in scope:
                return (lambda v: v[name]), scope[name]
        raise self.error(node[1], f"undeclared reference to '{name}' (in container '')")

    # -- field access
    def _select(self, node):
        _, pos, operand, field = node
        fn, typ = self.compile(operand)
        if typ == "device":
            if field not in _DEVICE_FIELDS:
                raise self.error(pos, f"undefined field '{field}'")
            return (lambda v: fn(v)[field]), _DEVICE_FIELDS[field]
        if typ in _INNER or typ in ("map", *_UNKNOWN):
            return _getter(fn, lambda v: field, typ), _INNER.get(typ, "dyn")
        raise self.error(pos, f"type '{shown(typ)}' does not support field selection")

    def _index(self, node):
        _, pos, operand, key = node
        fn, typ = self.compile(operand)
        kfn, ktyp = self.compile(key)
        if typ in _INNER and ktyp not in ("string", *_UNKNOWN):
            raise self.error(pos, f"found no matching overload for '_[_]' applied to '({shown(typ)}, {ktyp})'")
        if typ.startswith("list") and ktyp not in ("int", "uint", "double", *_UNKNOWN):
            raise self.error(pos, f"found no matching overload for '_[_]' applied to '(list, {ktyp})'")
        return _getter(fn, kfn, typ), _INNER.get(typ, "dyn")

    def _has(self, node):
        _, pos, operand, field = node
        fn, typ = self.compile(operand)
        if typ == "device":
            if field not in _DEVICE_FIELDS:
                raise self.error(pos, f"undefined field '{field}'")
            return (lambda v: True), "bool"

        def has(v):
            m = fn(v)
            if isinstance(m, dict):
                return field in m
            raise CELRuntimeError(NO_SUCH_OVERLOAD)
        return has, "bool"

    # -- optional selection: x.?f, x[?k]
    def _optselect(self, node):
        _, pos, operand, field = node
        fn, typ = self.compile(operand)
        if typ == "device" and field not in _DEVICE_FIELDS:
            raise self.error(pos, f"undefined field '{field}'")
        return _opt_getter(fn, lambda v: field), "optional_type"

    def _optindex(self, node):
        _, pos, operand, key = node
        fn, _ = self.compile(operand)
        kfn, _ = self.compile(key)
        return _opt_getter(fn, kfn), "optional_type"

    def _optelem(self, node):
        fn, _ = self.compile(node[2])
        return fn, "optelem"

    # -- aggregates
    def _list(self, node):
        items = [self.compile(n) for n in node[2]]
        known = {t for _, t in items if t not in (*_UNKNOWN, "optelem")}
        if len(known) > 1:
            first = items[0][1]
            for (_, t), n in zip(items[1:], node[2][1:]):
                if t != first and t not in (*_UNKNOWN, "optelem") and first != "optelem":
                    raise self.error(n[1], f"expected type '{first}' but found '{t}'")
        fns = [(f, t == "optelem") for f, t in items]
        kinds = {t for _, t in items}
        typ = f"list({shown(kinds.pop())})" if len(kinds) == 1 and not kinds & {*_UNKNOWN, "optelem"} else "list"
        if not any(o for _, o in fns):
            plain = [f for f, _ in fns]
            return (lambda v: [f(v) for f in plain]), typ

        def build(v):
            out = []
            for f, optional in fns:
                x = f(v)
                if not optional:
                    out.append(x)
                elif _unwrap(x).has:
                    out.append(x.value)
            return out
        return build, typ

    def _map(self, node):
        entries = [(self.compile(k)[0], self.compile(val)[0], val[0] == "optelem") for k, val in node[2]]

        def build(v):
            out: dict = {}
            for kf, vf, optional in entries:
                key = kf(v)
                if lookup(out, key) is not MISSING:
                    raise CELRuntimeError(f"Failed with repeated key: {key}")
                x = vf(v)
                if not optional:
                    out[key] = x
                elif _unwrap(x).has:
                    out[key] = x.value
            return out
        return build, "map"

    def _cond(self, node):
        _, pos, c, a, b = node
        cf, ct = self.compile(c)
        af, at = self.compile(a)
        bf, bt = self.compile(b)
        if ct not in ("bool", *_UNKNOWN) or (at != bt and at not in _UNKNOWN and bt not in _UNKNOWN):
            raise self.error(pos, f"found no matching overload for '_?_:_' applied to "
                                  f"'({shown(ct)}, {shown(at)}, {shown(bt)})'")

        def cond(v):
            c = cf(v)
            if type(c) is not bool:
                raise CELRuntimeError(NO_SUCH_OVERLOAD)
            return af(v) if c else bf(v)
        return cond, at if at == bt else "dyn"

    def _bind(self, node):
        _, pos, name, init, body = node
        init_f, init_t = self.compile(init)
        self.scopes.append({name: init_t})
        try:
            body_f, body_t = self.compile(body)
        finally:
            self.scopes.pop()

        def bind(v):
            inner = dict(v)
            inner[name] = init_f(v)
            return body_f(inner)
        return bind, body_t

    # -- calls
    def _call(self, node):
        _, pos, name, target, args = node
        if name in ("_&&_", "_||_"):
            return self._logic(node)
        if target is not None and target[0] == "ident" and target[2] in _NAMESPACES and \
                not any(target[2] in s for s in self.scopes):
            name, target = f"{target[2]}.{name}", None
        if name in NOT_IMPLEMENTED:
            raise CELCompileError(f"CEL function '{name}' of Kubernetes' CEL libraries is not implemented "
                                  "by kschedcore")
        tf, tt = self.compile(target) if target is not None else (None, None)
        compiled = [self.compile(a) for a in args]
        fns, types = [f for f, _ in compiled], [t for _, t in compiled]
        if name.startswith("_") or name in ("!_", "-_", "@in"):
            return operator(self, pos, name, fns, types)
        if name not in FUNCTIONS:
            raise self.error(pos, f"undeclared reference to '{name}' (in container '')")
        if name == "matches" and args and args[-1][0] == "lit" and isinstance(args[-1][2], str):
            try:
                re.compile(args[-1][2])
            except re.error:
                raise self.error(args[-1][1], "invalid matches argument") from None
        fn, typ = call(self, pos, name, tf, tt, fns, types)
        if name in _CONVERSIONS and target is None and all(a[0] == "lit" for a in args):
            try:           # cel-go folds a conversion of constants when it makes the program
                fn({})
            except CELRuntimeError as err:
                raise CELCompileError(f"program instantiation failed: {err}") from None
        return fn, typ

    def _logic(self, node):
        _, pos, name, _, args = node
        (lf, lt), (rf, rt) = self.compile(args[0]), self.compile(args[1])
        for t, arg in ((lt, args[0]), (rt, args[1])):
            if t not in ("bool", *_UNKNOWN):
                raise self.error(arg[1], f"expected type 'bool' but found '{shown(t)}'")
        decisive = name == "_||_"       # the value that decides: true for ||, false for &&

        def logic(v):
            left_err = None
            try:
                left = lf(v)
                if type(left) is not bool:
                    raise CELRuntimeError(NO_SUCH_OVERLOAD)
                if left is decisive:
                    return decisive
            except CELRuntimeError as err:
                left_err = err
            right = rf(v)
            if type(right) is not bool:
                raise CELRuntimeError(NO_SUCH_OVERLOAD)
            if right is decisive:
                return decisive
            if left_err is not None:
                raise left_err
            return not decisive
        return logic, "bool"

    # -- comprehensions (cel-go's macros)
    def _comp(self, node):
        _, pos, macro, target, it1, it2, rest = node
        rf, rt = self.compile(target)
        if not rt.startswith("list") and rt not in ("map", "optional_type", *_UNKNOWN) and not _map_like(rt):
            raise self.error(pos, f"expression of type '{shown(rt)}' cannot be range of a comprehension "
                             "(must be list, map, or dynamic)")
        scope = {it1: "dyn"} if it2 is None else {it1: "dyn", it2: "dyn"}
        self.scopes.append(scope)
        try:
            body = [self.compile(n) for n in rest]
        finally:
            self.scopes.pop()
        fns = [f for f, _ in body]
        kind = "bool" if macro in MACRO_NAMES else "optional_type" if macro.startswith("opt") else \
            "map" if macro == "transformMap" else "list"
        return MACROS[macro](rf, it1, it2, fns), kind


def _unwrap(x) -> Optional:
    if not isinstance(x, Optional):
        raise CELRuntimeError(NO_SUCH_OVERLOAD)
    return x


def _opt_getter(fn, kfn):
    """``x.?f`` / ``x[?k]``: optional.of the entry, or optional.none() when it is absent."""
    plain = _getter(fn, kfn, "dyn")

    def get(v):
        try:
            found = plain(v)
        except CELRuntimeError as err:
            if str(err).startswith("no such key") or str(err).startswith("index out of bounds"):
                return NONE
            raise
        return found if isinstance(found, Optional) else Optional(found)
    return get


def _getter(fn, kfn, typ):
    def get(v):
        m = fn(v)
        key = kfn(v)
        if isinstance(m, Optional):         # selection on an optional stays optional
            if not m.has:
                return m
            inner = _getter(lambda _: m.value, lambda _: key, typ)(v)
            return inner if isinstance(inner, Optional) else Optional(inner)
        if isinstance(m, dict):
            if type(m).__name__ == "DomainMap":
                return m.get(key, _EMPTY)
            found = lookup(m, key)
            if found is MISSING:
                raise CELRuntimeError(f"no such key: {_fmt(key)}")
            return found
        if isinstance(m, list):
            return _list_index(m, key)
        if isinstance(key, str):
            raise CELRuntimeError(f"no such key: {key}")
        raise CELRuntimeError(NO_SUCH_OVERLOAD)
    return get


def _fmt(key) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _list_index(items: list, key):
    if not is_number(key):
        raise CELRuntimeError(NO_SUCH_OVERLOAD)
    if isinstance(key, float):
        if key != int(key):
            raise CELRuntimeError(f"unsupported index value {key} in list")
        key = int(key)
    if not 0 <= key < len(items):
        raise CELRuntimeError(f"index out of bounds: {key}")
    return items[key]


def _range(value):
    """The iteration range of a comprehension: a list's (index, element) or a map's (key, value)."""
    if isinstance(value, list):
        return list(enumerate(value))
    if isinstance(value, dict):
        return list(value.items())
    raise CELRuntimeError(NO_SUCH_OVERLOAD)


def _scope(v, it1, it2, a, b):
    inner = dict(v)
    if it2 is None:
        inner[it1] = a
    else:
        inner[it1], inner[it2] = a, b
    return inner


def _pairs(rf, it1, it2, v):
    """Each iteration's variables: one variable takes a list's elements or a map's keys."""
    out = []
    value = rf(v)
    for k, x in _range(value):
        if it2 is None:
            out.append(_scope(v, it1, None, x if isinstance(value, list) else k, None))
        else:
            out.append(_scope(v, it1, it2, k, x))
    return out


def _quantifier(decides: bool):
    """all() (decides on False) and exists() (decides on True), as cel-go folds them: an error
    or a non-bool is absorbed by a deciding element anywhere, else the first error is raised."""
    def macro(rf, it1, it2, fns):
        pred = fns[0]

        def run(v):
            err = None
            for inner in _pairs(rf, it1, it2, v):
                try:
                    r = pred(inner)
                except CELRuntimeError as e:
                    err = err or e
                    continue
                if r is decides:
                    return decides
                if type(r) is not bool:
                    err = err or CELRuntimeError(NO_SUCH_OVERLOAD)
            if err is not None:
                raise err
            return not decides
        return run
    return macro


_all = _quantifier(False)
_exists = _quantifier(True)


def _exists_one(rf, it1, it2, fns):
    pred = fns[0]

    def run(v):
        n = 0
        for inner in _pairs(rf, it1, it2, v):
            r = pred(inner)
            if type(r) is not bool:
                raise CELRuntimeError(NO_SUCH_OVERLOAD)
            n += r
        return n == 1
    return run


def _map_macro(rf, it1, it2, fns):
    keep, transform = (fns[0], fns[1]) if len(fns) == 2 else (None, fns[0])

    def run(v):
        out = []
        for inner in _pairs(rf, it1, it2, v):
            if keep is not None:
                k = keep(inner)
                if type(k) is not bool:
                    raise CELRuntimeError(NO_SUCH_OVERLOAD)
                if not k:
                    continue
            out.append(transform(inner))
        return out
    return run


def _filter(rf, it1, it2, fns):
    pred = fns[0]

    def run(v):
        out = []
        for inner in _pairs(rf, it1, it2, v):
            r = pred(inner)
            if type(r) is not bool:
                raise CELRuntimeError(NO_SUCH_OVERLOAD)
            if r:
                out.append(inner[it1])
        return out
    return run


def _transform_map(rf, it1, it2, fns):
    keep, transform = (fns[0], fns[1]) if len(fns) == 2 else (None, fns[0])

    def run(v):
        out = {}
        for inner in _pairs(rf, it1, it2, v):
            if keep is not None and keep(inner) is not True:
                continue
            out[inner[it1]] = transform(inner)
        return out
    return run


def _optional_map(wrap):
    """optMap (the body's value wrapped in an optional) and optFlatMap (the body's optional as
    it is): an empty optional stays empty, the body is not evaluated."""
    def macro(rf, it1, it2, fns):
        body = fns[0]

        def run(v):
            o = _unwrap(rf(v))
            if not o.has:
                return o
            inner = dict(v)
            inner[it1] = o.value
            return wrap(body(inner))
        return run
    return macro


_opt_map = _optional_map(Optional)
_opt_flat_map = _optional_map(_unwrap)


MACROS = {"optMap": _opt_map, "optFlatMap": _opt_flat_map, "all": _all, "exists": _exists,
          "exists_one": _exists_one, "existsOne": _exists_one, "map": _map_macro, "filter": _filter, "transformList": _map_macro, "transformMap": _transform_map}
