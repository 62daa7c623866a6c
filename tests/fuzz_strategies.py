"""Hypothesis strategies for fuzzing each reader with valid *and* invalid input.

Each strategy draws from a vocabulary of near misses -- the values a person or a generator gets
almost right (`1.2.3`, `memroy`, `In` with no values, `Gt` over `abc`, a key with two slashes,
an int where a string goes, null, a list where an object goes) mixed with valid ones, so most
examples land on the border between reading and refusing. `field_named(raw, path)` is the
check that a ValidationError points into the input.
"""
import re

from hypothesis import strategies as st

#: any JSON scalar that often confuses a reader
ODD = st.sampled_from([None, True, False, 0, -1, 1, 2 ** 31, 2 ** 63, -2 ** 63 - 1, 1.5, float("inf"), "", " ",
                       "x", "1", "-1", [], {}, [None], {"a": 1}])

#: as apimachinery's ParseQuantity reads them (checked against it: "e3", "Gi", "-" and "." are 0)
GOOD_QUANTITIES = ["0", "1", "100m", "1.5", "0.001", "1Gi", "512Mi", "1e3", "1E3", "2k", "1M", "5G", "1Ti",
                   "+1", "1.", ".5", "1n", "10u", "7Ei", "9223372036854775807", "1e-3", "0.0000000001",
                   "e3", "Gi", "-", "."]
BAD_QUANTITIES = ["1.2.3", "--1", "1Kii", "1e", " 1", "1 ", "0x10", "1,5", "1gi", "1KB", "1.5.Gi",
                  "∞", "NaN", "1Mi1", "1_000", "१"]
#: read by ParseQuantity but refused here: no int64 arithmetic of kube-scheduler's holds it
TOO_LARGE = ["1e1000000"]


@st.composite
def quantities(draw):
    """A Quantity string, valid or not, or something that is not a string at all."""
    kind = draw(st.integers(0, 9))
    if kind < 4:
        return draw(st.sampled_from(GOOD_QUANTITIES))
    if kind < 7:
        return draw(st.sampled_from(BAD_QUANTITIES + TOO_LARGE))
    if kind < 8:    # built from parts: sign, digits, fraction, suffix
        sign = draw(st.sampled_from(["", "+", "-"]))
        digits = draw(st.text("0123456789", min_size=0, max_size=25))
        frac = draw(st.sampled_from(["", ".", "." + draw(st.text("0123456789", max_size=12))]))
        suffix = draw(st.sampled_from(["", "m", "k", "Ki", "M", "Mi", "G", "Gi", "E", "Ei", "n", "u", "e9", "E-2",
                                       "e+3", "i", "K", "mi"]))
        return sign + digits + frac + suffix
    return draw(ODD)


LABEL_KEYS = ["app", "zone", "topology.kubernetes.io/zone", "kubernetes.io/hostname", "example.com/tier", "a/b/c",
              "/x", "Ex.com/x", "bad key", "-app", "k" * 64, "", "app_", "x.y/", "a" * 250 + ".com/k"]
LABEL_VALUES = ["web", "", "a b", "-x", "x-", "v" * 63, "v" * 64, "my_value", "12345", "a.b", "ü"]
SELECTOR_OPS = ["In", "NotIn", "Exists", "DoesNotExist", "in", "Gt", "Equals", ""]
NODE_OPS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "gt", "Equal", ""]
NUMBERS = ["1", "-5", "abc", "9223372036854775808", "+3", "1.5", ""]


def maybe(value_strategy):
    """The value, or an odd JSON value in its place, or (None) the key left out."""
    return st.one_of(value_strategy, value_strategy, value_strategy, ODD)


def _drop_none(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


@st.composite
def label_maps(draw):
    return draw(maybe(st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=3)))


