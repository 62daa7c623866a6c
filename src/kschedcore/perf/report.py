"""scheduler_perf's output: `{"version": "v1", "dataItems": [...]}` with one SchedulingThroughput
item per measurement (labels Metric and Name, data in pods/s, AverageThreshold when the workload
has a threshold), and a table with each workload's threshold beside it."""
from rich.console import Console
from rich.table import Table


def data_items(results) -> dict:
    """scheduler_perf's JSON (`{"version": "v1", "dataItems": [...]}`) for WorkloadResults, each
    measurement with its workload's threshold as `AverageThreshold`."""
    items = []
    for r in results:
        for m in r.measurements:
            data = {k: round(v, 2) for k, v in m.data.items()}
            if r.threshold:
                data["AverageThreshold"] = r.threshold
            items.append({"data": data, "unit": "pods/s",
                          "labels": {"Metric": "SchedulingThroughput", "Name": m.name},
                          "pods": m.pods, "seconds": round(m.seconds, 4), "sampleInterval": m.interval,
                          **({"resampled": True} if m.resampled else {}),
                          **({"runs": [None if a is None else round(a, 2) for a in m.runs]} if m.runs else {})})
    return {"version": "v1", "dataItems": items}


def passed(result) -> bool | None:
    """scheduler_perf's check: every measurement's Average above the threshold (None: none set)."""
    if not result.threshold:
        return None
    return all(m.data.get("Average", 0) > result.threshold for m in result.measurements)


def print_table(results, file=None) -> None:
    """The SchedulingThroughput table of WorkloadResults, each beside its threshold."""
    table = Table(title="SchedulingThroughput (pods/s)")
    finer = []
    repeated = any(m.runs for r in results for m in r.measurements)
    for col in ("workload", "pods", "seconds", "window pods/s", "Average", "Perc50", "Perc90", "Perc99", "threshold",
                "x threshold", *(("Average of runs",) if repeated else ())):
        table.add_column(col, justify="left" if col == "workload" else "right")
    for r in results:
        for m in r.measurements:
            avg = m.data.get("Average")
            ratio = f"{avg / r.threshold:,.0f}x" if avg and r.threshold else "-"
            if m.resampled:
                finer.append(f"{m.name} ({m.interval * 1000:.2g} ms)")
            table.add_row(m.name, str(m.pods), f"{m.seconds:.3f}", f"{m.pods / m.seconds:,.0f}" if m.seconds else "-",
                          *(f"{m.data[k]:,.0f}" if k in m.data else "-" for k in ("Average", "Perc50", "Perc90", "Perc99")),
                          f"{r.threshold:,.0f}" if r.threshold else "-", ratio, *((_span(m.runs),) if repeated else ()))
    console = Console(file=file, width=180 if repeated else 160)
    console.print(table)
    if repeated:
        console.print("each row is its median run (by Average); Average of runs: the lowest and highest run")
    if finer:
        console.print("windows shorter than two ticks, sampled with finer ticks: " + ", ".join(finer))
    gates = sorted({f"{k}={str(v).lower()}" for r in results for k, v in r.ignored_feature_gates.items()})
    if gates:
        console.print("feature gates not applied (kschedcore runs kube-scheduler v1.34's defaults): " + ", ".join(gates))


def _span(averages) -> str:
    found = [a for a in averages if a is not None]
    if not found:
        return "-"
    missing = len(averages) - len(found)
    return f"{min(found):,.0f} - {max(found):,.0f}" + (f" ({missing} without)" if missing else "")
