"""The extender protocol's JSON as Go writes and reads it (k8s.io/kube-scheduler/extender/v1).

Encoding: the structs have no json tags, so their keys are the Go field names in struct order
(`Pod`, `Nodes`, `NodeNames`, ...), nil pointers, maps and slices are `null`, map keys are
sorted, and the output is compact with `<`, `>`, `&`, U+2028 and U+2029 escaped (json.Marshal's
HTML escaping). Pod and Node objects are written as the API server served them (`Pod.raw`,
`Node.raw`). A node's bytes are kept until the node object changes (`NodeBytes`): a filter call
of a non-nodeCacheCapable extender joins the kept bytes of thousands of nodes.

Decoding: as json.Decoder.Decode into the result struct: the first JSON value of the body
(what follows it is not read), keys matched exactly or else case-insensitively, unknown keys
ignored, `null` leaves a field at its zero value, and encoding/json's error text for a body that
is not JSON or a field of the wrong type.
"""
from __future__ import annotations

import json
import threading
from typing import Any, Iterable, Sequence

_ENC = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_HTML = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def encode_value(value: Any) -> bytes:
    """`value` as json.Marshal writes it (compact, HTML-escaped, UTF-8)."""
    text = _ENC.encode(value)
    for raw, esc in _HTML:
        if raw in text:
            text = text.replace(raw, esc)
    return text.encode("utf-8", "surrogatepass")


def _sorted_map(d: dict) -> dict:
    return {k: d[k] for k in sorted(d)}


class NodeBytes:
    """Each node's JSON bytes, kept while the node's raw object is the same object (every
    change of a node makes a new Node from a new raw dict). Thread-safe."""

    def __init__(self, limit: int = 200_000):
        self._by_name: dict[str, tuple[dict, bytes]] = {}
        self._lock = threading.Lock()
        self._limit = limit

    def get(self, node) -> bytes:
        """The node's bytes (`Node.raw` encoded), encoded again only after it changed."""
        entry = self._by_name.get(node.name)
        if entry is not None and entry[0] is node.raw:
            return entry[1]
        return self.get_raw(node.name, node.raw)

    def get_raw(self, key: str, raw: dict) -> bytes:
        """The bytes of the object `raw`, kept under `key` while it is the same object."""
        entry = self._by_name.get(key)
        if entry is not None and entry[0] is raw:
            return entry[1]
        data = encode_value(raw)
        with self._lock:
            if len(self._by_name) >= self._limit:
                self._by_name.clear()
            self._by_name[key] = (raw, data)
        return data

    def node_list(self, nodes: Sequence) -> bytes:
        """A v1.NodeList of `nodes` as Go writes the one extender.go builds: empty ListMeta,
        `items` null when there are none (a nil slice)."""
        if not nodes:
            return b'{"metadata":{},"items":null}'
        get = self.get
        return b'{"metadata":{},"items":[' + b",".join([get(n) for n in nodes]) + b"]}"


def _names(nodes: Iterable) -> bytes:
    return encode_value([n.name for n in nodes])


def extender_args(pod_bytes: bytes, nodes: Sequence, cache_capable: bool, node_bytes: NodeBytes) -> bytes:
    """ExtenderArgs {Pod, Nodes, NodeNames}: node names when nodeCacheCapable (an empty slice
    is `[]`: extender.go makes it with make), else the NodeList."""
    if cache_capable:
        return b'{"Pod":' + pod_bytes + b',"Nodes":null,"NodeNames":' + _names(nodes) + b"}"
    return b'{"Pod":' + pod_bytes + b',"Nodes":' + node_bytes.node_list(nodes) + b',"NodeNames":null}'


def binding_args(name: str, namespace: str, uid: str, node: str) -> bytes:
    """ExtenderBindingArgs {PodName, PodNamespace, PodUID, Node}."""
    return encode_value({"PodName": name, "PodNamespace": namespace, "PodUID": uid, "Node": node})