@st.composite
def label_selectors(draw):
    """A metav1.LabelSelector: matchLabels and matchExpressions with right and wrong operators
    and value counts."""
    exprs = draw(maybe(st.lists(st.fixed_dictionaries({
        "key": maybe(st.sampled_from(LABEL_KEYS)), "operator": maybe(st.sampled_from(SELECTOR_OPS)),
        "values": maybe(st.lists(st.sampled_from(LABEL_VALUES), max_size=3))}), max_size=3)))
    return _drop_none({"matchLabels": draw(label_maps()), "matchExpressions": exprs})


@st.composite
def node_selector_terms(draw):
    req = st.fixed_dictionaries({"key": maybe(st.sampled_from(LABEL_KEYS + ["metadata.name"])),
                                 "operator": maybe(st.sampled_from(NODE_OPS)),
                                 "values": maybe(st.lists(st.sampled_from(LABEL_VALUES + NUMBERS), max_size=3))})
    return _drop_none({"matchExpressions": draw(maybe(st.lists(req, max_size=3))),
                       "matchFields": draw(st.one_of(st.none(), st.lists(req, max_size=2)))})


@st.composite
def node_affinities(draw):
    required = draw(st.one_of(st.none(), st.fixed_dictionaries(
        {"nodeSelectorTerms": maybe(st.lists(node_selector_terms(), max_size=3))}), ODD))
    preferred = draw(st.one_of(st.none(), st.lists(st.fixed_dictionaries({
        "weight": maybe(st.integers(-2, 102)), "preference": maybe(node_selector_terms())}), max_size=3)))
    return _drop_none({"requiredDuringSchedulingIgnoredDuringExecution": required,
                       "preferredDuringSchedulingIgnoredDuringExecution": preferred})


TOPOLOGY_KEYS = ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "zone", "", "a b", "nowhere"]


@st.composite
def affinity_terms(draw):
    return _drop_none({
        "topologyKey": draw(maybe(st.sampled_from(TOPOLOGY_KEYS))),
        "labelSelector": draw(st.one_of(st.none(), label_selectors())),
        "namespaceSelector": draw(st.one_of(st.none(), label_selectors())),
        "namespaces": draw(st.one_of(st.none(), st.lists(st.sampled_from(["default", "team-a", "Bad_NS", ""]),
                                                         max_size=2))),
        "matchLabelKeys": draw(st.one_of(st.none(), st.lists(st.sampled_from(LABEL_KEYS[:4]), max_size=2))),
        "mismatchLabelKeys": draw(st.one_of(st.none(), st.lists(st.sampled_from(LABEL_KEYS[:4]), max_size=2))),
    })


@st.composite
def pod_affinities(draw):
    def block():
        return _drop_none({
            "requiredDuringSchedulingIgnoredDuringExecution": draw(st.one_of(
                st.none(), st.lists(affinity_terms(), max_size=2))),
            "preferredDuringSchedulingIgnoredDuringExecution": draw(st.one_of(st.none(), st.lists(
                st.fixed_dictionaries({"weight": maybe(st.integers(-1, 101)), "podAffinityTerm": maybe(affinity_terms())}),
                max_size=2)))})
    return _drop_none({"podAffinity": block() if draw(st.booleans()) else None,
                       "podAntiAffinity": block() if draw(st.booleans()) else None})


