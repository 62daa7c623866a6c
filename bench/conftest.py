"""Every benchmark also records its ratio to the machine reference timed before and after it
(extra_info: referenceSeconds, ratio = median / reference), and `--ratio-gate PERCENT` fails the
session when a ratio is more than PERCENT above the baseline's (`--ratio-baseline FILE`, by
default the newest earlier save in .benchmarks): see bench/gate.py."""
import json
import statistics
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from kschedcore.testing.reference import REFERENCE_VERSION, reference_seconds, reference_work  # noqa: E402

import gate  # noqa: E402


def pytest_addoption(parser):
    group = parser.getgroup("kschedcore ratio gate")
    group.addoption("--ratio-gate", type=float, default=None, metavar="PERCENT",
                    help="fail when a benchmark's ratio to the machine reference regressed by more than PERCENT")
    group.addoption("--ratio-baseline", default=None, metavar="FILE",
                    help="the pytest-benchmark save to compare with (default: the newest earlier one)")


@pytest.fixture(autouse=True)
def _machine_reference(request):
    """Times the reference before each round of a `benchmark.pedantic` (in its setup: untimed)
    and before and after the test; the ratio is the median of the rounds' own ratios, so a
    burst of load that slows a round slows the reference next to it."""
    if "benchmark" not in request.fixturenames:
        yield
        return
    bench = request.getfixturevalue("benchmark")      # kept: the fixture is torn down before this one
    per_round = []
    bench.pedantic = _with_reference(bench.pedantic, per_round)
    before = reference_seconds(3)
    yield
    if bench.stats is None:          # skipped, or --benchmark-disable
        return
    reference = statistics.median([before, reference_seconds(3)])
    data = bench.stats.stats.data
    if len(per_round) >= len(data):
        ratio = statistics.median(d / r for d, r in zip(data, per_round[-len(data):]))
    else:
        ratio = bench.stats.stats.median / reference
    bench.extra_info["referenceSeconds"] = round(reference, 6)
    bench.extra_info["referenceVersion"] = REFERENCE_VERSION
    bench.extra_info["ratio"] = round(ratio, 5)


def _with_reference(pedantic, per_round):
    def run(target, args=(), kwargs=None, setup=None, **options):
        if options.get("iterations", 1) > 1:      # pytest-benchmark allows no setup then
            return pedantic(target, args=args, kwargs=kwargs, setup=setup, **options)

        def setup_and_reference():
            t0 = time.perf_counter()
            reference_work()
            per_round.append(time.perf_counter() - t0)
            out = setup() if setup is not None else None
            return out if out is not None else (tuple(args), dict(kwargs or {}))
        return pedantic(target, setup=setup_and_reference, **options)
    return run


def pytest_sessionstart(session):
    """The baseline is chosen before this run's own save (--benchmark-autosave) is written."""
    config = session.config
    bs = getattr(config, "_benchmarksession", None)
    if config.getoption("--ratio-gate") is not None and bs is not None:
        config._ratio_baseline = config.getoption("--ratio-baseline") or \
            gate.latest_save(getattr(bs.storage, "path", ".benchmarks"))


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    percent = config.getoption("--ratio-gate")
    if percent is None or not hasattr(config, "_ratio_baseline"):
        return
    lines = config._ratio_lines = []
    path = config._ratio_baseline
    if path is None:
        lines.append("no baseline save (run once with --benchmark-autosave, or give --ratio-baseline)")
        session.exitstatus = 1
        return
    now = {b.fullname: b.extra_info["ratio"] for b in config._benchmarksession.benchmarks if "ratio" in b.extra_info}
    base = gate.ratios(json.loads(Path(path).read_text())["benchmarks"])
    rows, regressions = gate.compare(base, now, percent)
    lines.append(f"against {path}")
    if not gate.report(rows, regressions, percent, lines.append) or not rows:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, config):
    lines = getattr(config, "_ratio_lines", None)
    if lines:
        terminalreporter.section("ratio gate")
        for line in lines:
            terminalreporter.write_line(line)
