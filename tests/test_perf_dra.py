"""`kschedcore perf` on upstream's Dynamic Resource Allocation suite (scheduler_perf dra/,
copied in tests/data): its DRA ops, steady-state pods, and the workloads' outcomes."""
import copy
from collections import Counter
from pathlib import Path

import pytest

from kschedcore.errors import UnsupportedError, WorkloadError
from kschedcore.perf import Runner, load_perf_config, run_perf

CONFIG = Path(__file__).parent / "data" / "scheduler_perf" / "dra" / "performance-config.yaml"


def workload(case_name, workload_name, **params):
    """A Runner for the suite's workload, its params changed (a smaller cluster, a shorter run)."""
    case = next(c for c in load_perf_config(CONFIG) if c.name == case_name)
    w = copy.deepcopy(next(w for w in case.workloads if w.name == workload_name))
    w.params.update(params)
    return Runner(case, w, sample_interval=0.001)


def test_claims_from_a_template_use_up_the_driver_s_devices():
    runner = workload("SchedulingWithResourceClaimTemplate", "fast")
    [m] = runner.run().measurements
    assert m.name == "SchedulingWithResourceClaimTemplate/fast/test" and m.pods == 10
    dra, sim = runner.sched.cache.dra, runner.sim
    # createResourceDriver: one node-local slice per node matching scheduler-perf-dra-*
    [dra_node] = [n for n in runner.sched.cache.node_names if n.startswith("scheduler-perf-dra-")]
    assert list(dra.slices) == [dra_node]
    spec = dra.slices[dra_node].v1["spec"]
    assert spec["pool"] == {"name": dra_node, "generation": 0, "resourceSliceCount": 1}
    assert [d["name"] for d in spec["devices"]] == [f"instance-{i}" for i in range(10)]
    assert spec["devices"][3]["attributes"]["dra.example.com/numa"] == {"int": 3}
    # every pod on the DRA node, each with its own claim and device
    assert set(sim.bound.values()) == {dra_node}
    devices = []
    for key in sim.bound:
        [claim] = dra.pod_claims(sim.pods[key])
        assert claim.reserved_for == (("pods", key.split("/")[1], sim.pods[key].uid),)
        devices += [r["device"] for r in claim.allocation["devices"]["results"]]
    assert sorted(devices) == sorted(f"instance-{i}" for i in range(10))


def test_shared_claims_are_reserved_by_their_five_pods():
    runner = workload("SchedulingWithResourceClaim", "fast")
    runner.run()
    dra = runner.sched.cache.dra
    assert len(runner.sim.bound) == 10
    reserved = {c.name: len(c.reserved_for) for c in dra.claims.values()}
    assert reserved == {"test-claim-0": 5, "test-claim-1": 5}


def test_steady_state_replaces_the_pods_and_gives_their_devices_back():
    runner = workload("SteadyStateClusterResourceClaimTemplate", "fast", duration="300ms")
    [m] = runner.run().measurements
    assert m.pods > 30 and m.seconds >= 0.3
    dra = runner.sched.cache.dra
    live = [k for k in runner.sim.pods if k.startswith("test/")]
    assert len(live) == 10             # the last batch; every earlier one deleted with its claims
    assert len(dra.claims) == 10 and len(dra.allocated_devices()) <= 10


@pytest.mark.parametrize("claims", [20, 40])
def test_alloc_resource_claims_fill_the_cluster_and_stay_allocated(claims):
    """allocResourceClaims: each claim on a node where it fits, never reserved; with all 40
    devices taken, the steady-state pods cannot be scheduled (upstream's "full" cluster)."""
    runner = workload("SteadyStateClusterResourceClaimTemplate", "half_100nodes", nodesWithDRA=4, initClaims=claims,
                      duration="100ms")
    [m] = runner.run().measurements
    dra = runner.sched.cache.dra
    init = [c for c in dra.claims.values() if c.namespace == "init"]
    assert len(init) == claims and all(c.allocation is not None and not c.reserved_for for c in init)
    taken = [(r["pool"], r["device"]) for c in init for r in c.allocation["devices"]["results"]]
    assert len(set(taken)) == claims and max(Counter(pool for pool, _ in taken).values()) <= 10
    assert (m.pods > 0) == (claims < 40)


def test_a_claim_that_fits_nowhere_fails_the_workload():
    runner = workload("SteadyStateClusterResourceClaimTemplate", "half_100nodes", nodesWithDRA=2, initClaims=21,
                      duration="100ms")
    with pytest.raises(WorkloadError, match="could not allocate claim init/test-claim-9"):
        runner.run()


def test_first_available_with_a_missing_class_schedules_nothing():
    """The class of sub-0 does not exist: PreFilter rejects every pod (v1.34 never falls back)."""
    runner = workload("SteadyStateClusterResourceClaimTemplateFirstAvailable", "fast", duration="100ms")
    [m] = runner.run().measurements
    assert m.pods == 0 and not runner.sim.bound
    outcome = runner.sim.outcomes[next(k for k in runner.sim.pods if k.startswith("test/"))]
    assert "request req-0/sub-0: device class no-such-class does not exist" in outcome.message


def test_alpha_gates_are_refused_by_name_and_their_workloads_skipped():
    with pytest.raises(UnsupportedError, match="the DRADeviceTaints feature gate"):
        workload("SchedulingWithResourceClaimTemplateToleration", "fast")
    skipped = []
    results = run_perf(CONFIG, label_filter="integration-test,short", sample_interval=0.001,
                       on_skip=lambda name, e: skipped.append((name, str(e))))
    assert sorted({name.split("/")[0] for name, _ in skipped}) == [
        "SchedulingWithResourceClaimTemplateToleration", "SteadyStateClusterResourceClaimTemplatePartitionable",
        "SteadyStateClusterResourceClaimTemplatePartitionableBacktracking"]
    assert all("feature gate (alpha, off in kube-scheduler v1.34) is not implemented" in e for _, e in skipped)
    assert {r.test_case for r in results} == {"SchedulingWithResourceClaimTemplate", "SchedulingWithResourceClaim",
                                              "SteadyStateClusterResourceClaimTemplate",
                                              "SteadyStateClusterResourceClaimTemplateFirstAvailable"}
    # gates at their v1.34 values are not reported as gates not applied
    assert all("DynamicResourceAllocation" not in r.ignored_feature_gates for r in results)