@st.composite
def tolerations(draw):
    return draw(st.lists(st.fixed_dictionaries({
        "key": maybe(st.sampled_from(LABEL_KEYS)), "operator": maybe(st.sampled_from(["Equal", "Exists", "", "exists"])),
        "value": maybe(st.sampled_from(LABEL_VALUES)),
        "effect": maybe(st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute", "", "Never"])),
        "tolerationSeconds": st.one_of(st.none(), st.integers(-5, 2 ** 40))}).map(_drop_none), max_size=3))


@st.composite
def spread_constraints(draw):
    return draw(st.lists(st.fixed_dictionaries({
        "maxSkew": maybe(st.integers(-1, 3)), "topologyKey": maybe(st.sampled_from(TOPOLOGY_KEYS)),
        "whenUnsatisfiable": maybe(st.sampled_from(["DoNotSchedule", "ScheduleAnyway", "Never", ""])),
        "minDomains": st.one_of(st.none(), maybe(st.integers(-1, 3))),
        "labelSelector": st.one_of(st.none(), label_selectors()),
        "matchLabelKeys": st.one_of(st.none(), st.lists(st.sampled_from(LABEL_KEYS[:4]), max_size=2)),
        "nodeAffinityPolicy": st.one_of(st.none(), st.sampled_from(["Honor", "Ignore", "Sometimes"])),
        "nodeTaintsPolicy": st.one_of(st.none(), st.sampled_from(["Honor", "Ignore", "honor"]))}).map(_drop_none),
        max_size=3))


@st.composite
def pod_specs(draw):
    """A pod spec touching every reader part: resources, selectors, affinity, tolerations,
    spread, ports, priority, gates, volumes."""
    resources = _drop_none({
        "requests": draw(st.one_of(st.none(), st.dictionaries(st.sampled_from(
            ["cpu", "memory", "ephemeral-storage", "example.com/gpu", "memroy", "hugepages-2Mi", "pods",
             "kubernetes.io/x", "nvidia.com/gpu"]), quantities(), max_size=3))),
        "limits": draw(st.one_of(st.none(), st.dictionaries(st.sampled_from(["cpu", "memory", "example.com/gpu"]),
                                                            quantities(), max_size=2)))})
    container = _drop_none({"name": "c", "image": draw(st.sampled_from(["nginx", "nginx:1.27", "", "a/b:c"])),
                            "resources": resources,
                            "ports": draw(st.one_of(st.none(), st.lists(st.fixed_dictionaries({
                                "containerPort": maybe(st.integers(-1, 70000)),
                                "hostPort": st.one_of(st.none(), maybe(st.integers(-1, 70000))),
                                "protocol": st.one_of(st.none(), st.sampled_from(["TCP", "UDP", "SCTP", "HTTP"]))
                            }).map(_drop_none), max_size=2)))})
    spec = {"containers": [container]}
    optional = {
        "nodeSelector": label_maps(), "tolerations": tolerations(), "topologySpreadConstraints": spread_constraints(),
        "affinity": st.fixed_dictionaries({"nodeAffinity": node_affinities()}) | pod_affinities(),
        "priority": st.integers(-2 ** 31 - 1, 2 ** 31), "priorityClassName": st.sampled_from(["", "high", "High"]),
        "preemptionPolicy": st.sampled_from(["Never", "PreemptLowerPriority", "Sometimes"]),
        "schedulingGates": st.lists(st.fixed_dictionaries({"name": st.sampled_from(["g", ""])}), max_size=1),
        "overhead": st.dictionaries(st.sampled_from(["cpu", "memory"]), quantities(), max_size=1),
        "nodeName": st.sampled_from(["", "n0", "Node_1", "missing"]),
        "volumes": st.lists(st.one_of(
            st.fixed_dictionaries({"name": st.sampled_from(["v", "", "V"]),
                                   "persistentVolumeClaim": st.fixed_dictionaries({"claimName": st.sampled_from(
                                       ["c", "", "missing"])})}),
            st.fixed_dictionaries({"name": st.just("e"), "emptyDir": st.just({})}), ODD), max_size=2),
    }
    for key, strategy in optional.items():
        if draw(st.integers(0, 3)) == 0:
            spec[key] = draw(strategy)
    return spec


@st.composite
def pods(draw):
    meta = _drop_none({"name": draw(st.sampled_from(["web-1", "web-2", "Web_1", "p-1-x_y", "a" * 254])),
                       "namespace": draw(st.sampled_from([None, "default", "team-a", "Team", "a.b"])),
                       "labels": draw(st.one_of(st.none(), label_maps()))})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": draw(pod_specs())}


@st.composite
def nodes(draw):
    taints = draw(st.lists(st.fixed_dictionaries({
        "key": maybe(st.sampled_from(LABEL_KEYS)), "value": st.one_of(st.none(), st.sampled_from(LABEL_VALUES)),
        "effect": maybe(st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute", "", "Never"]))}).map(_drop_none),
        max_size=3))
    alloc = draw(st.dictionaries(st.sampled_from(["cpu", "memory", "pods", "ephemeral-storage", "example.com/gpu",
                                                  "hugepages-1Gi"]), quantities(), max_size=4))
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": _drop_none({"name": draw(st.sampled_from(["n9", "n-9.example.com", "Node_9", ""])),
                                    "labels": draw(st.one_of(st.none(), label_maps()))}),
            "spec": _drop_none({"taints": taints or None, "unschedulable": draw(st.one_of(st.none(), ODD))}),
            "status": {draw(st.sampled_from(["allocatable", "capacity"])): alloc}}


PLUGINS = ["NodeResourcesFit", "NodeAffinity", "PodTopologySpread", "InterPodAffinity", "TaintToleration",
           "ImageLocality", "NodeResourcesBalancedAllocation", "DefaultPreemption", "VolumeBinding", "NodePorts",
           "NodeName", "NodeUnschedulable", "PrioritySort", "DefaultBinder", "Nope", ""]
ARGS = {
    "NodeResourcesFit": st.fixed_dictionaries({"scoringStrategy": maybe(st.fixed_dictionaries({
        "type": maybe(st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio", "Most"])),
        "resources": maybe(st.lists(st.fixed_dictionaries({"name": maybe(st.sampled_from(["cpu", "memory", "x y"])),
                                                           "weight": maybe(st.integers(-1, 101))}), max_size=2)),
        "requestedToCapacityRatio": maybe(st.fixed_dictionaries({"shape": maybe(st.lists(st.fixed_dictionaries({
            "utilization": maybe(st.integers(-1, 101)), "score": maybe(st.integers(-1, 11))}), max_size=3))}))}))}),
    "PodTopologySpread": st.fixed_dictionaries({
        "defaultingType": maybe(st.sampled_from(["System", "List", "Other"])),
        "defaultConstraints": maybe(spread_constraints())}),
    "InterPodAffinity": st.fixed_dictionaries({"hardPodAffinityWeight": maybe(st.integers(-1, 101)),
                                               "ignorePreferredTermsOfExistingPods": maybe(st.booleans())}),
    "NodeAffinity": st.fixed_dictionaries({"addedAffinity": maybe(node_affinities())}),
    "DefaultPreemption": st.fixed_dictionaries({"minCandidateNodesPercentage": maybe(st.integers(-1, 101)),
                                                "minCandidateNodesAbsolute": maybe(st.integers(-1, 200))}),
    "NodeResourcesBalancedAllocation": st.fixed_dictionaries({"resources": maybe(st.lists(st.fixed_dictionaries(
        {"name": maybe(st.sampled_from(["cpu", "memory"])), "weight": maybe(st.integers(-1, 101))}), max_size=2))}),
}


@st.composite
def configurations(draw):
    """A KubeSchedulerConfiguration: profiles, plugin sets with right and wrong names and
    weights, plugin args of every configurable in-tree plugin."""
    def plugin_set():
        return draw(st.lists(st.fixed_dictionaries({"name": maybe(st.sampled_from(PLUGINS)),
                                                    "weight": st.one_of(st.none(), maybe(st.integers(-1, 101)))}
                                                   ).map(_drop_none), max_size=2))
    profiles = []
    for i in range(draw(st.integers(0, 2))):
        points = {p: _drop_none({"enabled": plugin_set(), "disabled": plugin_set() if draw(st.booleans()) else None})
                  for p in draw(st.lists(st.sampled_from(["filter", "score", "preFilter", "multiPoint", "bind", "nope"]),
                                         max_size=2, unique=True))}
        args = [{"name": name, "args": draw(ARGS[name])}
                for name in draw(st.lists(st.sampled_from(sorted(ARGS)), max_size=2, unique=True))]
        profiles.append(_drop_none({"schedulerName": draw(maybe(st.sampled_from(
            ["default-scheduler", f"s{i}", ""]))), "plugins": points or None, "pluginConfig": args or None}))
    return _drop_none({"apiVersion": draw(st.sampled_from(["kubescheduler.config.k8s.io/v1",
                                                          "kubescheduler.config.k8s.io/v1beta3"])),
                       "kind": draw(st.sampled_from(["KubeSchedulerConfiguration", "KubeSchedulerConfig"])),
                       "percentageOfNodesToScore": draw(st.one_of(st.none(), maybe(st.integers(-1, 101)))),
                       "profiles": profiles or None})


@st.composite
def watch_streams(draw, seed_pods, seed_nodes):
    """The text of a watch-event stream: events of pods and nodes (valid seeds and fuzzed
    objects), PDBs and namespaces, with right and wrong types and times, and broken lines."""
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            lines.append(draw(st.sampled_from(["{", "not json", "[]", "null", '{"type": "ADDED"}', "1"])))
            continue
        obj = draw(st.one_of(st.sampled_from(seed_pods), st.sampled_from(seed_nodes), pods(), nodes(),
                             st.just({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}),
                             st.just({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                      "metadata": {"name": "b", "namespace": "default"},
                                      "spec": {"maxUnavailable": draw(st.sampled_from([1, "50%", "150%", -1]))}})))
        event = _drop_none({"type": draw(maybe(st.sampled_from(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]))),
                            "object": obj,
                            "time": draw(st.one_of(st.none(), st.sampled_from(
                                ["2025-01-01T00:00:00Z", "2025-13-01T00:00:00Z", "yesterday", 5, -1, 1.5]))),
                            "extra": draw(st.one_of(st.none(), st.none(), st.just(1)))})
        if kind == 1:
            event = obj     # a bare object (kubectl get --watch without --output-watch-events)
        lines.append(_json(event))
    return "\n".join(lines) + "\n"


def _json(value) -> str:
    import json
    return json.dumps(value)


_MISSING = re.compile(r"[^.\[\]]+(\.[^.\[\]]+)*\Z")
_INDEX = re.compile(r"\[(\d+|\*)\]")


def field_named(raw, path: str) -> bool:
    """`path` (a ValidationError's field, e.g. `spec.containers[0].resources.requests.cpu`)
    leads into `raw`: each step exists, except that the fields after the last existing one may
    be missing (required fields; never a list element), and an `[*]` step may stand for any
    element. Keys with dots (`example.com/gpu`) are matched
    whole, longest first."""
    return _walk(raw, path)


def _walk(node, rest: str) -> bool:
    if rest.startswith("."):
        rest = rest[1:]
    if not rest:
        return True
    if rest.startswith("{"):            # e.g. {topologyKey, whenUnsatisfiable}: names a pair
        return True
    if isinstance(node, list):
        m = _INDEX.match(rest)
        if not m:
            return False
        after = rest[m.end():]
        if m.group(1) == "*":
            return any(_walk(x, after) for x in node) or not node
        i = int(m.group(1))
        return i < len(node) and _walk(node[i], after)
    if node is None:
        node = {}
    if isinstance(node, dict):
        keys = sorted((k for k in node if isinstance(k, str) and k and rest.startswith(k)
                       and (len(rest) == len(k) or rest[len(k)] in ".[")), key=len, reverse=True)
        if any(_walk(node[k], rest[len(k):]) for k in keys):
            return True
        if rest.startswith("["):         # [key]: the key may itself hold "]" or "."
            ends = [j for j, ch in enumerate(rest) if ch == "]"]
            return any(rest[1:j] in node and _walk(node[rest[1:j]], rest[j + 1:]) for j in ends)
        return _MISSING.match(rest) is not None        # missing fields (required ones), no element
    return False
