"""DRA's objects (resource.k8s.io): reading, v1beta2 read as v1, validation errors naming the
object and field, and the resourceclaim controller's template claims."""
import copy
import re

import pytest

from kschedcore.errors import ObjectError, UnsupportedError, ValidationError
from kschedcore.objects import resource as R


def device_class(expression='device.driver == "gpu.example.com"'):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def slice_(**spec):
    base = {"driver": "gpu.example.com", "pool": {"name": "gpu-00", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "gpu-00",
            "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}},
                         "capacity": {"memory": {"value": "80Gi"}}} for i in range(2)]}
    base.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": "gpu-00-gpu.example.com"}, "spec": {k: v for k, v in base.items() if v is not None}}


def claim_spec(**request):
    exactly = {"deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}
    exactly.update(request)
    return {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}


def claim(**request):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "ml", "uid": "u"}, "spec": claim_spec(**request)}


def template():
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpu-1", "namespace": "ml"},
            "spec": {"metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}}, "spec": claim_spec()}}


def pod():
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "infer-01", "namespace": "ml", "uid": "p-uid"},
            "spec": {"containers": [{"name": "c"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-1"},
                                        {"name": "shared", "resourceClaimName": "big"}]}}


def test_objects_read_with_their_v1_dicts():
    s = R.parse_resource_slice(slice_())
    assert (s.driver, s.pool, s.generation, s.slice_count, s.node_name) == ("gpu.example.com", "gpu-00", 1, 1, "gpu-00")
    assert s.v1["spec"]["devices"][1]["name"] == "gpu-1"
    assert R.parse_device_class(device_class()).name == "gpu.example.com"
    c = R.parse_resource_claim(claim())
    assert c.key == "ml/c" and c.allocation is None and c.reserved_for == ()


def test_v1beta2_is_read_as_v1_and_other_versions_are_refused_by_name():
    raw = claim()
    raw["apiVersion"] = "resource.k8s.io/v1beta2"
    c = R.parse_resource_claim(raw)
    assert c.v1["apiVersion"] == "resource.k8s.io/v1" and raw["apiVersion"] == "resource.k8s.io/v1beta2"
    raw["apiVersion"] = "resource.k8s.io/v1beta1"
    with pytest.raises(UnsupportedError, match=r"ResourceClaim ml/c: apiVersion: 'resource.k8s.io/v1beta1' is not"):
        R.parse_resource_claim(raw)


@pytest.mark.parametrize("mutate, message", [
    (lambda s: s["spec"].pop("driver"), "ResourceSlice gpu-00-gpu.example.com: spec.driver: Required value"),
    (lambda s: s["spec"]["pool"].update(resourceSliceCount=0),
     "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"),
    (lambda s: s["spec"].pop("nodeName"), "spec: Required value: exactly one of `nodeName`"),
    (lambda s: s["spec"].update(allNodes=True), "but multiple fields are set"),
    (lambda s: s["spec"]["devices"][1].update(name="gpu-0"), 'spec.devices[1].name: Duplicate value: "gpu-0"'),
    (lambda s: s["spec"]["devices"][0].update(name="GPU_0"), "spec.devices[0].name: Invalid value: \"GPU_0\""),
    (lambda s: s["spec"]["devices"][0]["attributes"]["index"].update(string="x"),
     'spec.devices[0].attributes["index"]: Invalid value: exactly one value must be specified'),
    (lambda s: s["spec"]["devices"][0]["capacity"]["memory"].update(value="8 Gi"),
     'spec.devices[0].capacity["memory"].value: invalid quantity "8 Gi"'),
])
def test_slice_validation_names_the_field(mutate, message):
    raw = slice_()
    mutate(raw)
    with pytest.raises(ValidationError) as err:
        R.parse_resource_slice(raw)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_slice_features_not_implemented_are_refused_by_name():
    with pytest.raises(UnsupportedError, match="spec.perDeviceNodeSelection: the DRAPartitionableDevices"):
        R.parse_resource_slice(slice_(nodeName=None, perDeviceNodeSelection=True))
    raw = slice_()
    raw["spec"]["devices"][0]["taints"] = [{"key": "k", "effect": "NoSchedule"}]
    with pytest.raises(UnsupportedError, match=r"spec.devices\[0\].taints: the DRADeviceTaints"):
        R.parse_resource_slice(raw)


