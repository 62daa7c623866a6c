"""`kschedcore perf`: upstream's scheduler_perf workloads (performance-config.yaml) run on
kschedcore, reporting SchedulingThroughput as scheduler_perf does."""
from dataclasses import replace

from .config import load_perf_config, selected
from .report import data_items, print_table
from .runner import Runner, WorkloadResult

__all__ = ["load_perf_config", "selected", "Runner", "WorkloadResult", "run_perf", "median_runs", "data_items",
           "print_table"]


def run_perf(path, test_case=None, workload=None, label_filter="performance", sample_interval=0.01,
             on_result=None, on_skip=None, scheduler_options=None, repeat: int = 1) -> list:
    """Runs the workloads of a performance-config.yaml that the filters select; returns their
    WorkloadResults (on_result(result) as each finishes). A selected test case with an op
    kschedcore does not run, or a workload that meets input kschedcore refuses (UnsupportedError:
    in-tree Portworx volumes where a CSINode lists them migrated, more resource names than the
    table holds) is skipped with on_skip(name, error) -- name "<TestCase>" or
    "<TestCase>/<Workload>" --, or, when it was asked for by name (or nothing else ran), raises
    that error. scheduler_options: more keyword
    arguments of each workload's Scheduler (e.g. its extender_factory). repeat: each workload
    run that many times in this process, each measurement reported from its median run
    (`median_runs`)."""
    import gc
    from ..errors import UnsupportedError, WorkloadError
    cases = load_perf_config(path)
    results, skipped = [], []
    strict = test_case is not None or on_skip is None
    for case in cases:
        if test_case is not None and case.name != test_case:
            continue
        for w in case.workloads:
            if workload is not None and w.name != workload:
                continue
            if workload is None and not selected(case.labels + w.labels, label_filter):
                continue
            if case.unsupported is not None:
                if strict:
                    raise case.unsupported
                skipped.append((case.name, case.unsupported))
                break
            try:
                runs = []
                for _ in range(repeat):
                    runs.append(Runner(case, w, sample_interval, options=scheduler_options).run())
                    gc.collect()
                result = median_runs(runs)
            except UnsupportedError as e:
                if strict:
                    raise
                skipped.append((f"{case.name}/{w.name}", e))
                continue
            finally:
                # the workload's cluster is garbage now, in cycles: collected here, not by a full
                # collection in the middle of the next workload's measured window (0.5-1 s)
                gc.collect()
            results.append(result)
            if on_result is not None:
                on_result(result)
    if not results and skipped:
        raise skipped[0][1]
    for name, error in skipped:
        on_skip(name, error)
    if not results:
        raise WorkloadError(str(path), "", "no workload selected (see --test-case, --workload, --label-filter)")
    return results


def median_runs(runs: list) -> WorkloadResult:
    """One WorkloadResult from runs of the same workload: each measurement is its median run's
    (by Average; by the window's rate where no run has one), with every run's Average in
    `runs`, in run order."""
    if len(runs) == 1:
        return runs[0]
    first = runs[0]
    measurements = []
    for i, m in enumerate(first.measurements):
        same = [r.measurements[i] for r in runs]
        ranked = sorted(same, key=_by_average if any("Average" in x.data for x in same) else _by_window)
        median = ranked[(len(ranked) - 1) // 2]
        measurements.append(replace(median, runs=[x.data.get("Average") for x in same]))
    return replace(first, measurements=measurements, seconds=sum(r.seconds for r in runs))


def _by_average(m) -> float:
    return m.data.get("Average", 0.0)


def _by_window(m) -> float:
    return m.pods / m.seconds if m.seconds else 0.0