def preemption_args(pod_bytes: bytes, victims: dict, cache_capable: bool) -> bytes:
    """ExtenderPreemptionArgs {Pod, NodeNameToVictims, NodeNameToMetaVictims}: `victims` maps
    a node name to (pods, numPDBViolations). nodeCacheCapable: MetaVictims with the pods' UIDs
    (convertToMetaVictims: `Pods` is never nil); else Victims with the full pods (a node with
    no victim pods has a nil slice: `null`)."""
    parts = []
    for node in sorted(victims):
        pods, pdb = victims[node]
        if cache_capable:
            body = encode_value({"Pods": [{"UID": _uid(p)} for p in pods], "NumPDBViolations": pdb})
        else:
            plist = b"[" + b",".join(encode_value(p.raw) for p in pods) + b"]" if pods else b"null"
            body = b'{"Pods":' + plist + b',"NumPDBViolations":' + str(int(pdb)).encode() + b"}"
        parts.append(encode_value(node) + b":" + body)
    mapping = b"{" + b",".join(parts) + b"}"
    if cache_capable:
        return b'{"Pod":' + pod_bytes + b',"NodeNameToVictims":null,"NodeNameToMetaVictims":' + mapping + b"}"
    return b'{"Pod":' + pod_bytes + b',"NodeNameToVictims":' + mapping + b',"NodeNameToMetaVictims":null}'


def _uid(pod) -> str:
    """metadata.uid as the API object has it ("" where unset)."""
    return str((pod.raw.get("metadata") or {}).get("uid") or "")


# ---- decoding ---------------------------------------------------------------------------------

class WireError(Exception):
    """A body encoding/json would not decode; the text is Go's error string."""


def _quote_char(c: str) -> str:
    """encoding/json's quoteChar (of the byte where the character is not ASCII)."""
    if ord(c) > 127:
        c = chr(c.encode("utf-8", "surrogatepass")[0])
    if c == "'":
        return "'\\''"
    if c == '"':
        return "'\"'"
    q = json.dumps(c, ensure_ascii=False)[1:-1]
    return f"'{q}'"


_PY_TO_GO = (
    ("Expecting property name enclosed in double quotes", "looking for beginning of object key string"),
    ("Expecting ':' delimiter", "after object key"),
    ("Invalid control character", "in string literal"),
    ("Invalid \\escape", "in string escape code"),
    ("Expecting value", "looking for beginning of value"),
)


def _reject_constant(name: str):
    raise ValueError(name)


class _Number(float):
    """A JSON number with a fraction or exponent, with its text (Go quotes it in errors)."""
    text: str


def _parse_float(text: str) -> float:
    n = _Number(text)
    n.text = text
    return n


_DEC = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_parse_float)


def decode_body(body: bytes) -> Any:
    """The first JSON value of `body`, as json.Decoder.Decode reads it; WireError with Go's
    text (`EOF`, `unexpected EOF`, `invalid character ...`) where there is none."""
    try:
        text = body.decode("utf-8", "replace")
    except Exception:  # pragma: no cover - decode with "replace" does not fail
        text = ""
    i = len(text) - len(text.lstrip(" \t\r\n"))
    if i == len(text):
        raise WireError("EOF")
    try:
        value, _ = _DEC.raw_decode(text, i)
        return value
    except json.JSONDecodeError as e:
        raise WireError(_go_syntax(text, e)) from None
    except ValueError as e:   # NaN, Infinity: not JSON
        pos = text.find(str(e), i)
        ch = text[pos] if pos >= 0 else text[i]
        raise WireError(f"invalid character {_quote_char(ch)} looking for beginning of value") from None


def _go_syntax(text: str, e: json.JSONDecodeError) -> str:
    pos = e.pos
    if pos >= len(text) or "Unterminated string" in e.msg:
        return "unexpected EOF"
    ch = text[pos]
    if e.msg.startswith("Expecting value") and ch in "tfn":
        return _literal(text, pos)
    if e.msg.startswith("Invalid \\escape"):
        return f"invalid character {_quote_char(text[pos + 1])} in string escape code"
    if e.msg.startswith("Expecting ',' delimiter"):
        where = "after array element" if _inside(text, pos) == "[" else "after object key:value pair"
        return f"invalid character {_quote_char(ch)} {where}"
    for py, go in _PY_TO_GO:
        if e.msg.startswith(py):
            return f"invalid character {_quote_char(ch)} {go}"
    return f"invalid character {_quote_char(ch)} looking for beginning of value"


