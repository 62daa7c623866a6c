"""The API server's validation of names, labels and selectors (k8s.io/apimachinery
pkg/util/validation and pkg/apis/meta/v1/validation, pkg/apis/core/validation), with its wording.

Each ``*_errors`` function returns the list of complaints as apimachinery does (empty: valid);
``check_*`` raise the first one as an ObjectError naming the field the way the API server's
field.Error does: ``metadata.labels: Invalid value: "a b": name part must consist of ...``.
Results are cached: a cluster has few distinct names, keys and values, and every pod carries them.
"""
import json
import re
from functools import lru_cache

from ..errors import ObjectError

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character")
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                    "'.', and must start and end with an alphanumeric character")
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                      "and must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                          "'-' or '.', and must start and end with an alphanumeric character")

_QNAME = re.compile(_QNAME_FMT + r"\Z")
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT + r"\Z")
_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT + r"\Z")
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT + r"\Z")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def subdomain_errors(value: str) -> tuple:
    """IsDNS1123Subdomain, not cached: for names, which are nearly all distinct."""
    errs = []
    if len(value) > 253:
        errs.append(_max_len(253))
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return tuple(errs)


#: cached: prefixes of label keys, node names in selectors, class names repeat
dns1123_subdomain_errors = lru_cache(maxsize=4096)(subdomain_errors)


def pod_name_errors(value: str) -> tuple:
    """ValidatePodName (a DNS-1123 subdomain), except that '_' is let through: the API server
    refuses it, but kube-scheduler schedules such pods like any other (the parity workloads,
    the truth this project reproduces, name pods "p-001-preempt_big")."""
    return subdomain_errors(value.replace("_", "-"))


@lru_cache(maxsize=4096)
def dns1123_label_errors(value: str) -> tuple:
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _DNS1123_LABEL.match(value):
        if _DNS1123_SUBDOMAIN.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return tuple(errs)


@lru_cache(maxsize=8192)
def qualified_name_errors(value: str) -> tuple:
    """validation.IsQualifiedName: [DNS-1123 subdomain prefix '/'] name of at most 63 characters."""
    parts = value.split("/")
    errs = []
    if len(parts) > 2:
        return ("a qualified name " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",)
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain_errors(prefix)]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _QNAME.match(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return tuple(errs)


@lru_cache(maxsize=8192)
def label_value_errors(value: str) -> tuple:
    errs = []
    if len(value) > 63:
        errs.append(_max_len(63))
    if not _LABEL_VALUE.match(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return tuple(errs)


def go_quote(value) -> str:
    """How field.Error shows a bad value: %q for strings, %v for numbers."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)     # as Go's %q for the characters that matter
    return str(value).lower() if isinstance(value, bool) else str(value)


def invalid(obj: str, path: str, value, detail: str):
    raise ObjectError(obj, path, f"Invalid value: {go_quote(value)}: {detail}")


def check(obj: str, path: str, value, errors: tuple) -> None:
    """Raises the first complaint, as field.Invalid(path, value, msg)."""
    if errors:
        invalid(obj, path, value, errors[0])


def check_labels(obj: str, labels: dict, path: str) -> None:
    """ValidateLabels: qualified keys, label values (both reported at the map's path)."""
    for k, v in labels.items():
        check(obj, path, k, qualified_name_errors(k))
        check(obj, path, v, label_value_errors(v))


def check_annotation_keys(obj: str, annotations, path: str):
    """ValidateAnnotations: keys are qualified names (compared lower-cased); total size <= 256 KiB."""
    if not isinstance(annotations, dict):
        return
    size = 0
    for k, v in annotations.items():
        if not isinstance(k, str):
            raise ObjectError(obj, path, f"expected string keys, got {type(k).__name__} {k!r}")
        check(obj, path, k, qualified_name_errors(k.lower()))
        size += len(k) + (len(v) if isinstance(v, str) else 0)
    if size > 256 * 1024:
        raise ObjectError(obj, path, f"Too long: may not be more than {256 * 1024} bytes")


def check_meta(obj: str, namespace: str | None, name: str, meta: dict, name_errors=subdomain_errors) -> None:
    """ValidateObjectMeta: the name (by the kind's rule), the namespace (a DNS-1123 label),
    labels and annotation keys."""
    check(obj, "metadata.name", name, name_errors(name))
    if namespace:
        check(obj, "metadata.namespace", namespace, dns1123_label_errors(namespace))
    labels = meta.get("labels")
    if isinstance(labels, dict) and labels:
        try:            # a set of labels once passed passes again (10^6 pods, a few dozen sets)
            items = tuple(labels.items())
            known = items in _LABELS_PASSED
        except TypeError:
            items, known = None, False
        if not known:
            check_labels(obj, {k: v for k, v in labels.items() if isinstance(k, str) and isinstance(v, str)},
                         "metadata.labels")
            if items is not None:
                if len(_LABELS_PASSED) >= LABELS_PASSED_ENTRIES:
                    _LABELS_PASSED.clear()
                _LABELS_PASSED.add(items)
    check_annotation_keys(obj, meta.get("annotations"), "metadata.annotations")


#: label sets check_meta found valid (as (key, value) tuples), cleared when full
_LABELS_PASSED: set = set()
LABELS_PASSED_ENTRIES = 4096


INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1


def check_int32(obj: str, path: str, value: int, go_field: str):
    """A number that does not fit an int32 field: the API server's JSON decoding refuses it."""
    if not INT32_MIN <= value <= INT32_MAX:
        raise ObjectError(obj, path, f"cannot unmarshal number {value} into Go struct field {go_field} of type int32")


#: validation.go ValidateNodeFieldSelectorRequirement's words (field.Required at `values`)
FIELD_SELECTOR_VALUES = "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
_NODE_AFFINITY = "spec.affinity.nodeAffinity"


def check_node_field_selectors(obj: str, pod: dict) -> None:
    """The API server's one-value rule for the node field selectors (matchFields In / NotIn)
    of a parsed pod's node affinity. kube-scheduler does not enforce it: given such a pod (one
    that bypassed the API server, as the parity workloads' do) it schedules it, the term
    matching nothing, and so does parse_pod; this is for inputs the API server validates first."""
    na = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    required = (na.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    terms = [(f"{_NODE_AFFINITY}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]", t)
             for i, t in enumerate(required)]
    terms += [(f"{_NODE_AFFINITY}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference",
               p.get("preference") or {})
              for i, p in enumerate(na.get("preferredDuringSchedulingIgnoredDuringExecution") or [])]
    for path, term in terms:
        for j, r in enumerate(term.get("matchFields") or []):
            if r.get("operator") in ("In", "NotIn") and len(r.get("values") or []) != 1:
                raise ObjectError(obj, f"{path}.matchFields[{j}].values", f"Required value: {FIELD_SELECTOR_VALUES}")
