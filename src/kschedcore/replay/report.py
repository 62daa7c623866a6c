"""The replay report: one self-contained HTML file of matplotlib figures (PNG, embedded) from a
replay's `-o json` document -- utilisation, pending and running pods, scheduling latency,
unschedulable reasons, allocation per node, preemptions. An `-o jsonl` file (pod records only)
gives the figures that records alone can draw. Needs the `report` extra (matplotlib)."""
import base64
import html
import io
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..errors import WorkloadError  # noqa: E402

PERCENT_NAMES = {"cpu": "CPU", "memory": "memory", "pods": "pod slots", "nvidia.com/gpu": "GPU",
                 "ephemeral-storage": "ephemeral storage"}


def read_run(path) -> dict:
    """A replay's output: the -o json document, or -o jsonl records ({"pods": [...]})."""
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise WorkloadError(str(path), "", e.strerror or str(e)) from None
    try:
        if text.lstrip().startswith("{") and "\n{" not in text.strip():
            doc = json.loads(text)
            if "summary" in doc:
                return doc
            return {"pods": [doc]}
        return {"pods": [json.loads(line) for line in text.splitlines() if line.strip()]}
    except json.JSONDecodeError as e:
        raise WorkloadError(str(path), "", f"not a replay output (-o json or -o jsonl): {e.msg}") from None


def _x_axis(series):
    """Replay time in a readable unit, or the event count when no time passed (settle mode)."""
    times = series["time"]
    if times and max(times) > min(times):
        return _scaled(times)
    return series["step"], "events applied"


def _when(seconds) -> str:
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.4g} {unit}"
    return f"{seconds:.4g} s"


def _scaled(times):
    span = max(times) - min(times) if times else 0
    for unit, seconds in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if span >= 2 * seconds:
            return [t / seconds for t in times], f"replay time ({unit})"
    return list(times), "replay time (s)"


def _utilization(ax, series) -> None:
    x, label = _x_axis(series)
    for name, values in series["utilization"].items():
        ax.plot(x, [None if v is None else 100 * v for v in values], label=PERCENT_NAMES.get(name, name),
                drawstyle="steps-post")
    ax.set(title="Requested / allocatable, whole cluster", xlabel=label, ylabel="utilisation (%)", ylim=(0, 105))
    ax.legend(loc="best", fontsize="small")


def _pods(ax, series) -> None:
    x, label = _x_axis(series)
    ax.plot(x, series["running"], label="running (bound)", drawstyle="steps-post")
    ax.plot(x, series["pending"], label="pending (arrived, not bound)", drawstyle="steps-post")
    ax.set(title="Pods over time", xlabel=label, ylabel="pods")
    ax.legend(loc="best", fontsize="small")


def _latency(ax, pods) -> None:
    bound = [p for p in pods if p.get("boundAt") is not None and p.get("arrival") is not None]
    lat = sorted(p["boundAt"] - p["arrival"] for p in bound)
    unit = "latency (virtual s)"
    if lat and not any(lat) and all(p.get("boundEvent") is not None and p.get("event") is not None for p in bound):
        lat = sorted(p["boundEvent"] - p["event"] for p in bound)     # no time passed: count events
        unit = "events from arrival to binding (0: bound on arrival)"
    if not lat:
        ax.text(0.5, 0.5, "no pod was bound", ha="center", va="center", transform=ax.transAxes)
    else:
        y = [100 * (i + 1) / len(lat) for i in range(len(lat))]
        ax.step(lat, y, where="post")
        positive = [x for x in lat if x > 0]
        if positive and max(positive) > 100 * min(positive):   # spans decades: log beyond the smallest
            ax.set_xscale("symlog", linthresh=min(positive))
    ax.set(title=f"Scheduling latency, arrival to first binding ({len(lat)} pods)",
           xlabel=unit, ylabel="pods bound within (%)", ylim=(0, 101))


def _reasons(ax, summary, pods) -> None:
    reasons = (summary or {}).get("unschedulableAtEndByReason")
    if reasons is None:   # records only: the last message of pods never bound or still pending
        reasons = {}
        for p in pods:
            if p.get("messages") and p.get("departedAt") is None and (p.get("node") is None or p.get("boundAt") is None):
                m = p["messages"][-1].split(". ")[0]
                reasons[m] = reasons.get(m, 0) + 1
    items = sorted(reasons.items(), key=lambda kv: kv[1])[-15:]
    if not items:
        ax.text(0.5, 0.5, "none: every pod that arrived was scheduled", ha="center", va="center",
                transform=ax.transAxes)
        ax.set(title="Unschedulable at the end, by reason", xticks=[], yticks=[])
    else:
        ax.barh([_short(r) for r, _ in items], [n for _, n in items])
        ax.set(xlabel="pods", title="Unschedulable at the end, by reason")
        ax.tick_params(axis="y", labelsize="small")


def _short(text, n=60):
    return text if len(text) <= n else text[:n - 1] + "…"