@pytest.mark.parametrize("request_, message", [
    ({"deviceClassName": ""}, "spec.devices.requests[0].exactly.deviceClassName: Required value"),
    ({"allocationMode": "Some"}, 'allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"'),
    ({"count": 0}, "spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero"),
    ({"allocationMode": "All", "count": 2}, 'count: Invalid value: 2: must not be specified when allocationMode is "All"'),
])
def test_claim_validation_names_the_field(request_, message):
    with pytest.raises(ObjectError) as err:
        R.parse_resource_claim(claim(**request_))
    assert str(err.value).startswith("ResourceClaim ml/c: ") and message in str(err.value)


def test_claim_requests_need_exactly_one_form_and_unique_names():
    raw = claim()
    raw["spec"]["devices"]["requests"][0]["firstAvailable"] = [{"name": "a", "deviceClassName": "x"}]
    with pytest.raises(ObjectError, match="exactly one of `exactly` or `firstAvailable` is required"):
        R.parse_resource_claim(raw)
    raw = claim()
    raw["spec"]["devices"]["requests"].append(copy.deepcopy(raw["spec"]["devices"]["requests"][0]))
    with pytest.raises(ObjectError, match=r'requests\[1\].name: Duplicate value: "gpu"'):
        R.parse_resource_claim(raw)


def test_reserved_for_needs_an_allocation():
    raw = claim()
    raw["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]}
    with pytest.raises(ObjectError, match="status.reservedFor: Forbidden"):
        R.parse_resource_claim(raw)
    raw["status"]["allocation"] = {"devices": {"results": []}}
    assert R.parse_resource_claim(raw).reserved_for == (("pods", "p", "u1"),)


@pytest.mark.parametrize("results, path, message", [
    ([{"request": "gpu", "driver": "d", "pool": "p"}], "status.allocation.devices.results[0].device", "Required value"),
    (["d/p/gpu-0"], "status.allocation.devices.results[0]", "expected an object"),
    ({"gpu": "d"}, "status.allocation.devices.results", "expected a list"),
    ([{"request": "gpu", "driver": "d", "pool": "p", "device": "g", "adminAccess": "yes"}],
     "status.allocation.devices.results[0].adminAccess", "expected a boolean"),
])
def test_allocation_results_name_the_bad_field(results, path, message):
    raw = claim()
    raw["status"] = {"allocation": {"devices": {"results": results}}}
    with pytest.raises(ObjectError, match=re.escape(path) + ".*" + message):
        R.parse_resource_claim(raw)


def test_allocated_devices_and_owners_are_read_once():
    raw = claim()
    raw["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "p-1",
                                           "controller": True}]
    raw["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "d", "pool": "p", "device": "g0"},
        {"request": "gpu", "driver": "d", "pool": "p", "device": "g1", "adminAccess": True}]}}}
    c = R.parse_resource_claim(raw)
    assert (c.key, c.devices, c.owners) == ("ml/c", (("d", "p", "g0"),), ("p-1",))
    free = R.with_status(c, {})
    assert (free.allocation, free.devices, free.owners) == (None, (), ("p-1",))


def test_template_claim_as_the_resourceclaim_controller_makes_it():
    t = R.parse_resource_claim_template(template())
    made = R.claim_from_template(pod(), "gpu", t)
    md = made["metadata"]
    assert (md["name"], md["namespace"]) == ("infer-01-gpu", "ml")
    assert md["annotations"] == {"note": "x", R.POD_CLAIM_NAME_ANNOTATION: "gpu"} and md["labels"] == {"team": "a"}
    assert md["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "infer-01", "uid": "p-uid",
                                      "controller": True, "blockOwnerDeletion": True}]
    assert made["spec"] == t.v1["spec"]["spec"]
    assert R.parse_resource_claim(made).key == "ml/infer-01-gpu"
    assert R.claim_statuses(pod()) == [{"name": "gpu", "resourceClaimName": "infer-01-gpu"}]


def test_parity_workload_objects_read():
    import json
    from pathlib import Path
    d = json.loads((Path(__file__).parent / "data" / "parity" / "dra_a.json").read_text())
    assert [R.parse_resource_slice(s).node_name for s in d["resourceSlices"]] == [f"gpu-0{i}" for i in range(8)]
    assert {R.parse_resource_claim_template(t).key for t in d["resourceClaimTemplates"]} == {"ml/gpu-1", "ml/gpu-2"}
