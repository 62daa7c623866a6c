"""Hypothesis strategies: random but valid raw Kubernetes Nodes, Pods and scoring strategies.

Small vocabularies on purpose, so that labels, taints, images and ports collide often and
every plugin has something to decide.  Everything produced is a plain JSON-like dict, as a
Kubernetes API client (or a YAML file) would hand it over.
"""
from hypothesis import strategies as st

# ---- vocabularies ------------------------------------------------------------------------------
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
HOSTNAME = "kubernetes.io/hostname"
POOL = "pool"
GEN = "example.com/gen"
FPGA = "example.com/fpga"
HUGEPAGES = "hugepages-2Mi"

ZONES = ["z1", "z2", "z3"]
POOLS = ["a", "b", "gpu"]
GENS = ["1", "2", "3", "10", "07", "x", "2a", ""]   # integers and non-integers (valid label values)
LABEL_KEYS = [ZONE, POOL, GEN, HOSTNAME, "disk"]
LABEL_VALUES = ["z1", "z2", "a", "b", "gpu", "1", "2", "3", "10", "x", "ssd", "n0", "n1"]
#: likely values per label key (requirements mostly pick from these, so that they match often)
KEY_VALUES = {ZONE: ZONES, POOL: POOLS, GEN: ["1", "2", "3", "10", "07", "x"], HOSTNAME: ["n0", "n1", "n2", "n3"],
              "disk": ["ssd", "hdd"]}
#: values the API server accepts in a node selector requirement, but labels.NewRequirement
#: rejects (not valid label values): the term then fails to parse
BAD_LABEL_VALUES = ["-1", "+1", "a b"]
TAINT_KEYS = ["dedicated", "gpu", "node-role.kubernetes.io/control-plane", "node.kubernetes.io/unschedulable"]
TAINT_VALUES = ["", "a", "b"]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
IMAGES = ["nginx:1.25", "redis", "redis:latest", "registry.k8s.io/pause:3.9", "busybox",
          "localhost:5000/app", "big/model:v1"]
HOST_IPS = [None, "0.0.0.0", "10.0.0.1", "10.0.0.2"]
HOST_PORTS = [80, 8080]
NAMESPACES = ["default", "team-a"]

# ---- inputs that once exposed Scheduler bugs (each also pinned by a case in
# test_kernel_vs_reference.py); switches, so a bisecting developer can leave one out ---------

#: bound pods with status.phase Succeeded/Failed (kube-scheduler's informer drops them, §7.1)
GENERATE_TERMINAL_PODS = True
#: required node selector requirement values that are not valid label values ("-1", "a b"):
#: labels.NewRequirement rejects them, so kube-scheduler never matches the term (the API server
#: rejects them in new pods since v1.31 but keeps them in older pods)
GENERATE_UNPARSABLE_VALUES = True
#: preferred node affinity terms that fail to parse (Gt "x", In "-1": the API server always
#: accepts them in preferred terms): NodeAffinity's PreScore fails, and with it the whole
#: scheduling cycle (no node is chosen, the pod is not assumed)
GENERATE_UNPARSABLE_PREFERRED = True

BOUND_PHASES = ["Running", "Pending"] + (["Succeeded", "Failed"] if GENERATE_TERMINAL_PODS else [])

CPU_Q = ["0", "1m", "50m", "100m", "100m", "250m", "250m", "500m", "0.5", "1", "1500m", "2", "1.2345", "3", "1e-3"]
MEM_Q = ["0", "1", "100000", "64Mi", "128Mi", "128Mi", "200Mi", "256M", "512Mi", "512Mi", "1Gi", "1.5Gi", "1e9",
         "3Gi"]
EPH_Q = ["0", "100Mi", "1Gi", "5Gi", "20Gi"]
FPGA_Q = ["0", "1", "2", "3"]
HUGE_Q = ["0", "2Mi", "4Mi", "6Mi"]

NODE_CPU = ["1", "2", "3500m", "4", "8", "8", "0"]
NODE_MEM = ["1Gi", "4Gi", "7.5Gi", "8Gi", "16Gi", "2000000000"]
NODE_EPH = ["10Gi", "50Gi", "100Gi"]
NODE_PODS = ["0", "1", "2", "3", "5", "110", "110", "110", "110", "110", "110"]
NODE_FPGA = ["0", "1", "2", "4"]
NODE_HUGE = ["0", "4Mi", "8Mi", "1Gi"]