def _allocation(ax, allocation, when) -> None:
    shown = [(k, v) for k, v in allocation.items() if k not in ("nodes", "time")]
    for name, values in shown:
        vals = [100 * v for v in values if v is not None]
        ax.hist(vals, bins=20, range=(0, 100), histtype="step", linewidth=1.5,
                label=f"{PERCENT_NAMES.get(name, name)} ({len(vals)} nodes)")
    if len(allocation.get("nodes", ())) > 50:
        ax.set_yscale("log")         # a few busy nodes stay visible next to many idle ones
    ax.set(title=f"Allocation per node {when}", xlabel="requested / allocatable (%)",
           ylabel="nodes" + (" (log scale)" if len(allocation.get("nodes", ())) > 50 else ""))
    ax.legend(loc="best", fontsize="small")


def _preemptions(ax, preemptions) -> None:
    times = [p["time"] for p in preemptions]
    flat = not times or max(times) == min(times)
    if flat and preemptions:
        ax.bar(range(1, len(preemptions) + 1), [len(p["victims"]) for p in preemptions])
        ax.set(title=f"Preemptions ({len(preemptions)}), victims of each", xlabel="preemption (in order)",
               ylabel="victims")
        return
    label = "replay time (s)"
    if not preemptions:
        ax.text(0.5, 0.5, "no preemption", ha="center", va="center", transform=ax.transAxes)
    else:
        times, label = _scaled(times)
        ax.step(times, range(1, len(times) + 1), where="post", label="preemptions")
        victims, total = [], 0
        for p in preemptions:
            total += len(p["victims"])
            victims.append(total)
        ax.step(times, victims, where="post", label="victims")
        ax.legend(loc="best", fontsize="small")
    ax.set(title="Preemptions over time (cumulative)", xlabel=label, ylabel="count")


def figures(doc) -> list:
    """(title, matplotlib Figure) of every figure the document allows."""
    pods, summary, series = doc.get("pods", []), doc.get("summary"), doc.get("series")
    out = []

    def fig(title, draw, *args) -> None:
        f, ax = plt.subplots(figsize=(8, 4.2), dpi=100)
        draw(ax, *args)
        f.tight_layout()
        out.append((title, f))

    if series:
        fig("utilization", _utilization, series)
        fig("pods", _pods, series)
    fig("latency", _latency, pods)
    fig("reasons", _reasons, summary, pods)
    if doc.get("allocation"):
        fig("allocation", _allocation, doc["allocation"], "at the end")
    peak = (series or {}).get("peakAllocation")
    if peak:
        fig("allocation-peak", _allocation, peak, f"at the busiest sample (t = {_when(peak['time'])})")
    if "preemptions" in doc:
        fig("preemptions", _preemptions, doc["preemptions"])
    return out


def write_report(doc, path, png_dir=None) -> list:
    """Writes the HTML report (and, with png_dir, each figure as PNG); returns the figure names."""
    parts, names = [], []
    if png_dir:
        Path(png_dir).mkdir(parents=True, exist_ok=True)
    for name, f in figures(doc):
        buf = io.BytesIO()
        f.savefig(buf, format="png")
        if png_dir:
            f.savefig(Path(png_dir) / f"{name}.png", format="png")
        plt.close(f)
        parts.append(f'<figure><img alt="{name}" src="data:image/png;base64,'
                     f'{base64.b64encode(buf.getvalue()).decode()}"></figure>')
        names.append(name)
    Path(path).write_text(_page(doc, parts))
    return names


def _page(doc, parts) -> str:
    summary = doc.get("summary")
    rows = ""
    if summary:
        flat = {"arrival": summary["arrival"], "events": summary["events"],
                "virtual seconds": summary["virtualSeconds"], "scheduling cycles": summary["cycles"],
                "preemptions": summary["preemptions"], **{f"pods {k}": v for k, v in summary["pods"].items()},
                **{f"latency {k} (s)": round(v, 3) for k, v in summary["schedulingLatencySeconds"].items()},
                **{f"utilisation {k} at end": f"{100 * v:.1f}%" for k, v in summary["utilizationAtEnd"].items()}}
        for key in ("wallSeconds", "eventsPerSecond", "podsPerSecond"):
            if key in summary:
                flat[key] = summary[key]
        rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>" for k, v in flat.items())
    else:
        rows = f"<tr><th>pods</th><td>{len(doc.get('pods', []))}</td></tr>" \
               "<tr><th>note</th><td>from pod records only (-o jsonl): utilisation, pods over time and " \
               "allocation per node need the -o json output</td></tr>"
    return ("<!doctype html><html><head><meta charset='utf-8'><title>kschedcore replay report</title>"
            "<style>body{font-family:sans-serif;max-width:900px;margin:2em auto}th{text-align:left;"
            "padding-right:2em}figure{margin:1.5em 0}img{max-width:100%}</style></head><body>"
            f"<h1>kschedcore replay report</h1><table>{rows}</table>{''.join(parts)}</body></html>")
