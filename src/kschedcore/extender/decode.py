"""KubeSchedulerConfiguration v1 `extenders`, decoded strictly and validated as kube-scheduler
does (config/v1 types.go `Extender`, validation.go `validateExtenders`, scheduler.go
`buildExtenders`). Errors are one line naming the field: `extenders[0].weight: ...`."""
from __future__ import annotations

import base64

from ..objects.resources import is_extended
from ..objects.validation import go_quote, qualified_name_errors
from ..util.gomath import parse_go_duration
from .config import ExtenderConfig, ExtenderTLSConfig, ManagedResource

#: extender.go DefaultExtenderTimeout (an httpTimeout of 0 or unset)
DEFAULT_HTTP_TIMEOUT = 5.0

_STR, _BOOL, _INT = "string", "bool", "int"
_FIELDS = {"urlPrefix": _STR, "filterVerb": _STR, "preemptVerb": _STR, "prioritizeVerb": _STR,
           "weight": _INT, "bindVerb": _STR, "enableHTTPS": _BOOL, "tlsConfig": "tls",
           "httpTimeout": "duration", "nodeCacheCapable": _BOOL, "managedResources": "resources",
           "ignorable": _BOOL}
_TLS = {"insecure": _BOOL, "serverName": _STR, "certFile": _STR, "keyFile": _STR, "caFile": _STR,
        "certData": "bytes", "keyData": "bytes", "caData": "bytes"}
_RESOURCE = {"name": _STR, "ignoredByScheduler": _BOOL}
_GO_TYPES = {_STR: "string", _BOOL: "bool", _INT: "int64", "bytes": "[]uint8", "duration": "Duration"}


class ExtenderDecodeError(ValueError):
    """A field of `extenders` kube-scheduler would refuse: (path, message)."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path, self.message = path, message


def decode_extenders(raw) -> list[ExtenderConfig]:
    """The `extenders` list as ExtenderConfigs, in the configuration's order; raises
    ExtenderDecodeError (unknown field, wrong type, a validateExtenders error)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ExtenderDecodeError("extenders", "expected a list")
    out = [_extender(e, f"extenders[{i}]") for i, e in enumerate(raw)]
    validate_extenders(out)
    return out


def validate_extenders(extenders: list[ExtenderConfig]) -> None:
    """validateExtenders: a positive weight where a prioritize verb is set, managed resources
    valid extended-resource names unique across extenders, at most one binder (the first
    error, as kube-scheduler lists them)."""
    binders, seen = 0, set()
    for i, e in enumerate(extenders):
        path = f"extenders[{i}]"
        if e.prioritize_verb and e.weight <= 0:
            raise ExtenderDecodeError(f"{path}.weight",
                                      f"Invalid value: {e.weight}: must have a positive weight applied to it")
        binders += bool(e.bind_verb)
        for j, r in enumerate(e.managed_resources):
            where = f"{path}.managedResources[{j}].name"
            errs = qualified_name_errors(r.name)
            if errs:
                raise ExtenderDecodeError(where, f"Invalid value: {go_quote(r.name)}: {errs[0]}")
            if not is_extended(r.name):
                raise ExtenderDecodeError(where, f"Invalid value: {go_quote(r.name)}: is an invalid extended resource name")
            if r.name in seen:
                raise ExtenderDecodeError(where, f"Invalid value: {go_quote(r.name)}: duplicate extender managed resource name")
            seen.add(r.name)
    if binders > 1:
        raise ExtenderDecodeError("extenders", f'Invalid value: "found {binders} extenders implementing bind": '
                                               "only one extender can implement bind")


def ignored_by_scheduler(extenders: list[ExtenderConfig]) -> list[str]:
    """buildExtenders: the managed resources with ignoredByScheduler, in order (they replace
    every profile's NodeResourcesFit ignoredResources)."""
    return [r.name for e in extenders for r in e.managed_resources if r.ignored_by_scheduler]


def ordered(extenders: list) -> list:
    """buildExtenders' order: the ignorable extenders moved to the end."""
    return [e for e in extenders if not _ignorable(e)] + [e for e in extenders if _ignorable(e)]


def _ignorable(e) -> bool:
    return e.ignorable if isinstance(e, ExtenderConfig) else e.is_ignorable()


def _extender(raw, path: str) -> ExtenderConfig:
    fields = _object(raw, _FIELDS, path)
    tls = fields.get("tlsConfig")
    timeout = fields.get("httpTimeout") or 0.0
    return ExtenderConfig(
        url_prefix=fields.get("urlPrefix", ""), filter_verb=fields.get("filterVerb", ""),
        preempt_verb=fields.get("preemptVerb", ""), prioritize_verb=fields.get("prioritizeVerb", ""),
        weight=fields.get("weight", 0), bind_verb=fields.get("bindVerb", ""),
        enable_https=fields.get("enableHTTPS", False),
        tls_config=ExtenderTLSConfig(**tls) if tls is not None else None,
        http_timeout=timeout if timeout > 0 else DEFAULT_HTTP_TIMEOUT,
        node_cache_capable=fields.get("nodeCacheCapable", False),
        managed_resources=tuple(fields.get("managedResources") or ()), ignorable=fields.get("ignorable", False))


def _object(raw, schema: dict, path: str) -> dict:
    if not isinstance(raw, dict):
        raise ExtenderDecodeError(path, f"expected an object, got {_kind(raw)}")
    out = {}
    for key, value in raw.items():
        where = f"{path}.{key}"
        if key not in schema:       # worded as the configuration's other unknown fields
            raise ExtenderDecodeError("", f'strict decoding error: unknown field "{where}"')
        if value is not None:
            out[key] = _value(value, schema[key], where)
    return out


def _value(value, kind: str, path: str):
    if kind == _STR and isinstance(value, str):
        return value
    if kind == _BOOL and isinstance(value, bool):
        return value
    if kind == _INT and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "duration" and isinstance(value, str):
        seconds = parse_go_duration(value)
        if seconds is None:
            raise ExtenderDecodeError(path, f'time: invalid duration {go_quote(value)}')
        return seconds
    if kind == "bytes" and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except ValueError:
            raise ExtenderDecodeError(path, "illegal base64 data") from None
    if kind == "tls":
        return _tls(_object(value, _TLS, path))
    if kind == "resources":
        if not isinstance(value, list):
            raise ExtenderDecodeError(path, f"expected a list, got {_kind(value)}")
        return [_resource(_object(r, _RESOURCE, f"{path}[{j}]")) for j, r in enumerate(value)]
    raise ExtenderDecodeError(path, f"expected {_GO_TYPES.get(kind, kind)}, got {_kind(value)}")


def _tls(f: dict) -> dict:
    names = {"insecure": "insecure", "serverName": "server_name", "certFile": "cert_file", "keyFile": "key_file",
             "caFile": "ca_file", "certData": "cert_data", "keyData": "key_data", "caData": "ca_data"}
    return {names[k]: v for k, v in f.items()}


def _resource(f: dict) -> ManagedResource:
    return ManagedResource(f.get("name", ""), f.get("ignoredByScheduler", False))


def _kind(value) -> str:
    return {bool: "bool", int: "number", float: "number", str: "string", list: "list", dict: "object"}.get(
        type(value), type(value).__name__)
