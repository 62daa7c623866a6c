"""A raw v1.Pod laid out as Go's encoding/json writes the typed object: struct fields in
declaration order (maps sorted), `resources: {}` and
`status: {}` present, quantities in their canonical form. Fields this table does not know
keep their order after the known ones."""
from typing import Any

from ..objects.quantity import parse_quantity

_TOP = ("kind", "apiVersion", "metadata", "spec", "status")
_META = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
         "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
         "ownerReferences", "finalizers", "managedFields")
_SPEC = ("volumes", "initContainers", "containers", "ephemeralContainers", "restartPolicy",
         "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
         "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork",
         "hostPID", "hostIPC", "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname",
         "subdomain", "affinity", "schedulerName", "tolerations", "hostAliases", "priorityClassName",
         "priority", "dnsConfig", "readinessGates", "runtimeClassName", "enableServiceLinks",
         "preemptionPolicy", "overhead", "topologySpreadConstraints", "setHostnameAsFQDN", "os", "hostUsers",
         "schedulingGates", "resourceClaims", "resources")
_CONTAINER = ("name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources",
              "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices",
              "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
              "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty")
_RESOURCES = ("limits", "requests", "claims")
_SORTED_MAPS = ("labels", "annotations", "nodeSelector")
_SELECTOR = ("matchLabels", "matchExpressions")
_AFFINITY_TERM = ("labelSelector", "namespaces", "topologyKey", "namespaceSelector", "matchLabelKeys",
                  "mismatchLabelKeys")
#: struct field orders of nested types, by the key that holds them (lists: their items)
_NESTED = {
    "ports": ("name", "hostPort", "containerPort", "protocol", "hostIP"),
    "env": ("name", "value", "valueFrom"),
    "tolerations": ("key", "operator", "value", "effect", "tolerationSeconds"),
    "topologySpreadConstraints": ("maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
                                  "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"),
    "affinity": ("nodeAffinity", "podAffinity", "podAntiAffinity"),
    "nodeAffinity": ("requiredDuringSchedulingIgnoredDuringExecution",
                     "preferredDuringSchedulingIgnoredDuringExecution"),
    "nodeSelectorTerms": ("matchExpressions", "matchFields"),
    "matchExpressions": ("key", "operator", "values"),
    "matchFields": ("key", "operator", "values"),
    "preference": ("matchExpressions", "matchFields"),
    "labelSelector": _SELECTOR,
    "namespaceSelector": _SELECTOR,
    "podAffinityTerm": _AFFINITY_TERM,
}
_WEIGHTED = ("weight", "preference", "podAffinityTerm")


def _nested(value: Any, key: str = "") -> Any:
    """Go's field order in the structs under spec (the table above), recursively."""
    if isinstance(value, list):
        return [_nested(v, key) for v in value]
    if not isinstance(value, dict):
        return value
    order: tuple[str, ...]
    if key in ("podAffinity", "podAntiAffinity"):
        order = ("requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution")
    elif "weight" in value:
        order = _WEIGHTED
    elif key == "requiredDuringSchedulingIgnoredDuringExecution" and "topologyKey" in value:
        order = _AFFINITY_TERM
    else:
        order = _NESTED.get(key, ())
    return _ordered({k: _nested(v, k) for k, v in value.items()}, order)


def _ordered(d: dict, order: tuple[str, ...]) -> dict:
    out = {k: d[k] for k in order if k in d}
    out.update((k, v) for k, v in d.items() if k not in out)
    return out


def _quantities(m: Any) -> Any:
    return {k: str(parse_quantity(m[k])) for k in sorted(m)} if isinstance(m, dict) else m


def _resources(r: Any) -> dict:
    if not isinstance(r, dict):
        return {}
    r = {k: (_quantities(v) if k in ("limits", "requests") else v) for k, v in r.items()}
    return _ordered(r, _RESOURCES)


def _container(c: dict) -> dict:
    if not isinstance(c, dict):
        return c
    c = dict(c, resources=_resources(c.get("resources")))
    return _ordered({k: (_nested(v, k) if k in ("ports", "env") else v) for k, v in c.items()}, _CONTAINER)


def go_pod(pod: dict) -> dict:
    meta = dict(pod.get("metadata") or {})
    for k in _SORTED_MAPS:
        if isinstance(meta.get(k), dict):
            meta[k] = dict(sorted(meta[k].items()))
    spec = dict(pod.get("spec") or {})
    for k in ("containers", "initContainers"):
        if isinstance(spec.get(k), list):
            spec[k] = [_container(c) for c in spec[k]]
    if spec.get("containers") is None:
        spec["containers"] = None
    if isinstance(spec.get("nodeSelector"), dict):
        spec["nodeSelector"] = dict(sorted(spec["nodeSelector"].items()))
    if "overhead" in spec:
        spec["overhead"] = _quantities(spec["overhead"])
    if "resources" in spec:
        spec["resources"] = _resources(spec["resources"])
    for k in ("affinity", "tolerations", "topologySpreadConstraints"):
        if k in spec:
            spec[k] = _nested(spec[k], k)
    out = dict(pod, metadata=_ordered(meta, _META), spec=_ordered(spec, _SPEC))
    out.setdefault("status", {})
    return _ordered(out, _TOP)
