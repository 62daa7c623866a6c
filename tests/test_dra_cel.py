"""DRA's CEL environment: each expression of tests/data/dra_cel/cases.jsonl against the
result cel-go gave for it in DRA's environment (k8s.io/dynamic-resource-allocation v0.34.1
``cel``: compile error, runtime error or verdict), then the selectors users write most,
one by one."""
import json
from pathlib import Path

import pytest

from kschedcore.dra.cel import CELCompileError, CELRuntimeError, compile_selector

DATA = Path(__file__).parent / "data" / "dra_cel"
DEVICES = json.loads((DATA / "devices.json").read_text())
CASES = [json.loads(line) for line in (DATA / "cases.jsonl").read_text().splitlines()]


def outcome(expression: str, device: dict) -> dict:
    try:
        selector = compile_selector(expression)
    except CELCompileError as err:
        return {"compileError": str(err)}
    try:
        return {"matches": selector.matches(device["driver"], device["attributes"], device["capacity"])}
    except CELRuntimeError as err:
        return {"error": str(err)}


@pytest.mark.parametrize("case", CASES, ids=[f"{i}:{c['expression'][:60]}" for i, c in enumerate(CASES)])
def test_expression_as_cel_go(case):
    assert outcome(case["expression"], DEVICES[case["device"]]) == case["want"]


GPU = DEVICES["gpu"]


def matches(expression: str, device: dict = GPU) -> bool:
    return compile_selector(expression).matches(device["driver"], device["attributes"], device["capacity"])


def test_driver_selector_of_a_device_class():
    assert matches('device.driver == "gpu.example.com"')
    assert not matches('device.driver == "gpu.example.com"', DEVICES["perf"])


def test_scheduler_perf_claim_selector():
    """resourceclaim-with-selector.yaml: a capacity quantity and a bool attribute, both
    unqualified (so in the driver's domain)."""
    expr = ("device.capacity['test-driver.cdi.k8s.io'].counters.compareTo(quantity('2')) >= 0 &&\n"
            "device.attributes['test-driver.cdi.k8s.io'].preallocate")
    assert matches(expr, DEVICES["perf"])
    assert not matches(expr, DEVICES["perf2"])


@pytest.mark.parametrize("expression, want", [
    ('device.attributes["gpu.example.com"].index == 1', True),          # int
    ('device.attributes["gpu.example.com"].index == 2', False),
    ('device.attributes["gpu.example.com"].mig', True),                 # bool
    ('device.attributes["gpu.example.com"].model == "A100"', True),     # string
    ('device.attributes["gpu.example.com"].model == "H100"', False),
    ('device.attributes["gpu.example.com"].driverVersion == semver("535.129.3")', True),   # version
    ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("535.54.3"))', True),
    ('device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("535.54.3"))', False),
])
def test_attribute_types(expression, want):
    assert matches(expression) is want


def test_semver_orders_by_numbers_and_pre_releases():
    assert matches('semver("1.10.0").isGreaterThan(semver("1.9.0"))')        # not string order
    assert matches('semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))')       # a pre-release is lower
    assert matches('semver("1.0.0-2").isLessThan(semver("1.0.0-10"))')       # numeric identifiers
    assert matches('semver("1.0.0+a") == semver("1.0.0+b")')                 # build metadata ignored


def test_qualified_and_unqualified_attribute_names():
    """An attribute published without a domain is the driver's; one with a domain lives
    under that domain only."""
    assert matches('device.attributes["gpu.example.com"].uuid == "GPU-abc"')      # published qualified
    assert matches('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:00"')
    assert not matches('has(device.attributes["gpu.example.com"].pcieRoot)')
    assert matches('device.attributes["other.example.com"].zone == "z1"')


def test_capacity_quantities():
    assert matches('device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) == 0')
    assert matches('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("80G"))')   # 80Gi > 80G
    assert not matches('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("80Gi"))')
    assert matches('device.capacity["gpu.example.com"].power.asApproximateFloat() == 400.5')
    assert matches('device.capacity["gpu.example.com"].memory.compareTo(quantity("9G")) > 0')   # by value, not text


def test_missing_attribute_is_a_runtime_error_with_cel_go_words():
    with pytest.raises(CELRuntimeError) as err:
        matches('device.attributes["gpu.example.com"].missing == "x"')
    assert str(err.value) == "no such key: missing"


def test_missing_domain_reads_as_an_empty_map():
    assert matches('size(device.attributes["nope.example.com"]) == 0')
    with pytest.raises(CELRuntimeError, match="^no such key: x$"):
        matches('device.attributes["nope.example.com"].x == 1')


def test_error_absorbed_by_logical_or():
    assert matches('device.attributes["gpu.example.com"].missing == 1 || true')
    with pytest.raises(CELRuntimeError, match="^no such key: missing$"):
        matches('device.attributes["gpu.example.com"].missing == 1 || false')


def test_compile_error_with_position_and_caret():
    with pytest.raises(CELCompileError) as err:
        compile_selector("device.driver == foo")
    assert str(err.value) == ("compilation failed: ERROR: <input>:1:18: undeclared reference to 'foo' (in container '')\n"
                              " | device.driver == foo\n"
                              " | .................^")


def test_result_must_be_bool():
    with pytest.raises(CELCompileError, match="^must evaluate to bool or the unknown type, not string$"):
        compile_selector("device.driver")


@pytest.mark.parametrize("expression, name", [('url("https://a").getHost() == "a"', "url"),
                                              ('"%d".format([1]) == "1"', "format")])
def test_unimplemented_library_functions_are_refused_by_name(expression, name):
    with pytest.raises(CELCompileError, match=f"CEL function '{name}' .* not implemented by kschedcore"):
        compile_selector(expression)


def test_compiled_once_per_expression():
    assert compile_selector('device.driver == "x"') is compile_selector('device.driver == "x"')


def test_invalid_version_attribute_fails_every_evaluation():
    device = {"driverVersion": {"version": "1.2"}}
    with pytest.raises(CELRuntimeError) as err:
        compile_selector("true").matches("gpu.example.com", device, {})
    assert str(err.value) == "attribute driverVersion: parse semantic version: No Major.Minor.Patch elements found"