def _literal(text: str, pos: int) -> str:
    """A broken true / false / null: Go names the first wrong character, or EOF."""
    word = {"t": "true", "f": "false", "n": "null"}[text[pos]]
    for i, want in enumerate(word):
        if pos + i >= len(text):
            return "unexpected EOF"
        if text[pos + i] != want:
            return f"invalid character {_quote_char(text[pos + i])} in literal {word} (expecting {_quote_char(want)})"
    return f"invalid character {_quote_char(text[pos + len(word)])} after top-level value"


def _inside(text: str, pos: int) -> str:
    """The innermost open bracket before pos ('[' or '{'), strings skipped."""
    stack, in_str, esc = [], False, False
    for c in text[:pos]:
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "[{":
            stack.append(c)
        elif c in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def _kind(value: Any) -> str:
    """encoding/json's name of a JSON value's kind in an UnmarshalTypeError."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class _Decoder:
    """Decodes into the result types, keeping the first type error as Go does (decoding goes
    on; Decode returns the first UnmarshalTypeError at the end)."""

    def __init__(self):
        self.error: str | None = None

    def fail(self, value: Any, struct: str, path: str, gotype: str, kind: str | None = None) -> None:
        if self.error is None:
            kind = kind or _kind(value)
            if struct:
                self.error = f"json: cannot unmarshal {kind} into Go struct field {struct}.{path} of type {gotype}"
            else:
                self.error = f"json: cannot unmarshal {kind} into Go value of type {gotype}"

    def fields(self, obj: dict, names: Sequence[str]) -> dict:
        """Go's key matching: an exact name, else a case-insensitive one; the last key of the
        object that matches a field sets it."""
        out: dict = {}
        folded = {n.lower(): n for n in names}
        for key, value in obj.items():
            name = key if key in names else folded.get(key.lower())
            if name is not None:
                out[name] = value
        return out

    def string(self, value, struct, path) -> str:
        if value is None:
            return ""
        if not isinstance(value, str):
            self.fail(value, struct, path, "string")
            return ""
        return value

    def int64(self, value, struct, path) -> int:
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(value, struct, path, "int64")
            return 0
        if isinstance(value, float) or not -(1 << 63) <= value < (1 << 63):
            self.fail(value, struct, path, "int64", kind=f"number {_number_text(value)}")
            return 0
        return value

    def string_list(self, value, struct, path, gotype="[]string") -> list | None:
        if value is None:
            return None
        if not isinstance(value, list):
            self.fail(value, struct, path, gotype)
            return None
        return [self.string(v, struct, path) for v in value]

    def string_map(self, value, struct, path, gotype="v1.FailedNodesMap") -> dict | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            self.fail(value, struct, path, gotype)
            return None
        return {k: self.string(v, struct, path) for k, v in value.items()}

    def done(self, result):
        if self.error is not None:
            raise WireError(self.error)
        return result


def _number_text(value) -> str:
    return getattr(value, "text", None) or str(value)


def decode_filter_result(body: bytes) -> dict:
    """ExtenderFilterResult as a dict: Nodes (list of node dicts, or None), NodeNames (list or
    None), FailedNodes, FailedAndUnresolvableNodes (dicts or None), Error (str)."""
    value = decode_body(body)
    d = _Decoder()
    out: dict[str, Any] = {"Nodes": None, "NodeNames": None, "FailedNodes": None, "FailedAndUnresolvableNodes": None,
                           "Error": ""}
    if value is None:
        return out
    if not isinstance(value, dict):
        d.fail(value, "", "", "v1.ExtenderFilterResult")
        return d.done(out)
    st = "ExtenderFilterResult"
    for key, v in d.fields(value, tuple(out)).items():   # in the document's order, as Go
        if key == "Nodes":
            out[key] = _node_list(d, v)
        elif key == "NodeNames":
            out[key] = d.string_list(v, st, key)
        elif key == "Error":
            out[key] = d.string(v, st, key)
        else:
            out[key] = d.string_map(v, st, key)
    return d.done(out)


def _node_list(d: _Decoder, value) -> list | None:
    """The items of a v1.NodeList (None for a null list; [] where items is null or absent)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        d.fail(value, "ExtenderFilterResult", "Nodes", "v1.NodeList")
        return None
    f = d.fields(value, ("items",))
    items = f.get("items")
    if items is None:
        return []
    if not isinstance(items, list):
        d.fail(items, "NodeList", "Nodes.items", "[]v1.Node")
        return []
    out = []
    for item in items:
        if item is None:
            item = {}
        if not isinstance(item, dict):
            d.fail(item, "NodeList", "Nodes.items", "v1.Node")
            continue
        out.append(item)
    return out


