"""The simulate report (counts, reasons, utilisation, speed) and the text forms of reports and
explain records (docs/formats.md)."""
from ..scheduler.result import GATED_MESSAGE, ScheduleResult


HEADER = ("pod", "node", "feasible", "score", "runner-up")


def explain_row(rec: dict) -> tuple:
    """An explain record as the table's cells: pod, node, feasible nodes, the chosen node's total
    score, the runner-up (the best-scoring node other than the chosen one, "" when it was the
    only one scored) and the message (why not: the FitError with its PostFilter part, or the error)."""
    scores, node = rec["scores"], rec["node"]
    chosen = scores.get(node, {}).get("total") if node else None
    others = [(s["total"], n) for n, s in scores.items() if n != node]
    # the best total; among equal totals the first name (a stable pick, as the record is unordered)
    best = min(others, key=lambda tn: (-tn[0], tn[1]), default=None)
    runner_up = f"{best[1]} ({best[0]})" if best is not None and node else ""
    why = rec.get("fitError") and (f"{rec['fitError']} {rec['postFilterMessage']}" if rec.get("postFilterMessage")
                                   else rec["fitError"])
    return (rec["pod"], node or "unschedulable", str(rec["numFeasible"]),
            "-" if chosen is None else str(chosen), runner_up, why or rec.get("error") or "")


def print_explain_table(records, wide: bool = False, console=None) -> None:
    """The readable form of explain records: a line per pod, its message (why not) on its own
    lines under it, indented and wrapped at the terminal's width; `wide`: the message as the
    last column, one line per pod whatever its length (for grep and wide terminals)."""
    import textwrap

    from rich.console import Console
    from rich.text import Text

    console = console or Console()
    rows = [explain_row(r) for r in records]
    heads = HEADER + (("message",) if wide else ())
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(HEADER)]

    def line(cells) -> Text:
        text = Text()
        for i, (cell, w) in enumerate(zip(cells, widths + [0])):
            style = "red" if i == 1 and cell == "unschedulable" and cells is not heads else ""
            text.append(cell.rjust(w) if i in (2, 3) else cell.ljust(w), style)
            text.append("  ")
        text.rstrip()
        return text

    console.print(line(heads), soft_wrap=wide, highlight=False)
    for r in rows:
        console.print(line(r if wide else r[:5]), soft_wrap=wide, highlight=False)
        if r[5] and not wide:
            for part in textwrap.wrap(r[5], max(console.width - 4, 20), break_on_hyphens=False):
                console.print(Text("    " + part), soft_wrap=True, highlight=False)


def as_result(outcome):
    """An Outcome of the loop as the ScheduleResult of its last attempt (for the report)."""
    if outcome.node is None and outcome.attempts == 0:
        return ScheduleResult(outcome.pod, None, 0, 0, error=GATED_MESSAGE)
    if outcome.node is not None or outcome.result is None:
        return ScheduleResult(outcome.pod, outcome.node, 0, 0)
    return outcome.result


def simulate_report(sched, results, wall, load_seconds, args) -> dict:
    scheduled = ignored = gated = possible = 0
    left_out = dict(getattr(sched, "ignored", {}))
    reasons: dict = {}
    messages: dict = {}
    for r in results:          # one pass: 10^6 results
        if r.node is not None:
            scheduled += 1
            continue
        if r.ignored:    # "no profile for schedulerName "x"": not this scheduler's pod
            ignored += 1
            reason = "schedulerName " + r.error.split('"')[1] if '"' in r.error else r.error
            left_out[reason] = left_out.get(reason, 0) + 1
        gated += r.gated
        possible += bool(getattr(r, "preemption_candidates", ()))
        if r.fit_error is not None:
            for reason in r.fit_error.reasons or {r.fit_error.pre_filter_message or str(r.fit_error): 1}:
                reasons[reason] = reasons.get(reason, 0) + 1
            msg = r.fit_error.full_message      # with the PostFilter (preemption) part
            messages[msg] = messages.get(msg, 0) + 1
    decisions = len(results)
    return {
        "nodes": len(sched.table),
        "pods": decisions,
        "scheduled": scheduled,
        "unschedulable": decisions - scheduled - ignored - gated,
        "gated": gated,       # pods with spec.schedulingGates: never attempted
        # pods kube-scheduler would get in by preemption (acted on only with --queue)
        "preemptionPossible": possible,
        "unschedulableReasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
        "fitErrors": dict(sorted(messages.items(), key=lambda kv: -kv[1])[:10]),
        "utilization": sched.utilization(),
        # what was left out, by reason: pods whose schedulerName no profile has, Succeeded /
        # Failed pods, pods bound to a node not in the cluster, objects of kinds not read
        "ignored": dict(sorted(left_out.items())),
        "percentageOfNodesToScore": args.percentage_of_nodes_to_score or 0,
        "seed": args.seed,
        "loadSeconds": round(load_seconds, 3),
        "wallSeconds": round(wall, 4),
        "podsPerSecond": round((decisions - ignored) / wall, 1) if wall > 0 and decisions > ignored else None,
    }


def print_report(rep):
    from rich.console import Console
    from rich.table import Table

    console = Console()
    t = Table(box=None, show_header=False)
    for key in ("nodes", "pods", "scheduled", "unschedulable", "wallSeconds", "podsPerSecond", "loadSeconds"):
        t.add_row(key, str(rep[key]))
    for reason, n in rep["ignored"].items():
        t.add_row(f"ignored: {reason}", str(n))
    if rep.get("horizonReached"):
        t.add_row("stopped at --until", f"{rep['virtualSeconds']:.0f} s of virtual time, pods still waiting to retry")
    if rep.get("preemptionPossible"):
        t.add_row("could preempt (see --queue)", str(rep["preemptionPossible"]))
    for name, frac in rep["utilization"].items():
        t.add_row(f"utilization {name}", f"{100 * frac:.1f}%")
    console.print(t)
    if rep["unschedulableReasons"]:
        r = Table("reason (pods)", "pods", box=None)
        for reason, n in rep["unschedulableReasons"].items():
            r.add_row(reason, str(n))
        console.print(r)


def print_replay_summary(summary):
    """The replay's summary as a table (`kschedcore replay`, -o table)."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    t = Table(box=None, show_header=False)
    t.add_row("arrival", summary["arrival"])
    t.add_row("events (applied, with departures)", f"{summary['events']} ({summary['eventsApplied']})")
    t.add_row("virtual seconds", f"{summary['virtualSeconds']:g}")
    for key, n in summary["pods"].items():
        t.add_row(f"pods {key}", str(n))
    t.add_row("scheduling cycles", str(summary["cycles"]))
    t.add_row("preemptions", str(summary["preemptions"]))
    lat = summary["schedulingLatencySeconds"]
    if lat:
        t.add_row("latency p50 / p90 / p99 / max (s)",
                  " / ".join(f"{lat[k]:g}" for k in ("p50", "p90", "p99", "max")))
    for name, frac in summary["utilizationAtEnd"].items():
        t.add_row(f"utilization {name} at end", f"{100 * frac:.1f}%")
    for key in ("wallSeconds", "eventsPerSecond", "podsPerSecond"):
        if key in summary:
            t.add_row(key, str(summary[key]))
    console.print(t)
    if summary["unschedulableAtEndByReason"]:
        r = Table("unschedulable at the end: reason", "pods", box=None)
        for reason, n in summary["unschedulableAtEndByReason"].items():
            r.add_row(reason, str(n))
        console.print(r)
