"""A sweep's results: the table as CSV (csv module), Parquet (pyarrow, the `sweep` extra) or
JSON, on a terminal with rich, and the summary plot (matplotlib, the `sweep` extra)."""
import csv
import json
from os import PathLike
from pathlib import Path

from .extras import require
from .tasks import COLUMNS

#: column -> its type, for Parquet's schema (every column may be null but the axes)
TYPES = {"task": "int64", "workload": "string", "configuration": "string", "percentageOfNodesToScore": "int64",
         "seed": "int64", "mode": "string", "arrival": "string", "podspec": "string", "nodes": "int64",
         "pods": "int64", "scheduled": "int64", "unschedulable": "int64", "instances": "int64",
         "cpuUtilization": "float64", "memoryUtilization": "float64", "digest": "string",
         "wallSeconds": "float64", "podsPerSecond": "float64"}
FORMATS = {".csv": "csv", ".parquet": "parquet"}


def table_format(path: str | PathLike[str]) -> str:
    """csv or parquet, by the file's suffix (-o)."""
    from ..errors import ValidationError
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise ValidationError("-o", "", f'the results file must end in .csv or .parquet, got "{path}"')
    return fmt


def write_table(rows: list, path: str | PathLike[str]) -> None:
    """Writes the rows as CSV, or as Parquet when `path` ends in `.parquet` (needs pyarrow)."""
    (write_parquet if table_format(path) == "parquet" else write_csv)(rows, path)


def write_csv(rows: list, path: str | PathLike[str]) -> None:
    with open(path, "w", newline="") as f:
        out = csv.DictWriter(f, COLUMNS)
        out.writeheader()
        out.writerows({k: "" if row[k] is None else row[k] for k in COLUMNS} for row in rows)


def write_parquet(rows: list, path: str | PathLike[str]) -> None:
    pa = require("pyarrow", "Parquet output", "sweep")
    pq = require("pyarrow.parquet", "Parquet output", "sweep")
    schema = pa.schema([(name, getattr(pa, TYPES[name])()) for name in COLUMNS])
    pq.write_table(pa.Table.from_pylist([{k: row[k] for k in COLUMNS} for row in rows], schema=schema), path)


def write_json(rows: list, summary: dict, path: str | PathLike[str]) -> None:
    """Writes `{"summary", "columns", "rows"}` as JSON."""
    with open(path, "w") as f:
        json.dump({"summary": summary, "columns": list(COLUMNS), "rows": [{k: row[k] for k in COLUMNS} for row in rows]},
                  f, indent=1)
        f.write("\n")


def summary_line(summary: dict) -> str:
    """One line on the run: tasks, wall seconds, where they ran, tasks/s and pods/s."""
    where = (f"{summary['jobs']} local process{'es' if summary['jobs'] > 1 else ''}" if summary["runner"] == "local"
             else f"Ray at {summary['address'] or 'ray.init()'} ({summary['cpus']} CPUs)")
    return (f"{summary['tasks']} tasks in {summary['wallSeconds']:.2f} s on {where}: "
            f"{summary['tasksPerSecond']:.2f} tasks/s, {summary['podsPerSecond']:,.0f} pods/s")


def print_table(rows: list, summary: dict) -> None:
    """The rows on stdout (the axes, the counts, utilisation, speed; columns no row fills are left out)."""
    from rich.console import Console
    from rich.table import Table

    shown = {"workload": "workload", "configuration": "config", "percentageOfNodesToScore": "pct", "seed": "seed",
             "mode": "mode", "pods": "pods", "scheduled": "scheduled", "unschedulable": "unsched",
             "instances": "instances", "cpuUtilization": "cpu", "memoryUtilization": "memory",
             "podsPerSecond": "pods/s"}
    used = [c for c in shown if any(row[c] is not None for row in rows)]
    t = Table(*[shown[c] for c in used], box=None)
    for row in rows:
        cells = {**row, "mode": mode_label(row)}
        t.add_row(*("" if cells[c] is None else str(cells[c]) for c in used))
    console = Console()
    if not console.is_terminal:      # a file or a pipe: no terminal width to fit
        console = Console(width=max(console.width, 200))
    console.print(t)
    console.print(summary_line(summary))


# ---- the summary plot ----------------------------------------------------------------------------
def group_label(row: dict) -> str:
    """A combination of the axes but the seed (the plot shows the seeds' spread)."""
    parts = [row["workload"], row["configuration"]]
    if row["percentageOfNodesToScore"] is not None:
        parts.append(f"{row['percentageOfNodesToScore']}%")
    return " · ".join(parts + [mode_label(row)])


def mode_label(row: dict) -> str:
    """The mode with its arrival (replay) or podspec (capacity): replay:settle, capacity:pod.yaml."""
    return ":".join(str(row[c]) for c in ("mode", "arrival", "podspec") if row[c] is not None)


def groups(rows: list) -> dict:
    out: dict = {}
    for row in rows:
        out.setdefault(group_label(row), []).append(row)
    return out


def write_plot(rows: list, summary: dict, path: str | PathLike[str]) -> None:
    """Per combination (seeds together: the bar is their mean, the whisker their range): pods
    placed of those tried, cpu and memory utilisation after, pods/s."""
    require("matplotlib", "the summary plot", "sweep")
    from matplotlib.figure import Figure
    import numpy as np

    by_group = groups(rows)
    labels = list(by_group)
    y = np.arange(len(labels))
    fig = Figure(figsize=(13, 1.6 + 0.38 * len(labels)), layout="constrained")
    placed, util, speed = fig.subplots(1, 3, sharey=True)

    def bars(ax, metric, offset=0.0, height=0.8, **style) -> None:
        values = [[float(r[metric] or 0) for r in by_group[g]] for g in labels]
        mean = np.array([np.mean(v) for v in values])
        spread = np.array([[m - min(v), max(v) - m] for m, v in zip(mean, values)]).T
        ax.barh(y + offset, mean, height, xerr=spread if any(len(v) > 1 for v in values) else None,
                capsize=2, **style)

    bars(placed, "pods", color="#d9d9d9", label="pods tried")
    bars(placed, "scheduled", height=0.5, color="#2b6cb0", label="scheduled (capacity: instances)")
    placed.set_title("pods placed")
    bars(util, "cpuUtilization", -0.2, 0.4, color="#dd6b20", label="cpu")
    bars(util, "memoryUtilization", 0.2, 0.4, color="#38a169", label="memory")
    util.set_xlim(0, 1)
    util.set_title("utilisation after (requested / allocatable)")
    bars(speed, "podsPerSecond", color="#805ad5")
    speed.set_title("pods/s (per task)")
    placed.set_yticks(y, labels)
    placed.invert_yaxis()
    for ax in (placed, util):
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.06), ncols=2, fontsize="small", frameon=False)
    seeds = len({r["seed"] for r in rows})
    fig.suptitle(f"{Path(summary['sweep']).name}: {summary['tasks']} tasks ({seeds} seed{'s' * (seeds > 1)} per bar), "
                 f"{summary['tasksPerSecond']:.2f} tasks/s, {summary['podsPerSecond']:,.0f} pods/s ({summary['runner']})")
    fig.savefig(path, dpi=110)