def decode_host_priority_list(body: bytes) -> list[tuple[str, int]]:
    """HostPriorityList as (host, score) pairs in the answer's order."""
    value = decode_body(body)
    d = _Decoder()
    if value is None:
        return []
    if not isinstance(value, list):
        d.fail(value, "", "", "v1.HostPriorityList")
        return d.done([])
    fast = _plain_priorities(value)
    if fast is not None:
        return fast
    out = []
    for item in value:
        if item is None:
            out.append(("", 0))
            continue
        if not isinstance(item, dict):
            d.fail(item, "", "", "v1.HostPriority")
            continue
        host, score = "", 0
        for key, v in d.fields(item, ("Host", "Score")).items():
            if key == "Host":
                host = d.string(v, "HostPriority", "Host")
            else:
                score = d.int64(v, "HostPriority", "Score")
        out.append((host, score))
    return d.done(out)


def _plain_priorities(value: list) -> list[tuple[str, int]] | None:
    """The common answer at once: every entry exactly {"Host": string, "Score": int64}."""
    try:
        out = [(item["Host"], item["Score"]) for item in value if len(item) == 2]
    except (TypeError, KeyError):
        return None
    if len(out) != len(value):
        return None
    for host, score in out:
        if type(host) is not str or type(score) is not int or not -(1 << 63) <= score < (1 << 63):
            return None
    return out


def decode_binding_result(body: bytes) -> str:
    """ExtenderBindingResult's Error."""
    value = decode_body(body)
    d = _Decoder()
    if value is None:
        return ""
    if not isinstance(value, dict):
        d.fail(value, "", "", "v1.ExtenderBindingResult")
        return d.done("")
    f = d.fields(value, ("Error",))
    return d.done(d.string(f.get("Error"), "ExtenderBindingResult", "Error"))


def decode_preemption_result(body: bytes) -> dict[str, tuple[list[str], int]] | None:
    """ExtenderPreemptionResult's NodeNameToMetaVictims: node -> (pod UIDs, numPDBViolations);
    None where it is null."""
    value = decode_body(body)
    d = _Decoder()
    if value is None:
        return None
    if not isinstance(value, dict):
        d.fail(value, "", "", "v1.ExtenderPreemptionResult")
        return d.done(None)
    f = d.fields(value, ("NodeNameToMetaVictims",))
    mapping = f.get("NodeNameToMetaVictims")
    if mapping is None:
        return d.done(None)
    path = "NodeNameToMetaVictims"
    if not isinstance(mapping, dict):
        d.fail(mapping, "ExtenderPreemptionResult", path, "map[string]*v1.MetaVictims")
        return d.done(None)
    out: dict = {}
    for node, mv in mapping.items():
        if mv is None:
            out[node] = ([], 0)
            continue
        if not isinstance(mv, dict):
            d.fail(mv, "ExtenderPreemptionResult", path, "v1.MetaVictims")
            continue
        uids, pdb = [], 0
        for key, v in d.fields(mv, ("Pods", "NumPDBViolations")).items():
            if key == "Pods":
                uids = _meta_pods(d, v, path)
            else:
                pdb = d.int64(v, "MetaVictims", path + ".NumPDBViolations")
        out[node] = (uids, pdb)
    return d.done(out)


def _meta_pods(d: _Decoder, pods, path: str) -> list[str]:
    """[]*MetaPod as the UIDs ("" for a null entry)."""
    if pods is None:
        return []
    if not isinstance(pods, list):
        d.fail(pods, "MetaVictims", path + ".Pods", "[]*v1.MetaPod")
        return []
    uids = []
    for mp in pods:
        if mp is None:
            uids.append("")
        elif not isinstance(mp, dict):
            d.fail(mp, "MetaVictims", path + ".Pods", "v1.MetaPod")
        else:
            uids.append(d.string(d.fields(mp, ("UID",)).get("UID"), "MetaPod", path + ".Pods.UID"))
    return uids
