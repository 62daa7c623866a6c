"""Performance gates for a user's own CI (a pytest plugin) and the machine reference that makes
their figures survive a noisy machine.

    def test_capacity_gate(kschedcore_perf):
        run = kschedcore_perf.schedule("cluster.yaml", "pods.yaml", config="sched.yaml")
        run.require(pods_per_second=20_000, relative=5.0, utilisation={"cpu": 0.7}, unschedulable=0)

The plugin is opt-in, so that kschedcore's import stays out of every other pytest session:
`pytest_plugins = ["kschedcore.testing.plugin"]` in the conftest.py, or
`pytest -p kschedcore.testing.plugin`.
"""
from .gate import GateRun, PerfGate
from .reference import reference_seconds, reference_work

__all__ = ["GateRun", "PerfGate", "reference_seconds", "reference_work"]