def maybe(strategy, p_none=True):
    """strategy or None (None means: leave the field out)."""
    return st.one_of(st.none(), strategy) if p_none else strategy


def _drop_none(d):
    return {k: v for k, v in d.items() if v is not None}


# ---- nodes -------------------------------------------------------------------------------------
@st.composite
def node_labels(draw, name):
    labels = {}
    if draw(st.booleans()):
        labels[HOSTNAME] = name
    if draw(st.integers(0, 4)):                 # most nodes have a zone
        labels[ZONE] = draw(st.sampled_from(ZONES))
    if draw(st.integers(0, 5)) == 0:
        labels[REGION] = draw(st.sampled_from(["r1", "r2"]))
    if draw(st.integers(0, 7)) == 0:            # the beta labels win in the node tree's zone key
        labels[BETA_ZONE] = draw(st.sampled_from(ZONES + [""]))
    if draw(st.integers(0, 9)) == 0:
        labels[BETA_REGION] = draw(st.sampled_from(["r1", "r2"]))
    if draw(st.booleans()):
        labels[POOL] = draw(st.sampled_from(POOLS))
    if draw(st.booleans()):
        labels[GEN] = draw(st.sampled_from(GENS))
    if draw(st.integers(0, 3)) == 0:
        labels["disk"] = draw(st.sampled_from(["ssd", "hdd"]))
    return labels


@st.composite
def taints(draw):
    out, seen = [], set()
    for _ in range(draw(st.sampled_from([0, 0, 0, 0, 1, 1, 2, 3]))):
        key = draw(st.sampled_from(TAINT_KEYS))
        effect = draw(st.sampled_from(EFFECTS + ["PreferNoSchedule"]))
        if (key, effect) in seen:               # the API server rejects duplicate (key, effect)
            continue
        seen.add((key, effect))
        out.append(_drop_none({"key": key, "value": draw(maybe(st.sampled_from(TAINT_VALUES[1:]))),
                               "effect": effect}))
    return out


@st.composite
def node_images(draw):
    out = []
    for _ in range(draw(st.integers(0, 3))):
        names = draw(st.lists(st.sampled_from(IMAGES + ["docker.io/library/nginx:1.25", "other:2"]),
                              min_size=1, max_size=2, unique=True))
        size = draw(st.sampled_from([0, 10 * 2**20, 23 * 2**20, 300 * 2**20, 800 * 2**20,
                                     1500 * 2**20, 4 * 2**30]) | st.integers(0, 3 * 2**30))
        out.append({"names": names, "sizeBytes": size})
    return out


@st.composite
def nodes_dicts(draw, name, extended=True):
    alloc = {"cpu": draw(st.sampled_from(NODE_CPU)), "memory": draw(st.sampled_from(NODE_MEM)),
             "pods": draw(st.sampled_from(NODE_PODS))}
    if draw(st.integers(0, 3)):
        alloc["ephemeral-storage"] = draw(st.sampled_from(NODE_EPH))
    if extended and draw(st.booleans()):
        alloc[FPGA] = draw(st.sampled_from(NODE_FPGA))
    if extended and draw(st.integers(0, 2)) == 0:
        alloc[HUGEPAGES] = draw(st.sampled_from(NODE_HUGE))
    if draw(st.integers(0, 15)) == 0:
        del alloc["pods"]                       # no allocatable pods: every pod is "Too many pods"
    spec = {}
    t = draw(taints())
    if t:
        spec["taints"] = t
    if draw(st.integers(0, 11)) == 0:
        spec["unschedulable"] = True
    status = {"allocatable": alloc, "capacity": dict(alloc)}
    imgs = draw(node_images())
    if imgs:
        status["images"] = imgs
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": draw(node_labels(name))},
            "spec": spec, "status": status}


@st.composite
def node_lists(draw, min_size=2, max_size=12, extended=True):
    n = draw(st.integers(min_size, max_size))
    return [draw(nodes_dicts(f"n{i}", extended=extended)) for i in range(n)]


