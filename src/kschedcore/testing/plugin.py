"""The pytest plugin (`pytest_plugins = ["kschedcore.testing.plugin"]`): the `kschedcore_perf`
fixture and a terminal summary of every gated run."""
from collections.abc import Iterator

import pytest

from .gate import PerfGate

_RUNS: list = []


@pytest.fixture
def kschedcore_perf() -> Iterator[PerfGate]:
    """Runs workloads and checks their speed or outcome: see kschedcore.testing."""
    gate = PerfGate()
    yield gate
    _RUNS.extend(gate.runs)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _RUNS:
        return
    terminalreporter.section("kschedcore gates")
    for run in _RUNS:
        util = ", ".join(f"{k} {100 * v:.1f}%" for k, v in run.utilisation.items())
        terminalreporter.write_line(
            f"{run.name}: {run.scheduled}/{run.pods} scheduled, {run.pods_per_second:,.0f} pods/s "
            f"(median of {len(run.rounds)}), relative {run.relative:.2f}, {util}")
