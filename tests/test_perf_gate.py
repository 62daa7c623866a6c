"""The performance gate a user puts in their own CI (kschedcore.testing): the fixture runs a
real workload through pytest (pytester), its requirements pass or fail with every miss named,
and the machine reference it divides out is deterministic work."""
import re
import textwrap
from pathlib import Path

import pytest

from kschedcore.testing import PerfGate, reference_seconds, reference_work

pytest_plugins = ["pytester"]

CLUSTER = """
apiVersion: v1
kind: List
items:
- {kind: Node, metadata: {name: a}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {kind: Node, metadata: {name: b}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
"""


def pods(n, cpu="1"):
    items = "".join(f"""
- kind: Pod
  metadata: {{name: p{i}, namespace: default}}
  spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}", memory: 1Gi}}}}}}]}}""" for i in range(n))
    return "apiVersion: v1\nkind: List\nitems:" + items + "\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "pods.yaml").write_text(pods(9))      # 8 CPUs: one of the nine cannot fit
    return tmp_path


def test_reference_is_fixed_work():
    assert reference_work() == reference_work()
    assert reference_work(seed=1) != reference_work(seed=0)
    assert 0 < reference_seconds(rounds=3) < 5


def test_gate_run_counts_and_utilisation(files):
    run = PerfGate().schedule(str(files / "cluster.yaml"), str(files / "pods.yaml"), rounds=2)
    assert (run.pods, run.scheduled, run.unschedulable) == (9, 8, 1)
    assert run.utilisation["cpu"] == pytest.approx(1.0)
    assert run.utilisation["memory"] == pytest.approx(0.5)
    assert len(run.rounds) == 2 and run.seconds > 0 and run.pods_per_second > 0
    assert run.relative == pytest.approx(run.pods_per_second * run.reference_seconds)
    run.require(utilisation={"cpu": 0.99}, scheduled=8, unschedulable=1, pods_per_second=1)
    with pytest.raises(AssertionError) as e:
        run.require(utilisation={"memory": 0.9}, scheduled=1.0, unschedulable=0, pods_per_second=10**12)
    text = str(e.value)
    for part in ("memory utilisation 0.500 < 0.9", "8 of 9 pods scheduled < 9 required",
                 "1 pods unschedulable > 0 allowed", "pods/s < 1,000,000,000,000 required"):
        assert part in text, text


def test_gate_refuses_unknown_resource(files):
    from kschedcore.errors import ValidationError
    run = PerfGate().schedule(str(files / "cluster.yaml"), str(files / "pods.yaml"), rounds=1)
    with pytest.raises(ValidationError, match="utilisation.gpu: no such resource"):
        run.require(utilisation={"gpu": 0.5})


def test_the_loop_decides_as_schedule_pending(files):
    gate = PerfGate()
    direct = gate.schedule(str(files / "cluster.yaml"), str(files / "pods.yaml"), rounds=1)
    loop = gate.schedule(str(files / "cluster.yaml"), str(files / "pods.yaml"), rounds=1, queue=True)
    assert (loop.scheduled, loop.unschedulable, loop.utilisation) == (direct.scheduled, direct.unschedulable,
                                                                      direct.utilisation)
    assert len(gate.runs) == 2


def test_fixture_in_a_users_test_suite(pytester, files):
    """As a user's CI runs it: the plugin opted into from conftest.py, one gate met, one missed."""
    pytester.makeconftest('pytest_plugins = ["kschedcore.testing.plugin"]')
    pytester.makepyfile(textwrap.dedent(f"""
        CLUSTER, PODS = {str(files / "cluster.yaml")!r}, {str(files / "pods.yaml")!r}

        def test_met(kschedcore_perf):
            kschedcore_perf.schedule(CLUSTER, PODS, name="fits").require(scheduled=8, utilisation={{"cpu": 0.9}})

        def test_missed(kschedcore_perf):
            kschedcore_perf.schedule(CLUSTER, PODS, name="all-of-them").require(unschedulable=0)
    """))
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*kschedcore gate all-of-them: 1 pods unschedulable > 0 allowed*",
                                 "*kschedcore gates*", "fits: 8/9 scheduled*cpu 100.0%*"])


def test_readme_gate_example_runs_as_written(pytester):
    """The guide's example, conftest and test as printed, on a cluster that meets it."""
    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "performance-gates.md").read_text()
    block = re.search(r"```python\n(.*?)```", guide, re.S).group(1)
    conftest, test = block.split("# test_scheduling_gate.py\n")
    pytester.makeconftest(conftest)
    pytester.makepyfile(test_scheduling_gate=test)
    nodes = "".join(f"\n- {{kind: Node, metadata: {{name: n{i}}}, status: {{allocatable: "
                    f"{{cpu: '4', memory: 16Gi, pods: '110'}}}}}}" for i in range(20))
    pytester.path.joinpath("cluster.yaml").write_text("apiVersion: v1\nkind: List\nitems:" + nodes + "\n")
    pytester.path.joinpath("pods.yaml").write_text(pods(300, cpu="200m"))     # 75% of the CPUs
    pytester.path.joinpath("scheduler-config.yaml").write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: default-scheduler\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*kschedcore gates*", "*300/300 scheduled*cpu 75.0%*"])