# ---- pods --------------------------------------------------------------------------------------
@st.composite
def requests(draw, extended=True):
    out = {}
    if draw(st.integers(0, 3)):
        out["cpu"] = draw(st.sampled_from(CPU_Q))
    if draw(st.integers(0, 3)):
        out["memory"] = draw(st.sampled_from(MEM_Q))
    if draw(st.integers(0, 4)) == 0:
        out["ephemeral-storage"] = draw(st.sampled_from(EPH_Q))
    if extended and draw(st.integers(0, 11)) == 0:
        out[FPGA] = draw(st.sampled_from(FPGA_Q))
    if extended and draw(st.integers(0, 15)) == 0:
        out[HUGEPAGES] = draw(st.sampled_from(HUGE_Q))
    return out


def resources(requests: dict) -> dict:
    """A container's resources: the requests, and the limits the API server wants for the
    resources that cannot be overcommitted (extended resources, hugepages: limit = request)."""
    limits = {k: v for k, v in requests.items() if non_overcommit(k)}
    return {"requests": requests, **({"limits": limits} if limits else {})}


def non_overcommit(name: str) -> bool:
    return name.startswith("hugepages-") or ("/" in name and "kubernetes.io/" not in name)


@st.composite
def container_ports(draw):
    out = []
    for _ in range(draw(st.integers(0, 2))):
        p = {"containerPort": draw(st.sampled_from([80, 8080, 9000]))}
        if draw(st.integers(0, 2)):
            p["hostPort"] = draw(st.sampled_from(HOST_PORTS))
        proto = draw(st.sampled_from([None, "TCP", "UDP"]))
        if proto:
            p["protocol"] = proto
        ip = draw(st.sampled_from(HOST_IPS))
        if ip:
            p["hostIP"] = ip
        out.append(p)
    return out


@st.composite
def container(draw, name, init=False, extended=True):
    c = {"name": name, "image": draw(st.sampled_from(IMAGES))}
    if draw(st.integers(0, 4)):
        c["resources"] = resources(draw(requests(extended=extended)))
    if init and draw(st.booleans()):
        c["restartPolicy"] = "Always"          # a sidecar
    ports = draw(container_ports()) if draw(st.integers(0, 2)) == 0 else []
    if ports:
        c["ports"] = ports
    return c


@st.composite
def tolerations(draw):
    out = []
    for _ in range(draw(st.sampled_from([0, 1, 1, 2, 2, 3]))):
        op = draw(st.sampled_from([None, "Equal", "Exists", "Exists"]))
        key = draw(st.sampled_from(TAINT_KEYS + (["", ""] if op == "Exists" else [])))
        t = {"key": key} if key else {}
        if op:
            t["operator"] = op
        if op != "Exists":
            v = draw(st.sampled_from(TAINT_VALUES))
            if v or draw(st.booleans()):
                t["value"] = v
        eff = draw(st.sampled_from(["", "", *EFFECTS]))
        if eff:
            t["effect"] = eff
        if eff == "NoExecute" and draw(st.booleans()):
            t["tolerationSeconds"] = 30
        out.append(t)
    return out


@st.composite
def requirement(draw, keys=LABEL_KEYS, parsable_only=False, bad_values=GENERATE_UNPARSABLE_VALUES):
    """A NodeSelectorRequirement the API server accepts.  parsable_only: nothing that makes
    labels.NewRequirement fail; bad_values: sometimes values that are not label values."""
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
    r = {"key": draw(st.sampled_from(keys)), "operator": op}
    if op in ("In", "NotIn"):
        vocab = LABEL_VALUES if draw(st.integers(0, 4)) == 0 else KEY_VALUES[r["key"]]
        r["values"] = draw(st.lists(st.sampled_from(vocab), min_size=1, max_size=3, unique=True))
        if bad_values and not parsable_only and draw(st.integers(0, 15)) == 0:
            r["values"].append(draw(st.sampled_from(BAD_LABEL_VALUES)))
    elif op in ("Gt", "Lt"):
        # one integer value; rarely a non-integer or two values (the term then fails to parse)
        choices = [["1"], ["2"], ["0"], ["3"], ["5"], ["07"]]
        if not parsable_only:
            choices += [["x"], ["1", "2"]]      # the term fails to parse
        r["values"] = draw(st.sampled_from(choices))
        if bad_values and not parsable_only and draw(st.integers(0, 15)) == 0:
            r["values"] = [draw(st.sampled_from(["-1", "+1"]))]   # integers, but not label values
    elif draw(st.integers(0, 9)) == 0:
        r["values"] = []                      # empty list: as nil
    return r


