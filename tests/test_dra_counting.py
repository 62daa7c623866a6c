"""DynamicResources decides most node rows by counting free devices (DeviceIndex) and runs the
structured allocator only where counting cannot decide: on random DRA clusters -- several
drivers, split, incomplete and invalid pools, selectors that fail to evaluate on some devices,
claims with several requests and kinds, devices taken and given back as pods come and go --
every decision, message, error and allocation equals the allocator's on every row."""
import sys

from hypothesis import HealthCheck, given, settings, strategies as st

from kschedcore import Scheduler
from kschedcore.sources.files import Workload

DRIVERS = ("a.example.com", "b.example.com")
CLASSES = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "a"},
     "spec": {"selectors": [{"cel": {"expression": 'device.driver == "a.example.com"'}}],
              "config": [{"opaque": {"driver": "a.example.com", "parameters": {"mode": "shared"}}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "b"},
     "spec": {"selectors": [{"cel": {"expression": 'device.driver == "b.example.com"'}}]}},
    # fails to evaluate on a device without the model attribute
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "model-x"},
     "spec": {"selectors": [{"cel": {"expression": 'device.attributes["a.example.com"].model == "x"'}}]}},
]
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))   # what the allocator's search sets

SELECTORS = [None, None, None, 'device.attributes["a.example.com"].idx >= 1', 'device.driver == "b.example.com"']
#: class names, weighted: the class whose selector can fail to evaluate is the rare one
CLASS_NAMES = ["a", "a", "a", "b", "b", "model-x"]


@st.composite
def devices(draw, prefix=""):
    out = []
    for i in range(draw(st.integers(0, 6))):
        attrs = {"idx": {"int": i}}
        if draw(st.booleans()):
            attrs["model"] = {"string": draw(st.sampled_from(["x", "y"]))}
        out.append({"name": f"{prefix}d{i}", "attributes": attrs})
    return out


@st.composite
def node_slices(draw, node):
    """A node's slices: per driver a pool of one slice, or of two (one of them possibly missing:
    incomplete; the same device name in both: invalid)."""
    out = []
    for driver in draw(st.lists(st.sampled_from(DRIVERS), min_size=1, max_size=2, unique=True)):
        split = draw(st.sampled_from([0] * 12 + [1, 1, 2, 3]))
        count = 2 if split else 1
        parts = [draw(devices())] if not split else [draw(devices("p0-")), draw(devices("p1-" if split != 3 else "p0-"))]
        if split == 2:
            parts = parts[:1]                       # incomplete: one slice of two
        for k, devs in enumerate(parts):
            out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                        "metadata": {"name": f"{node}-{driver}-{k}"},
                        "spec": {"driver": driver, "nodeName": node, "devices": devs,
                                 "pool": {"name": f"{node}-{driver}", "generation": 1, "resourceSliceCount": count}}})
    return out


@st.composite
def claim_template(draw, name):
    requests = []
    for r in range(draw(st.sampled_from([1, 1, 2]))):
        exactly = {"deviceClassName": draw(st.sampled_from(CLASS_NAMES)),
                   "allocationMode": "ExactCount", "count": draw(st.sampled_from([1, 1, 2, 3]))}
        selector = draw(st.sampled_from(SELECTORS))
        if selector:
            exactly["selectors"] = [{"cel": {"expression": selector}}]
        requests.append({"name": f"r{r}", "exactly": exactly})
    devices = {"requests": requests}
    if draw(st.booleans()):
        devices["config"] = [{"requests": ["r0"], "opaque": {"driver": "b.example.com", "parameters": {"n": 1}}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"spec": {"devices": devices}}}


@st.composite
def clusters(draw):
    names = [f"n{i}" for i in range(draw(st.integers(1, 5)))]
    slices = [s for n in names for s in draw(node_slices(n))]
    templates = [draw(claim_template(f"t{i}")) for i in range(3)]
    steps = draw(st.lists(st.tuples(st.sampled_from(["add", "add", "add", "remove"]), st.integers(0, 2)),
                          min_size=1, max_size=16))
    return names, slices, templates, steps


def node(name):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "110"}}}


def pod(i, template):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
            "spec": {"containers": [{"name": "c"}],
                     "resourceClaims": [{"name": "c", "resourceClaimTemplateName": template}]}}


def run(cluster, counting: bool) -> list:
    names, slices, templates, steps = cluster
    s = Scheduler.from_workload(Workload(nodes=[node(n) for n in names], objects={
        "DeviceClass": CLASSES, "ResourceSlice": slices, "ResourceClaimTemplate": templates}))
    if not counting:
        for fw in s.profiles.values():
            fw.by_name["DynamicResources"]._count_devices = lambda *args: None
    out, placed = [], []
    for i, (action, which) in enumerate(steps):
        if action == "remove":
            if placed:
                key = placed.pop(which % len(placed))
                s.remove_pod(key)
                out.append(("removed", key))
            continue
        p = s.queue(pod(i, f"t{which}"))
        s.pending.remove(p)
        r = s.schedule_one(p)
        message = r.fit_error.full_message if r.fit_error is not None else None
        allocations = [c.allocation for c in s.cache.dra.claims.values() if c.name.startswith(f"p{i}-")]
        out.append((p.key, r.node, message, r.error, allocations))
        if r.node is not None:
            placed.append(p.key)
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_counting_decides_as_the_allocator(cluster):
    assert run(cluster, counting=True) == run(cluster, counting=False)


def test_counting_is_used_and_the_allocator_runs_only_on_the_chosen_node(monkeypatch):
    """On node-local pools with one kind of request, no allocator search runs in Filter: the
    chosen node's devices are taken in the allocator's order."""
    from kschedcore.dra.allocator import Allocator
    calls = []
    real = Allocator.allocate
    monkeypatch.setattr(Allocator, "allocate", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    names = [f"n{i}" for i in range(20)]
    slices = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": n},
               "spec": {"driver": "a.example.com", "nodeName": n, "pool": {"name": n, "resourceSliceCount": 1},
                        "devices": [{"name": f"d{i}", "attributes": {"idx": {"int": i}}} for i in range(2)]}}
              for n in names]
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "t", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "a"}}]}}}}
    s = Scheduler.from_workload(Workload(nodes=[node(n) for n in names], objects={
        "DeviceClass": CLASSES, "ResourceSlice": slices, "ResourceClaimTemplate": [template]}))
    for i in range(41):
        p = s.queue(pod(i, "t"))
        s.pending.remove(p)
        r = s.schedule_one(p)
        assert (r.node is None) == (i == 40)
    assert calls == []
    allocs = [s.claim_allocations(f"default/p{n}")[f"p{n}-c"] for n in range(40)]
    taken = [(a["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"][0], d["device"])
             for a in allocs for d in a["devices"]]
    assert sorted(taken) == sorted((n, d) for n in names for d in ("d0", "d1"))
