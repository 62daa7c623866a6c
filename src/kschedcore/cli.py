"""The `kschedcore` command: explain and simulate.

Bad input prints one line naming the object and field, and exits 2 -- never a traceback.
"""
import argparse
import json
import sys
import time

from .errors import KSchedCoreError
from .framework.config import load_config
from .framework.loop import Outcome, Simulation
from .scheduler import GATED_MESSAGE, TIE_BREAKS, ScheduleResult, Scheduler
from .sources.files import load_workload
from .sources.generator import generate

EXIT_INPUT = 2


def _percentage(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be 0-100, got {value}")
    return value


def _parser():
    p = argparse.ArgumentParser(prog="kschedcore", description="kube-scheduler v1.34 decisions, fast, in process.")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp):
        sp.add_argument("--percentage-of-nodes-to-score", type=_percentage, default=None, metavar="N",
                        help="0 or unset: adaptive, as kube-scheduler (default)")
        sp.add_argument("--seed", type=int, default=0, help="seed of the random tie-break (and generator)")
        sp.add_argument("--config", metavar="FILE",
                        help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file")
        sp.add_argument("--threads", type=int, choices=(1, 2), default=1,
                        help="2: split large scans between two threads (for an idle multi-core machine)")

    ex = sub.add_parser("explain", help="per-node filter results and per-plugin scores of each pending pod")
    ex.add_argument("workload", nargs="+", help="YAML/JSON files: Nodes, Pods, Lists or workload documents")
    common(ex)
    ex.add_argument("--tie-break", choices=TIE_BREAKS, default="random")
    ex.add_argument("-o", "--output", choices=("table", "jsonl", "json"), default="table")

    sim = sub.add_parser("simulate", help="schedule every pending pod and report the outcome")
    sim.add_argument("workload", nargs="*", help="files as for explain; none: a generated cluster")
    common(sim)
    sim.add_argument("--tie-break", choices=TIE_BREAKS, default="random")
    sim.add_argument("--nodes", type=int, default=5000, help="generated cluster: nodes (default 5000)")
    sim.add_argument("--pods", type=int, default=30000, help="generated cluster: pods (default 30000)")
    sim.add_argument("--queue", action="store_true",
                     help="run kube-scheduler's loop: scheduling queue (backoff, gates, requeue on "
                          "cluster events), binding cycle, on a virtual clock")
    sim.add_argument("-o", "--output", choices=("table", "json", "jsonl"), default="table",
                     help="jsonl: one line per pod (node, attempts, full unschedulable message)")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except KSchedCoreError as e:
        print(f"kschedcore: error: {e}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return 0


def _scheduler(args, workload):
    config = load_config(args.config) if args.config else None
    return Scheduler.from_workload(workload, percentage_of_nodes_to_score=args.percentage_of_nodes_to_score,
                                   tie_break=args.tie_break, seed=args.seed, threads=args.threads,
                                   config=config)


# ---- explain ---------------------------------------------------------------------------------
def cmd_explain(args) -> int:
    sched = _scheduler(args, load_workload(*args.workload))
    out = sys.stdout
    if args.output == "jsonl":
        sched.explain_pending(callback=lambda rec: out.write(json.dumps(rec, separators=(",", ":")) + "\n"))
    elif args.output == "json":
        json.dump(sched.explain_pending(), out, indent=1)
        out.write("\n")
    else:
        _explain_table(sched.explain_pending())
    return 0


def _explain_table(records):
    from rich.console import Console
    from rich.table import Table

    table = Table("pod", "node", "feasible", "score", "why not / runner-up", box=None)
    for r in records:
        scores = sorted(((s["total"], n) for n, s in r["scores"].items()), reverse=True)
        best = str(scores[0][0]) if scores else "-"
        note = r["fitError"] or r.get("error") or (f"{scores[1][1]} ({scores[1][0]})" if len(scores) > 1 else "")
        table.add_row(r["pod"], r["node"] or "[red]unschedulable[/red]", str(r["numFeasible"]), best, note)
    Console().print(table)


# ---- simulate --------------------------------------------------------------------------------
def cmd_simulate(args) -> int:
    t0 = time.perf_counter()
    workload = load_workload(*args.workload) if args.workload else \
        generate(nodes=args.nodes, pods=args.pods, seed=args.seed or 1)
    sched = _scheduler(args, workload)
    for pod in sched.pending:        # compile ahead: the timed phase is scheduling alone
        sched.prepare(pod)
    load_seconds = time.perf_counter() - t0
    n_pods = len(sched.pending)
    if args.queue:
        loop = Simulation(sched)
        t1 = time.perf_counter()
        outcomes = loop.run_until_idle()
        wall = time.perf_counter() - t1
        results = [_as_result(o) for o in outcomes]
    else:
        with _progress(n_pods, args.output) as tick:
            t1 = time.perf_counter()
            results = sched.schedule_pending(callback=tick)
            wall = time.perf_counter() - t1
        outcomes = [Outcome(r.pod, r.node, 0 if r.gated else 1, None if r.node else _message(r)) for r in results]
    if args.output == "jsonl":
        for o in outcomes:
            print(json.dumps({"pod": o.pod, "node": o.node, "attempts": o.attempts, "message": o.message}))
        return 0
    report = _report(sched, results, wall, load_seconds, args)
    if args.queue:
        report["virtualSeconds"] = loop.clock.now()
        report["cycles"] = loop.cycles
    if args.output == "json":
        print(json.dumps(report, indent=1))
    else:
        _print_report(report)
    return 0


class _progress:
    """A rich progress bar on a terminal; nothing otherwise (and for -o json)."""

    def __init__(self, total, output):
        self.total = total
        self.bar = None
        if sys.stderr.isatty() and output != "json":
            from rich.progress import Progress
            self.bar = Progress(transient=True)

    def __enter__(self):
        if self.bar is None:
            return None
        self.bar.start()
        task = self.bar.add_task("scheduling", total=self.total)
        count = [0]

        def tick(_result):
            count[0] += 1
            if count[0] % 1000 == 0:
                self.bar.update(task, completed=count[0])
        return tick

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()


def _message(result) -> str | None:
    return result.fit_error.full_message if result.fit_error is not None else result.error


def _as_result(outcome):
    """An Outcome of the loop as the ScheduleResult of its last attempt (for the report)."""
    if outcome.node is None and outcome.attempts == 0:
        return ScheduleResult(outcome.pod, None, 0, 0, error=GATED_MESSAGE)
    if outcome.node is not None or outcome.result is None:
        return ScheduleResult(outcome.pod, outcome.node, 0, 0)
    return outcome.result


def _report(sched, results, wall, load_seconds, args) -> dict:
    scheduled = sum(1 for r in results if r.node is not None)
    ignored = sum(1 for r in results if r.ignored)
    gated = sum(1 for r in results if r.gated)
    reasons, messages = {}, {}
    for r in results:
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
        "preemptionPossible": sum(1 for r in results if getattr(r, "preemption_candidates", ())),
        "unschedulableReasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
        "fitErrors": dict(sorted(messages.items(), key=lambda kv: -kv[1])[:10]),
        "utilization": sched.utilization(),
        "ignored": ignored,   # pods whose schedulerName no profile has
        "percentageOfNodesToScore": args.percentage_of_nodes_to_score or 0,
        "seed": args.seed,
        "loadSeconds": round(load_seconds, 3),
        "wallSeconds": round(wall, 4),
        "podsPerSecond": round(decisions / wall, 1) if wall > 0 else None,
    }


def _print_report(rep):
    from rich.console import Console
    from rich.table import Table

    console = Console()
    t = Table(box=None, show_header=False)
    for key in ("nodes", "pods", "scheduled", "unschedulable", "wallSeconds", "podsPerSecond", "loadSeconds"):
        t.add_row(key, str(rep[key]))
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


COMMANDS = {"explain": cmd_explain, "simulate": cmd_simulate}

if __name__ == "__main__":
    sys.exit(main())