@st.composite
def field_requirement(draw, node_names, parsable_only=False):
    op = draw(st.sampled_from(["In", "In", "NotIn"]))
    names = node_names + ["missing-node"]
    if not parsable_only and draw(st.integers(0, 9)) == 0:
        values = draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True))  # invalid: 2
    else:
        values = [draw(st.sampled_from(names))]
    return {"key": "metadata.name", "operator": op, "values": values}


@st.composite
def selector_term(draw, node_names, parsable_only=False, bad_values=GENERATE_UNPARSABLE_VALUES):
    term = {}
    exprs = draw(st.lists(requirement(parsable_only=parsable_only, bad_values=bad_values),
                          min_size=draw(st.sampled_from([0, 1, 1, 1])), max_size=2))
    if exprs or draw(st.integers(0, 5)) == 0:
        term["matchExpressions"] = exprs
    if node_names and draw(st.integers(0, 3)) == 0:
        term["matchFields"] = draw(st.lists(field_requirement(node_names, parsable_only), min_size=1, max_size=2))
    return term


@st.composite
def node_affinity(draw, node_names):
    na = {}
    if draw(st.booleans()):
        terms = draw(st.lists(selector_term(node_names), min_size=0 if draw(st.integers(0, 9)) == 0 else 1,
                              max_size=3))
        if node_names and terms and draw(st.integers(0, 3)) == 0:
            # every term pins metadata.name with In: NodeAffinity's PreFilter narrows the nodes
            for t in terms:
                t.setdefault("matchFields", []).append(
                    {"key": "metadata.name", "operator": "In",
                     "values": draw(st.lists(st.sampled_from(node_names + ["missing-node"]),
                                             min_size=1, max_size=1))})
        na["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if draw(st.integers(0, 2)):
        prefs = []
        for _ in range(draw(st.sampled_from([0, 1, 1, 2, 3]))):
            prefs.append({"weight": draw(st.sampled_from([1, 2, 5, 10, 50, 100])),
                          "preference": draw(selector_term(node_names if draw(st.booleans()) else [],
                                                           parsable_only=not GENERATE_UNPARSABLE_PREFERRED,
                                                           bad_values=True))})
        na["preferredDuringSchedulingIgnoredDuringExecution"] = prefs
    return na


@st.composite
def pods_dicts(draw, name, node_names, bound=False, extended=True):
    spec = {}
    spec["containers"] = [draw(container(f"c{i}", extended=extended)) for i in range(draw(st.integers(1, 3)))]
    inits = [draw(container(f"i{i}", init=True, extended=extended)) for i in range(draw(st.integers(0, 2)))]
    if inits:
        spec["initContainers"] = inits
    if draw(st.integers(0, 5)) == 0:
        spec["overhead"] = draw(st.sampled_from([{"cpu": "50m"}, {"cpu": "100m", "memory": "32Mi"},
                                                 {"memory": "1Mi"}, {FPGA: "1"} if extended else {}]))
    if draw(st.integers(0, 5)) == 0:
        pl = {}
        if draw(st.booleans()):
            pl["cpu"] = draw(st.sampled_from(CPU_Q))
        if draw(st.booleans()):
            pl["memory"] = draw(st.sampled_from(MEM_Q))
        if extended and draw(st.integers(0, 3)) == 0:
            pl[HUGEPAGES] = draw(st.sampled_from(HUGE_Q))
        if draw(st.integers(0, 4)) == 0:
            pl["ephemeral-storage"] = "1Gi"   # not a pod-level resource: ignored
        spec["resources"] = {"requests": pl}
    tol = draw(tolerations())
    if tol:
        spec["tolerations"] = tol
    if draw(st.integers(0, 3)) == 0:
        sel = {}
        for _ in range(draw(st.integers(0, 2))):
            key = draw(st.sampled_from([ZONE, POOL, GEN, "disk"]))
            sel[key] = draw(st.sampled_from({ZONE: ZONES, POOL: POOLS, GEN: GENS[:4],
                                             "disk": ["ssd", "hdd"]}[key]))
        spec["nodeSelector"] = sel            # may be {} (not nil: NodeAffinity's PreFilter runs)
    if draw(st.booleans()):
        na = draw(node_affinity(node_names))
        spec["affinity"] = {"nodeAffinity": na}
    if bound:
        spec["nodeName"] = draw(st.sampled_from(node_names + ["gone-node"] if node_names else ["gone-node"]))
    elif node_names and draw(st.integers(0, 12)) == 0:
        spec["nodeName"] = draw(st.sampled_from(node_names + ["gone-node"]))   # pre-bound
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": draw(st.sampled_from(NAMESPACES)),
                        "uid": f"uid-{name}"},
           "spec": spec}
    if bound:
        status = {}
        if draw(st.integers(0, 7)) == 0:
            status["phase"] = draw(st.sampled_from(BOUND_PHASES))
        if draw(st.integers(0, 4)) == 0:       # InPlacePodVerticalScaling: status resources count
            c0 = spec["containers"][0]["name"]
            cs = {"name": c0, "resources": {"requests": draw(requests(extended=False))}}
            if draw(st.booleans()):
                cs["allocatedResources"] = draw(requests(extended=False))
            status["containerStatuses"] = [cs]
            if draw(st.integers(0, 2)) == 0:
                status["conditions"] = [{"type": "PodResizePending", "reason": "Infeasible"}]
        if status:
            pod["status"] = status
    return pod


