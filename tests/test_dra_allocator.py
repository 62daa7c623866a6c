"""The structured allocator against the real one: every fixture under tests/data/dra_alloc
(classes, slices, claims, node, allocated devices) with the result or error that
k8s.io/dynamic-resource-allocation v0.34.1's allocator (the variant kube-scheduler v1.34.1's
default gates select) gave for it, in expected.jsonl."""
import json
from pathlib import Path

import pytest

from kschedcore.dra.allocator import Allocator, AllocatorError, Features

DATA = Path(__file__).parent / "data" / "dra_alloc"
EXPECTED = {d["case"]: d for d in map(json.loads, (DATA / "expected.jsonl").read_text().splitlines())}


def _features(flags: dict) -> Features:
    return Features(admin_access=bool(flags.get("AdminAccess")), prioritized_list=bool(flags.get("PrioritizedList")),
                    device_status=bool(flags.get("DeviceStatus")))


def run_fixture(fx: dict, slices=None):
    classes = {c["metadata"]["name"]: c for c in fx["classes"]}
    allocated = {tuple(d) for d in fx["allocated"]}
    alloc = Allocator(_features(fx["features"]), allocated, classes, slices or fx["slices"])
    try:
        return {"results": _as_go(alloc.allocate(fx["node"], fx["claims"]))}
    except AllocatorError as err:
        return {"error": str(err)}


def _as_go(results):
    """Go's JSON of []AllocationResult: empty config and nil nodeSelector are omitted."""
    if results is None:
        return None
    out = []
    for r in results:
        r = {"devices": dict(r["devices"]), **({"nodeSelector": r["nodeSelector"]} if r["nodeSelector"] else {})}
        if not r["devices"]["config"]:
            del r["devices"]["config"]
        out.append(r)
    return out


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_allocator_matches_upstream(case):
    fx = json.loads((DATA / f"{case}.json").read_text())
    want = {k: v for k, v in EXPECTED[case].items() if k != "case"}
    assert run_fixture(fx) == want


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_slice_order_does_not_change_decisions(case):
    """Pools and their slices are taken in one fixed order whatever order the slices come
    in (upstream ranges over a Go map); every fixture's result is the same reversed."""
    fx = json.loads((DATA / f"{case}.json").read_text())
    want = {k: v for k, v in EXPECTED[case].items() if k != "case"}
    assert run_fixture(fx, slices=list(reversed(fx["slices"]))) == want


def _two_pool_fixture():
    fx = json.loads((DATA / "exact_one.json").read_text())
    gpu_slice = fx["slices"][0]
    other = json.loads(json.dumps(gpu_slice))
    other["metadata"]["name"] = "a-slice"
    other["spec"]["pool"]["name"] = "gpu-00-a"
    fx["slices"] = [gpu_slice, other]       # pool "gpu-00" first in the input
    return fx


@pytest.mark.parametrize("reverse", [False, True])
def test_pools_in_driver_and_pool_name_order(reverse):
    """Where upstream ranges over a Go map (two pools serving the node), the first device
    comes from the pool first by (driver, pool name), whatever order the slices come in."""
    fx = _two_pool_fixture()
    slices = list(reversed(fx["slices"])) if reverse else fx["slices"]
    got = run_fixture(fx, slices=slices)["results"]
    assert [(r["pool"], r["device"]) for r in got[0]["devices"]["results"]] == [("gpu-00", "gpu-0")]


def test_selector_verdicts_are_kept_per_slice_object():
    """A slice replaced by a new object (an update) is evaluated afresh; the same object
    keeps its verdicts across allocators."""
    from kschedcore.dra.selectors import SelectorCache
    fx = json.loads((DATA / "exact_one.json").read_text())
    cache = SelectorCache()
    classes = {c["metadata"]["name"]: c for c in fx["classes"]}
    one = Allocator(Features(), set(), classes, fx["slices"], cache)
    assert one.allocate(fx["node"], fx["claims"]) is not None
    updated = json.loads(json.dumps(fx["slices"][0]))
    updated["spec"]["driver"] = "other.example.com"       # the class's selector no longer matches
    for d in updated["spec"]["devices"]:
        d["name"] += "-x"
    two = Allocator(Features(), set(), classes, [updated], cache)
    assert two.allocate(fx["node"], fx["claims"]) is None


def test_each_device_is_evaluated_once_across_allocators(monkeypatch):
    """Selector verdicts outlive one allocation: two allocators over the same slices (and
    two nodes' attempts) evaluate each device's class selector once."""
    from kschedcore.dra import selectors
    from kschedcore.dra.selectors import SelectorCache
    calls = []
    real = selectors.SelectorCache._evaluate
    monkeypatch.setattr(selectors.SelectorCache, "_evaluate",
                        staticmethod(lambda *a: calls.append(a[2]) or real(*a)))
    fx = json.loads((DATA / "exact_incomplete_pool.json").read_text())     # 2 devices, 2 wanted
    classes = {c["metadata"]["name"]: c for c in fx["classes"]}
    cache = SelectorCache()
    for _ in range(2):
        alloc = Allocator(Features(), set(), classes, fx["slices"], cache)
        assert alloc.allocate(fx["node"], fx["claims"]) is not None
    assert sorted(calls) == [0, 1]


@pytest.mark.parametrize("gate", ["partitionable_devices", "device_taints", "device_binding", "consumable_capacity"])
def test_alpha_feature_gates_are_refused_by_name(gate):
    from kschedcore.errors import UnsupportedError
    with pytest.raises(UnsupportedError, match="feature gate is not implemented"):
        Allocator(Features(**{gate: True}), set(), {}, [])


def test_default_features_are_kube_scheduler_v1_34_1s():
    assert Features() == Features(admin_access=True, prioritized_list=True, device_status=True,
                                  partitionable_devices=False, device_taints=False, device_binding=False,
                                  consumable_capacity=False)


def test_deadline_passed_ends_the_search():
    from kschedcore.dra.allocator import AllocationTimedOut
    fx = json.loads((DATA / "exact_one.json").read_text())
    alloc = Allocator(Features(), set(), {c["metadata"]["name"]: c for c in fx["classes"]}, fx["slices"])
    with pytest.raises(AllocationTimedOut, match="^filter operation aborted: context deadline exceeded$"):
        alloc.allocate(fx["node"], fx["claims"], deadline=0.0)
    assert alloc.allocate(fx["node"], fx["claims"], deadline=None) is not None
