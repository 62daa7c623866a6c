"""Typed access to the fields of a raw Kubernetes object, with errors that name the field."""
import re
from datetime import datetime, timezone

from ..errors import ObjectError
from .quantity import parse_quantity


class FieldReader:
    """Reads one object; every error names the object (``pod ns/name``) and the field path."""

    __slots__ = ("obj",)

    def __init__(self, obj: str) -> None:
        self.obj = obj

    def fail(self, path: str, message: str):
        raise ObjectError(self.obj, path, message)

    def _get(self, d, key, path, types, type_name, default):
        value = d.get(key, default) if d is not None else default
        if value is None:
            return default
        # bool is an int subclass; a YAML `true` is never a valid number here.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            self.fail(path, f"expected {type_name}, got {type(value).__name__} {value!r}")
        return value

    def mapping(self, d, key, path, default=None):
        v = self._get(d, key, path, (dict,), "an object", default)
        return {} if v is None else v

    def seq(self, d, key, path):
        v = self._get(d, key, path, (list,), "a list", None)
        return [] if v is None else v

    def string(self, d, key, path, default=""):
        return self._get(d, key, path, (str,), "a string", default)

    def integer(self, d, key, path, default=0):
        value = self._get(d, key, path, (int,), "an integer", default)
        if not -(1 << 63) <= value < (1 << 63):       # what the API server's decoder refuses
            self.fail(path, f"number {value} overflows int64")
        return value

    def boolean(self, d, key, path, default=False):
        return self._get(d, key, path, (bool,), "a boolean", default)

    def timestamp(self, d, key, path):
        """A metav1.Time (RFC 3339, e.g. "2025-01-01T15:43:15Z"): nanoseconds since the epoch,
        or None when absent."""
        text = self._get(d, key, path, (str,), "an RFC 3339 time", None)
        if text is None:
            return None
        ns = parse_time(text)
        if ns is None:
            self.fail(path, f'invalid time "{text}" (expected RFC 3339, e.g. "2025-01-01T00:00:00Z")')
        return ns

    def item(self, value, path):
        """An element of a list of objects."""
        if not isinstance(value, dict):
            self.fail(path, f"expected an object, got {type(value).__name__} {value!r}")
        return value

    def string_map(self, d, key, path):
        m = self.mapping(d, key, path)
        for k, v in m.items():
            if not isinstance(k, str):
                self.fail(path, f"expected string keys, got {type(k).__name__} {k!r}")
            if not isinstance(v, str):
                self.fail(f"{path}[{k}]", f"expected a string value, got {type(v).__name__} {v!r}")
        return m

    def string_list(self, d, key, path):
        items = self.seq(d, key, path)
        for i, v in enumerate(items):
            if not isinstance(v, str):
                self.fail(f"{path}[{i}]", f"expected a string, got {type(v).__name__} {v!r}")
        return items

    def int64s(self, amounts: dict, path: str) -> dict:
        """Integer amounts (cpu in millicores) must fit kube-scheduler's int64 arithmetic."""
        for name, v in amounts.items():
            if v > INT64_MAX:
                self.fail(f"{path}.{name}", f"{v} is out of range (more than 2^63-1)")
        return amounts

    def quantities(self, d, key, path, allow_negative=False):
        """A ResourceList: name -> exact Quantity."""
        out = {}
        for name, text in self.mapping(d, key, path).items():
            q = parse_quantity(text, self.obj, f"{path}.{name}")
            if not allow_negative and q.sign() < 0:
                # ValidateNonnegativeQuantity; the value as the API server shows it
                self.fail(f"{path}.{name}", f'Invalid value: "{q}": must be greater than or equal to 0')
            out[name] = q
        return out


INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def parse_go_int64(text: str):
    """strconv.ParseInt(text, 10, 64), or None: node label values for Gt/Lt and the values of
    Gt/Lt requirements (semantics §3.4)."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    value = int(text)
    return value if INT64_MIN <= value <= INT64_MAX else None


def metadata_name(reader_kind: str, raw, index_hint: str = ""):
    """Returns (namespace, name) of a raw object, or raises naming the object by position."""
    if not isinstance(raw, dict):
        raise ObjectError(f"{reader_kind} {index_hint}".strip(), "", f"expected an object, got {type(raw).__name__}")
    meta = raw.get("metadata")
    if not isinstance(meta, dict):
        raise ObjectError(f"{reader_kind} {index_hint}".strip(), "metadata", "missing or not an object")
    name = meta.get("name")
    if name is not None and not isinstance(name, str):
        raise ObjectError(f"{reader_kind} {index_hint}".strip(), "metadata.name",
                          f"expected a string, got {type(name).__name__} {name!r}")
    if not name:
        raise ObjectError(f"{reader_kind} {index_hint}".strip(), "metadata.name", "missing or empty")
    ns = meta.get("namespace")
    if ns is not None and not isinstance(ns, str):
        raise ObjectError(f"{reader_kind} {name}", "metadata.namespace", "expected a string")
    return ns or "", name


_RFC3339 = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|z|[+-]\d\d:\d\d)\Z")


def parse_time(text: str):
    """RFC 3339 (metav1.Time and MicroTime) to integer nanoseconds since the epoch; None if
    the text is not one."""
    m = _RFC3339.match(text)
    if m is None:
        return None
    y, mo, d, h, mi, s, frac, zone = m.groups()
    try:
        tz = timezone.utc if zone in "Zz" else datetime.strptime(zone.replace(":", ""), "%z").tzinfo
        t = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), tzinfo=tz)
    except ValueError:
        return None
    whole = (t - datetime(1970, 1, 1, tzinfo=timezone.utc))
    seconds = whole.days * 86400 + whole.seconds
    return seconds * 1_000_000_000 + int((frac or "0").ljust(9, "0"))