@st.composite
def workloads(draw, min_nodes=2, max_nodes=12, max_bound=6, max_pending=8, extended=True):
    """(nodes, bound_pods, pending_pods)."""
    nodes = draw(node_lists(min_nodes, max_nodes, extended=extended))
    names = [n["metadata"]["name"] for n in nodes]
    bound = [draw(pods_dicts(f"b{i}", names, bound=True, extended=extended))
             for i in range(draw(st.integers(0, max_bound)))]
    pending = [draw(pods_dicts(f"p{i}", names, extended=extended))
               for i in range(draw(st.integers(1, max_pending)))]
    return nodes, bound, pending


# ---- NodeResourcesFit scoring strategies -------------------------------------------------------
SCORABLE = ["cpu", "memory", "ephemeral-storage", FPGA, HUGEPAGES]


@st.composite
def fit_resources(draw):
    names = draw(st.lists(st.sampled_from(SCORABLE), min_size=1, max_size=4, unique=True))
    out = []
    for n in names:
        r = {"name": n}
        w = draw(st.sampled_from([None, 1, 2, 3, 10, 100]))
        if w is not None:
            r["weight"] = w
        out.append(r)
    return out


@st.composite
def shapes(draw):
    utils = sorted(draw(st.lists(st.integers(0, 100), min_size=1, max_size=5, unique=True)))
    return [{"utilization": u, "score": draw(st.integers(0, 10))} for u in utils]


@st.composite
def scoring_strategies(draw):
    kind = draw(st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]))
    s = {"type": kind}
    if kind != "LeastAllocated" and draw(st.integers(0, 2)) == 0:
        pass                                   # default resources cpu:1, memory:1
    else:
        s["resources"] = draw(fit_resources())
    if kind == "RequestedToCapacityRatio":
        s["requestedToCapacityRatio"] = {"shape": draw(shapes())}
    return s


# ---- inter-pod affinity ------------------------------------------------------------------------
POD_LABEL_VALUES = {"app": ["web", "db", "cache"], "tier": ["fe", "be"]}
IPA_NAMESPACES = ["default", "team-a"]
#: a namespace pods may use without a Namespace object (its labels are then the empty set)
IPA_NS_UNKNOWN = "team-b"
NS_LABEL_VALUES = {"env": ["prod", "dev"], "team": ["a", "b"]}
TOPOLOGY_KEYS = [HOSTNAME, ZONE, ZONE, HOSTNAME, POOL, "rack"]   # rack: no node has it


@st.composite
def pod_labels(draw):
    labels = {}
    for key, values in POD_LABEL_VALUES.items():
        if draw(st.integers(0, 3)):
            labels[key] = draw(st.sampled_from(values))
    return labels


@st.composite
def label_selectors(draw, vocab):
    """A valid metav1.LabelSelector over vocab (key -> values): None (nil: matches nothing),
    {} (everything), or matchLabels and/or matchExpressions (In/NotIn/Exists/DoesNotExist)."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return None
    if kind == 1:
        return {}
    sel = {}
    if draw(st.booleans()):
        key = draw(st.sampled_from(sorted(vocab)))
        sel["matchLabels"] = {key: draw(st.sampled_from(vocab[key]))}
    if not sel or draw(st.booleans()):
        exprs = []
        for _ in range(draw(st.integers(1, 2))):
            key = draw(st.sampled_from(sorted(vocab)))
            op = draw(st.sampled_from(["In", "In", "NotIn", "Exists", "DoesNotExist"]))
            e = {"key": key, "operator": op}
            if op in ("In", "NotIn"):
                e["values"] = draw(st.lists(st.sampled_from(vocab[key]), min_size=1, max_size=2, unique=True))
            exprs.append(e)
        sel["matchExpressions"] = exprs
    return sel


@st.composite
def pod_affinity_terms(draw):
    """A v1.PodAffinityTerm: label selector, topology key, namespaces, namespaceSelector."""
    term = {"topologyKey": draw(st.sampled_from(TOPOLOGY_KEYS))}
    sel = draw(label_selectors(POD_LABEL_VALUES))
    if sel is not None:
        term["labelSelector"] = sel
    if draw(st.integers(0, 3)) == 0:
        term["namespaces"] = draw(st.lists(st.sampled_from(IPA_NAMESPACES + [IPA_NS_UNKNOWN]), min_size=0,
                                           max_size=2, unique=True))
    k = draw(st.integers(0, 5))
    if k == 0:
        term["namespaceSelector"] = {}
    elif k == 1:
        ns_sel = draw(label_selectors(NS_LABEL_VALUES))
        if ns_sel is not None:
            term["namespaceSelector"] = ns_sel
    return term


@st.composite
def pod_affinity_specs(draw):
    """spec.affinity.podAffinity / podAntiAffinity (either may be absent; lists may be empty)."""
    out = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        if draw(st.integers(0, 2)) == 0:
            continue
        block = {}
        if draw(st.booleans()):
            block["requiredDuringSchedulingIgnoredDuringExecution"] = draw(
                st.lists(pod_affinity_terms(), min_size=0 if draw(st.integers(0, 7)) == 0 else 1, max_size=2))
        if draw(st.booleans()):
            block["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": draw(st.sampled_from([1, 2, 5, 10, 50, 100])), "podAffinityTerm": draw(pod_affinity_terms())}
                for _ in range(draw(st.sampled_from([0, 1, 1, 2])))]
        out[kind] = block
    return out


@st.composite
def ipa_nodes(draw, name):
    node = draw(nodes_dicts(name, extended=False))
    labels = node["metadata"]["labels"]
    labels.pop(HOSTNAME, None)
    labels.pop(ZONE, None)
    if draw(st.integers(0, 9)):
        labels[HOSTNAME] = name
    if draw(st.integers(0, 5)):
        labels[ZONE] = draw(st.sampled_from(ZONES[:2] if draw(st.booleans()) else ZONES))
    # keep most nodes able to take pods, so the affinity plugin decides
    if draw(st.integers(0, 3)):
        node["spec"].pop("unschedulable", None)
        node["spec"].pop("taints", None)
    node["status"]["allocatable"]["pods"] = "110"
    node["status"]["capacity"]["pods"] = "110"
    return node


def _cross_pod_base(draw, name, node_names, bound, drop_node_name=False):
    """A pod in one of the test namespaces with drawn labels; mostly without node-local
    constraints, so that the cross-pod plugin under test decides."""
    pod = draw(pods_dicts(name, node_names, bound=bound, extended=False))
    ns = draw(st.sampled_from(IPA_NAMESPACES * 4 + [IPA_NS_UNKNOWN]))
    pod["metadata"]["namespace"] = ns
    pod["metadata"]["uid"] = f"uid-{ns}-{name}"
    if draw(st.integers(0, 2)):
        pod["spec"].pop("affinity", None)
        pod["spec"].pop("nodeSelector", None)
        if drop_node_name and not bound:
            pod["spec"].pop("nodeName", None)
    labels = draw(pod_labels())
    if labels:
        pod["metadata"]["labels"] = labels
    return pod


@st.composite
def ipa_pods(draw, name, node_names, bound=False):
    pod = _cross_pod_base(draw, name, node_names, bound)
    if draw(st.integers(0, 4)):
        affinity = pod["spec"].setdefault("affinity", {})
        affinity.update(draw(pod_affinity_specs()))
    return pod


@st.composite
def ipa_namespaces(draw):
    out = []
    for name in IPA_NAMESPACES:
        labels = {"kubernetes.io/metadata.name": name}
        for key, values in NS_LABEL_VALUES.items():
            if draw(st.integers(0, 3)):
                labels[key] = draw(st.sampled_from(values))
        out.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})
    return out


@st.composite
def ipa_workloads(draw):
    """(namespaces, nodes, bound pods, pending pods) with pod (anti-)affinity everywhere."""
    nodes = [draw(ipa_nodes(f"n{i}")) for i in range(draw(st.integers(4, 10)))]
    names = [n["metadata"]["name"] for n in nodes]
    bound = [draw(ipa_pods(f"b{i}", names, bound=True)) for i in range(draw(st.integers(0, 6)))]
    pending = [draw(ipa_pods(f"p{i}", names)) for i in range(draw(st.integers(1, 6)))]
    return draw(ipa_namespaces()), nodes, bound, pending


# ---- pod topology spread -----------------------------------------------------------------------
PTS_KEYS = [ZONE, ZONE, ZONE, HOSTNAME, HOSTNAME, POOL, "rack"]   # rack: no node has it
#: (apiVersion, kind) of the controllers a pod may name as its controlling owner
PTS_CONTROLLERS = [("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet"),
                   ("apps/v1beta1", "ReplicaSet"), ("apps/v1", "Deployment")]


@st.composite
def topology_spread_constraints(draw):
    """A v1.TopologySpreadConstraint: both actions, maxSkew 1-3, minDomains 1-3 (or unset),
    node inclusion policies (or unset), matchLabelKeys (or unset), any label selector."""
    c = {"maxSkew": draw(st.integers(1, 3)), "topologyKey": draw(st.sampled_from(PTS_KEYS)),
         "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]))}
    sel = draw(label_selectors(POD_LABEL_VALUES))
    if sel is not None:
        c["labelSelector"] = sel
    if c["whenUnsatisfiable"] == "DoNotSchedule" and draw(st.integers(0, 2)) == 0:
        c["minDomains"] = draw(st.integers(1, 3))
    for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        if draw(st.integers(0, 2)) == 0:
            c[field] = draw(st.sampled_from(["Honor", "Ignore"]))
    if draw(st.integers(0, 3)) == 0:
        c["matchLabelKeys"] = draw(st.lists(st.sampled_from(sorted(POD_LABEL_VALUES) + ["pod-template-hash"]),
                                            min_size=1, max_size=2, unique=True))
    return c


@st.composite
def pts_pods(draw, name, node_names, bound=False):
    pod = _cross_pod_base(draw, name, node_names, bound, drop_node_name=True)
    if bound and draw(st.integers(0, 9)) == 0:
        pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if draw(st.integers(0, 3)) == 0:
        api_version, kind = draw(st.sampled_from(PTS_CONTROLLERS))
        pod["metadata"]["ownerReferences"] = [{"apiVersion": api_version, "kind": kind,
                                               "name": draw(st.sampled_from(["c0", "c1"])), "uid": "u",
                                               "controller": draw(st.sampled_from([True, True, False, None]))}]
    if not bound and draw(st.integers(0, 4)):
        pod["spec"]["topologySpreadConstraints"] = draw(
            st.lists(topology_spread_constraints(), min_size=0 if draw(st.integers(0, 7)) == 0 else 1, max_size=3,
                     # the API server refuses two constraints with one {topologyKey, whenUnsatisfiable}
                     unique_by=lambda c: (c["topologyKey"], c["whenUnsatisfiable"])))
    return pod


@st.composite
def pts_services(draw):
    out = []
    for i in range(draw(st.integers(0, 3))):
        svc = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": f"svc{i}", "namespace": draw(st.sampled_from(IPA_NAMESPACES))},
               "spec": {}}
        k = draw(st.integers(0, 5))
        if k == 1:
            svc["spec"]["selector"] = {}
        elif k > 1:
            key = draw(st.sampled_from(sorted(POD_LABEL_VALUES)))
            svc["spec"]["selector"] = {key: draw(st.sampled_from(POD_LABEL_VALUES[key]))}
        out.append(svc)
    for i in range(draw(st.integers(0, 3))):
        api_version, kind = draw(st.sampled_from(PTS_CONTROLLERS[:3]))
        obj = {"apiVersion": api_version, "kind": kind,
               "metadata": {"name": f"c{i}", "namespace": draw(st.sampled_from(IPA_NAMESPACES))}, "spec": {}}
        if kind == "ReplicationController":
            if draw(st.integers(0, 4)):
                key = draw(st.sampled_from(sorted(POD_LABEL_VALUES)))
                obj["spec"]["selector"] = {key: draw(st.sampled_from(POD_LABEL_VALUES[key]))}
        else:
            sel = draw(label_selectors(POD_LABEL_VALUES))
            if sel is not None:
                obj["spec"]["selector"] = sel
        out.append(obj)
    return out


@st.composite
def pts_workloads(draw):
    """(objects, nodes, bound pods, pending pods) with topology spread constraints (and the
    system default spreading for pods without constraints that Services or their controlling
    ReplicationController / ReplicaSet / StatefulSet select); objects: Services and controllers."""
    nodes = [draw(ipa_nodes(f"n{i}")) for i in range(draw(st.integers(3, 9)))]
    names = [n["metadata"]["name"] for n in nodes]
    bound = [draw(pts_pods(f"b{i}", names, bound=True)) for i in range(draw(st.integers(0, 12)))]
    pending = [draw(pts_pods(f"p{i}", names)) for i in range(draw(st.integers(1, 6)))]
    return draw(pts_services()), nodes, bound, pending


@st.composite
def pts_focused_workloads(draw):
    """Like ``pts_workloads``, but most pods are one group (app=web) spread by its own label, so
    that skew, minDomains and the scores decide: few node-local rejections."""
    nodes = []
    for i in range(draw(st.integers(3, 9))):
        node = draw(ipa_nodes(f"n{i}"))
        node["spec"].pop("unschedulable", None)
        node["metadata"]["labels"][HOSTNAME] = f"n{i}"
        if draw(st.integers(0, 5)):
            node["metadata"]["labels"][ZONE] = draw(st.sampled_from(ZONES))
        node["status"]["allocatable"].update({"cpu": "64", "memory": "256Gi"})
        node["status"]["capacity"].update({"cpu": "64", "memory": "256Gi"})
        nodes.append(node)
    names = [n["metadata"]["name"] for n in nodes]

    def group(pod):
        if draw(st.integers(0, 4)):
            pod["metadata"]["labels"] = dict(pod["metadata"].get("labels") or {}, app="web")
        for c in pod["spec"].get("topologySpreadConstraints") or []:
            if draw(st.integers(0, 2)):
                c["labelSelector"] = {"matchLabels": {"app": "web"}}
        return pod

    bound = [group(draw(pts_pods(f"b{i}", names, bound=True))) for i in range(draw(st.integers(0, 12)))]
    pending = [group(draw(pts_pods(f"p{i}", names))) for i in range(draw(st.integers(1, 8)))]
    return draw(pts_services()), nodes, bound, pending


@st.composite
def pts_list_args(draw):
    """PodTopologySpreadArgs with defaultingType List: up to three default constraints with
    distinct {topologyKey, whenUnsatisfiable}, no selector; matchLabelKeys (ignored for
    defaults) and minDomains <= 0 (accepted upstream) included."""
    out, seen = [], set()
    for _ in range(draw(st.integers(0, 3))):
        c = draw(topology_spread_constraints())
        c.pop("labelSelector", None)
        if (c["topologyKey"], c["whenUnsatisfiable"]) in seen:
            continue
        seen.add((c["topologyKey"], c["whenUnsatisfiable"]))
        if c["whenUnsatisfiable"] == "DoNotSchedule" and draw(st.integers(0, 5)) == 0:
            c["minDomains"] = draw(st.sampled_from([0, -1]))
        out.append(c)
    return {"defaultingType": "List", "defaultConstraints": out}


@st.composite
def pts_list_workloads(draw):
    """(args, objects, nodes, bound pods, pending pods): List default constraints, most
    pending pods without constraints of their own, often a Service selecting app=web."""
    objects, nodes, bound, pending = draw(st.one_of(pts_workloads(), pts_focused_workloads()))
    for pod in pending:
        if draw(st.integers(0, 3)):
            pod["spec"].pop("topologySpreadConstraints", None)
    if draw(st.integers(0, 2)):
        objects.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                        "spec": {"selector": {"app": "web"}}})
    return draw(pts_list_args()), objects, nodes, bound, pending
