"""The `kschedcore` command: explain, simulate, replay, report, capacity, whatif, perf and sweep.

Bad input prints one line naming the object and field, and exits 2 -- never a traceback.
"""
import argparse
import contextlib
import json
import os
import sys
import time
from typing import Any

from . import __version__
from .errors import KSchedCoreError, ValidationError
from .framework.config import load_config
from .objects.selector_syntax import parse_selector
from .output import report
from .scheduler import TIE_BREAKS, Scheduler
from .scheduler.loop import Outcome, Simulation
from .scheduler.scheduler import MAX_THREADS
from .sources.files import load_workload
from .sources.generator import generate
from .live.commands import COMMANDS as LIVE_COMMANDS
from .live.commands import add_input_options, add_parsers, cmd_extender, cmd_run, custom_plugins, inputs
from .util import collector

EXIT_INPUT = 2


def _int_in(lo: int, hi: int):
    """An argparse type: an integer in [lo, hi]."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be {lo}-{hi}, got {value}")
        return value
    return parse


def _parser():
    p = argparse.ArgumentParser(prog="kschedcore", description="kube-scheduler v1.34 decisions, fast, in process.")
    p.add_argument("--version", action="version", version=f"kschedcore {__version__} (kube-scheduler v1.34.1 semantics)")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp):
        sp.add_argument("--percentage-of-nodes-to-score", type=_int_in(0, 100), default=None, metavar="N",
                        help="0 or unset: adaptive, as kube-scheduler (default)")
        sp.add_argument("--seed", type=int, default=0, help="seed of the random tie-break (and generator)")
        sp.add_argument("--config", metavar="FILE",
                        help="a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) file")
        sp.add_argument("--threads", type=_int_in(1, MAX_THREADS), default=1, metavar="N",
                        help="split large scans between N threads, 1-64 (for an idle multi-core machine)")

    def extenders(sp):
        sp.add_argument("--record-extenders", metavar="FILE",
                        help="write every call to the configured extenders (request, answer or error, "
                             "latency) to FILE, one JSON line each")
        sp.add_argument("--replay-extenders", metavar="FILE",
                        help="answer the configured extenders' calls from a --record-extenders FILE "
                             "(nothing is sent)")

    ex = sub.add_parser("explain", help="per-node filter results and per-plugin scores of each pending pod")
    ex.add_argument("workload", nargs="*", help="YAML/JSON files: Nodes, Pods, Lists or workload documents")
    add_input_options(ex)
    common(ex)
    extenders(ex)
    ex.add_argument("--tie-break", choices=TIE_BREAKS, default="random")
    ex.add_argument("-o", "--output", choices=("table", "wide", "jsonl", "json"), default="table",
                    help="table: a line per pod, the message under it; wide: the message as the last "
                         "column, one line per pod; jsonl / json: the explain records")
    ex.add_argument("--pod", action="append", default=None, metavar="NS/NAME",
                    help="explain only this pending pod (repeatable); the others are scheduled in order, "
                         "without a record")
    ex.add_argument("--pods", default=None, metavar="SELECTOR",
                    help="explain only the pending pods whose labels match this selector (kubectl's -l "
                         "syntax: app=web,tier!=db,env in (a,b),!canary); with --pod, either selects")

    sim = sub.add_parser("simulate", help="schedule every pending pod and report the outcome")
    sim.add_argument("workload", nargs="*", help="files as for explain; none: a generated cluster")
    add_input_options(sim)
    common(sim)
    extenders(sim)
    sim.add_argument("--tie-break", choices=TIE_BREAKS, default="random")
    sim.add_argument("--nodes", type=int, default=None, help="generated cluster: nodes (default 5000)")
    sim.add_argument("--pods", type=int, default=None, help="generated cluster: pods (default 30000)")
    sim.add_argument("--queue", action="store_true",
                     help="run kube-scheduler's loop: scheduling queue (backoff, gates, requeue on "
                          "cluster events), binding cycle, on a virtual clock")
    sim.add_argument("--until", type=float, default=3600.0, metavar="SECONDS",
                     help="with --queue: virtual seconds the loop runs at most (default 3600); the report "
                          "says when it was reached")
    sim.add_argument("-o", "--output", choices=("table", "json", "jsonl"), default="table",
                     help="jsonl: one line per pod (node, attempts, full unschedulable message)")

    rp = sub.add_parser("replay", help="replay pods and nodes over time through kube-scheduler's loop")
    rp.add_argument("workload", nargs="*", help="workload files, watch-event streams (.jsonl), Alibaba "
                                                "trace CSVs; the clusters' objects first, then the events")
    common(rp)
    add_input_options(rp)
    extenders(rp)
    rp.add_argument("--tie-break", choices=TIE_BREAKS, default="random")
    rp.add_argument("--arrival", choices=("settle", "all", "timestamps"), default=None,
                    help="settle: one event at a time, each once the loop has settled; all: every event "
                         "at time 0; timestamps: at their times (default: timestamps when every event "
                         "has one, else settle)")
    rp.add_argument("--until", type=float, default=None, metavar="SECONDS",
                    help="stop at this many seconds of replay time")
    rp.add_argument("--bind-latency", type=float, default=0.0, metavar="SECONDS",
                    help="virtual seconds a binding takes (default 0)")
    rp.add_argument("--api-server", choices=("fake", "real"), default="fake",
                    help="which messages reach the pods' PodScheduled condition: fake (client-go's fake "
                         "clientset, as the parity data: the scheduler's copy of a pod lags one attempt "
                         "behind) or real (every change); default fake")
    rp.add_argument("-o", "--output", choices=("table", "json", "jsonl"), default="table",
                    help="jsonl: one record per pod; json: summary, time series, allocation, pods")
    rp.add_argument("--report", metavar="HTML", help="also write the HTML report (needs kschedcore[report])")
    rp.add_argument("--png", metavar="DIR", help="with --report: also write the figures as PNG files")

    cap = sub.add_parser("capacity", help="how many copies of a pod fit (cluster-capacity's question and report); "
                                          "the cluster's pending pods are scheduled first and reported apart")
    cap.add_argument("cluster", nargs="*", help="the cluster: YAML/JSON files (kubectl get -o yaml dumps, "
                                                "Lists, workload documents)")
    add_input_options(cap)
    cap.add_argument("--podspec", action="append", required=True, metavar="POD.yaml[=N]",
                     help="the pod template (first document of the file); repeat for several, taken in turn; "
                          "=N: a target count (do N copies fit?)")
    cap.add_argument("--max-limit", type=int, default=0, metavar="N",
                     help="stop after N copies (default 0: until one does not fit)")
    cap.add_argument("--exclude-nodes", default="", metavar="a,b",
                     help="nodes left out of the cluster (comma-separated)")
    cap.add_argument("--default-config", metavar="FILE",
                     help="a KubeSchedulerConfiguration; its first profile serves the copies")
    cap.add_argument("--verbose", action="store_true", help="pod requirements, termination reason, "
                                                             "distribution among nodes")
    cap.add_argument("-o", "--output", choices=("json", "yaml"), default="",
                     help="the ClusterCapacityReview as JSON or YAML (cluster-capacity's fields, and "
                          "status.clusterPendingPods where the cluster had pending pods)")
    cap.add_argument("--seed", type=int, default=0, help="seed of the random tie-break")
    extenders(cap)
    cap.add_argument("--gang", type=int, default=None, metavar="MIN",
                     help="copies form PodGroups of MIN members, all placed or none (Coscheduling)")
    cap.add_argument("--add-nodes", metavar="NODE.yaml",
                     help="with target counts: how many nodes of this shape must be added for them to fit")
    cap.add_argument("--max-nodes", type=int, default=1000, metavar="N",
                     help="with --add-nodes: the most nodes the search adds (default 1000)")

    wi = sub.add_parser("whatif", help="drain, remove or add nodes, scale workloads: what moves, what stays pending")
    wi.add_argument("cluster", nargs="*", help="the cluster: YAML/JSON files (dumps, Lists, workload documents)")
    add_input_options(wi)
    wi.add_argument("--drain", default="", metavar="NODE[,NODE]", help="cordon and evict; per node: can it be removed?")
    wi.add_argument("--remove-nodes", default="", metavar="NODE[,NODE]", help="nodes deleted, their pods rescheduled")
    wi.add_argument("--add-nodes", action="append", default=[], metavar="N:NODE.yaml", help="N copies of a node")
    wi.add_argument("--scale", action="append", default=[], metavar="NS/NAME=R",
                    help="a ReplicaSet, StatefulSet or Deployment (by its pods' owners) to R replicas")
    common(wi)
    wi.add_argument("--tie-break", choices=TIE_BREAKS, default="random")
    wi.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table")

    rep = sub.add_parser("report", help="an HTML report (figures embedded) of a replay's -o json / jsonl output")
    rep.add_argument("run", help="a file written by `kschedcore replay -o json` (or -o jsonl)")
    rep.add_argument("-o", "--output", required=True, metavar="HTML")
    rep.add_argument("--png", metavar="DIR", help="also write the figures as PNG files")

    perf = sub.add_parser("perf", help="upstream scheduler_perf workloads (performance-config.yaml): "
                                       "SchedulingThroughput as scheduler_perf reports it")
    perf.add_argument("config", help="a scheduler_perf performance-config.yaml (template paths relative to it)")
    perf.add_argument("--test-case", metavar="NAME", help="only this test case")
    perf.add_argument("--workload", metavar="NAME", help="only this workload (any labels)")
    perf.add_argument("--label-filter", default="performance", metavar="LABELS",
                      help='workloads whose labels match, as -perf-scheduling-label-filter: "performance" '
                           '(default), "integration-test,-performance", "+short"')
    perf.add_argument("--sample-interval", type=float, default=0.01, metavar="SECONDS",
                      help="the throughput collector's tick (upstream: 1 s; default 0.01)")
    perf.add_argument("--repeat", type=int, default=1, metavar="N",
                      help="run each workload N times in this process; report each measurement's median run "
                           "(every run's Average in the JSON's runs)")
    perf.add_argument("-o", "--output", choices=("table", "json"), default="table")
    extenders(perf)

    sw = sub.add_parser("sweep", help="a grid of workloads x configurations x seeds x modes: one results table "
                                      "and a summary plot, on a local process pool or a Ray cluster")
    sw.add_argument("sweep", metavar="SWEEP.yaml", help="the grid (docs/formats.md, Sweep input and output)")
    sw.add_argument("-o", "--output", metavar="RESULTS.csv|RESULTS.parquet",
                    help="the results table (Parquet needs kschedcore[sweep]); default: a table on stdout")
    sw.add_argument("--json", metavar="RESULTS.json", help="also the results (and the run's throughput) as JSON")
    sw.add_argument("--plot", metavar="SUMMARY.png", help="the summary plot (needs kschedcore[sweep])")
    sw.add_argument("--jobs", type=int, default=None, metavar="N",
                    help="local worker processes (default: the CPU count; 1: in this process)")
    sw.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                    help="run on Ray (needs kschedcore[ray]): without ADDRESS ray.init()'s local instance, "
                         "else the cluster at ADDRESS (put --ray after SWEEP.yaml)")
    add_parsers(sub, common)
    return p


#: set by a command whose process may end without freeing its objects one by one (run())
_QUICK_EXIT = False
#: main() runs as the console script (run()): the process is the command's alone
_CONSOLE = False


def run() -> None:
    """The console script: main(), then the process ends. After a simulation of a million pods
    its teardown -- freeing tens of millions of objects one at a time -- took seconds; a command
    that set _QUICK_EXIT has written its output, and the process leaves without it."""
    global _CONSOLE
    _CONSOLE = True
    code = main()
    if _QUICK_EXIT:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            pass
        os._exit(code)
    sys.exit(code)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except KSchedCoreError as e:
        print(f"kschedcore: error: {one_line(str(e))}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return 0


def one_line(text: str) -> str:
    """The message on one line: a key or value from the input may hold line breaks."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _loaded() -> None:
    """The console command's cluster is loaded and lives to the end of the process: the
    collector's later passes leave it alone (a dump's millions of objects, walked again by every
    full collection, cost a capacity run on 100,000 bound pods ~5 s)."""
    if _CONSOLE:
        collector.keep_for_good()


def _scheduler(args, workload):
    config = load_config(args.config) if args.config else None
    return Scheduler.from_workload(workload, percentage_of_nodes_to_score=args.percentage_of_nodes_to_score,
                                   tie_break=args.tie_break, seed=args.seed, threads=args.threads,
                                   config=config, **_extender_options(args))


def _run_scheduler(args):
    """`run`'s Scheduler: empty, the configuration's profiles; the cluster comes from its informers."""
    config = load_config(args.config) if args.config else None
    return Scheduler(percentage_of_nodes_to_score=args.percentage_of_nodes_to_score, seed=args.seed,
                     threads=args.threads, config=config)


def _extender_scheduler(args):
    """`extender serve`'s Scheduler: every node examined (kube-scheduler samples before it calls)."""
    config = load_config(args.config) if args.config else None
    return Scheduler(percentage_of_nodes_to_score=100, config=config, plugins=custom_plugins(args.plugins))


def _extender_options(args) -> dict:
    """The Scheduler's extender_factory where --record-extenders or --replay-extenders asks
    for one (the configured extenders' calls written to a file, or answered from one)."""
    from .extender.recording import extender_factory
    factory = extender_factory(args.record_extenders, args.replay_extenders)
    return {} if factory is None else {"extender_factory": factory}


# ---- capacity ---------------------------------------------------------------------------------
def cmd_capacity(args) -> int:
    from . import capacity
    if args.max_limit < 0:
        raise ValidationError("--max-limit", "", f"must be 0 (no limit) or positive, got {args.max_limit}")
    if args.gang is not None and args.gang < 1:
        raise ValidationError("--gang", "", f"must be at least 1, got {args.gang}")
    excluded = [n.strip() for n in args.exclude_nodes.split(",") if n.strip()]
    templates = [capacity.read_template(p) for p in args.podspec]
    targets = [t.target is not None for t in templates]
    if any(targets) and not all(targets):
        raise ValidationError("--podspec", "", "give every template a target count (FILE=N) or none")
    if args.add_nodes and not all(targets):
        raise ValidationError("--add-nodes", "", "needs target counts (--podspec FILE=N)")
    for t in templates:
        t.min_member = args.gang
    cluster = inputs(args, args.cluster)
    if not all(targets) and args.gang is None:      # cluster-capacity's question, its report
        sched = capacity.load_cluster(cluster, excluded, args.default_config, seed=args.seed,
                                      **_extender_options(args))
        _loaded()
        doc = capacity.review(capacity.run(sched, templates, args.max_limit), args.max_limit)
        sys.stdout.write(capacity.render(doc, args.verbose, args.output))
        sys.stderr.write(capacity.pending_note(doc, args.verbose, args.output))
        return 0
    doc = _capacity_answer(capacity, args, cluster, templates, excluded)
    if args.output == "json":
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    elif args.output == "yaml":
        import yaml
        sys.stdout.write(yaml.safe_dump(doc, sort_keys=False))
    else:
        sys.stdout.write(capacity.answers.fit_text(doc))
    return 0


def _capacity_answer(capacity, args, cluster, templates, excluded) -> dict:
    from .capacity import answers
    workload = capacity.cluster_workload(cluster, excluded)
    config = capacity.capacity_config(args.default_config)
    options = _extender_options(args)
    _loaded()

    def build():
        return capacity.build_cluster(workload, config, args.seed, **options)

    sched = build()
    before = sched.utilization()
    if templates[0].target is None:          # --gang alone: how many whole gangs fit
        if len(templates) != 1:
            raise ValidationError("--gang", "", "without target counts, give one template")
        pending = capacity.schedule_cluster_pending(sched)
        fits = [capacity.gangs_that_fit(sched, templates[0], args.max_limit)]
        return answers.fit_document(fits, before, sched, cluster_pending=pending)
    if not args.add_nodes:
        pending = capacity.schedule_cluster_pending(sched)
        return answers.fit_document(capacity.fit_templates(sched, templates), before, sched, cluster_pending=pending)
    node = capacity.read_node_template(args.add_nodes)
    need = capacity.nodes_needed(build, templates, node, args.max_nodes)
    if need.scheduler is not None:
        return answers.fit_document(need.fits, before, need.scheduler, need, node, need.cluster_pending)
    after = build()                 # no answer within --max-nodes: the cluster as it is
    pending = capacity.schedule_cluster_pending(after)
    return answers.fit_document(capacity.fit_templates(after, templates), before, after, need, node, pending)


# ---- whatif -----------------------------------------------------------------------------------
def cmd_whatif(args) -> int:
    from .capacity.nodes import read_node_template
    from .capacity.whatif import Change, whatif, whatif_text
    change = Change(drain=_names(args.drain), remove_nodes=_names(args.remove_nodes))
    for spec in args.add_nodes:
        count, sep, path = spec.partition(":")
        if not sep or not count.isdigit():
            raise ValidationError("--add-nodes", "", f'expected N:NODE.yaml, got "{spec}"')
        change.add_nodes.append((int(count), read_node_template(path)))
    for spec in args.scale:
        workload, sep, replicas = spec.rpartition("=")
        if not sep or not replicas.isdigit() or not workload:
            raise ValidationError("--scale", "", f'expected NAMESPACE/NAME=REPLICAS, got "{spec}"')
        change.scale.append((workload, int(replicas)))
    if args.config:
        change.config = load_config(args.config)
    if not change.describe():
        raise ValidationError("whatif", "", "no change given (--drain, --remove-nodes, --add-nodes, --scale, --config)")
    sched = Scheduler.from_workload(load_workload(*inputs(args, args.cluster)), seed=args.seed, threads=args.threads,
                                    percentage_of_nodes_to_score=args.percentage_of_nodes_to_score,
                                    tie_break=args.tie_break)
    _loaded()
    doc = whatif(sched, change)
    if args.output == "json":
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    elif args.output == "yaml":
        import yaml
        sys.stdout.write(yaml.safe_dump(doc, sort_keys=False))
    else:
        sys.stdout.write(whatif_text(doc))
    return 0


def _names(text: str) -> list:
    return [n.strip() for n in text.split(",") if n.strip()]


# ---- explain ---------------------------------------------------------------------------------
def cmd_explain(args) -> int:
    selector = parse_selector(args.pods) if args.pods is not None else None
    sched = _scheduler(args, load_workload(*inputs(args, args.workload)))
    _loaded()
    only = None
    if args.pod or selector is not None:
        keys = {k if "/" in k else f"default/{k}" for k in args.pod or ()}
        missing = sorted(keys - {p.key for p in sched.pending})
        if missing:
            raise ValidationError("--pod", "", f'no pending pod "{missing[0]}" in the input')
        only = keys | {p.key for p in sched.pending if selector is not None and selector.matches(p.labels)}
        if not only:
            raise ValidationError("--pods", "", f'no pending pod matches "{args.pods}"')
    out = sys.stdout
    if args.output == "jsonl":     # streamed: one record at a time, none kept
        sched.explain_pending(lambda rec: out.write(json.dumps(rec, separators=(",", ":")) + "\n"), only)
    elif args.output == "json":
        json.dump(sched.explain_pending(only=only), out, indent=1)
        out.write("\n")
    else:
        report.print_explain_table(sched.explain_pending(only=only), wide=args.output == "wide")
    return 0


# ---- simulate --------------------------------------------------------------------------------
def cmd_simulate(args) -> int:
    global _QUICK_EXIT
    _QUICK_EXIT = True
    # a batch with the collector paused to the end: schedule_pending collects its own cyclic
    # garbage, and collections over the million results made after it would walk the heap
    # again and again (~10 s at 10^6 pods, measured). The loop (--queue) keeps its own policy.
    with collector.paused() if not args.queue else contextlib.nullcontext():
        return _simulate(args)


def _simulate(args) -> int:
    t0 = time.perf_counter()
    files = inputs(args, args.workload) if args.workload or args.kubeconfig else []
    if files and (args.nodes is not None or args.pods is not None):
        raise ValidationError("--nodes/--pods", "", "size a generated cluster: not with workload files")
    for flag, value in (("--nodes", args.nodes), ("--pods", args.pods)):
        if value is not None and value < (1 if flag == "--nodes" else 0):
            raise ValidationError(flag, "", f"must be {'positive' if flag == '--nodes' else 'non-negative'}, got {value}")
    workload = load_workload(*files) if files else \
        generate(nodes=5000 if args.nodes is None else args.nodes, pods=30000 if args.pods is None else args.pods,
                 seed=args.seed or 1)
    sched = _scheduler(args, workload)
    with collector.paused():
        for pod in sched.pending:        # compile ahead: the timed phase is scheduling alone
            sched.prepare(pod)
    _loaded()
    load_seconds = time.perf_counter() - t0
    n_pods = len(sched.pending)
    if args.queue:
        if args.until <= 0:
            raise ValidationError("--until", "", f"must be positive, got {args.until}")
        loop = Simulation(sched)
        t1 = time.perf_counter()
        outcomes = loop.run_until_idle(args.until)
        wall = time.perf_counter() - t1
        results = [report.as_result(o) for o in outcomes]
    else:
        with _progress(n_pods, args.output) as tick:
            t1 = time.perf_counter()
            results = sched.schedule_pending(callback=tick, records=False)
            wall = time.perf_counter() - t1
        if args.output == "jsonl":       # (10^6 of them cost ~3.5 s: only where they are printed)
            outcomes = [Outcome(r.pod, r.node, 0 if r.gated else 1, None if r.node else r.message) for r in results]
    if args.output == "jsonl":
        for o in outcomes:
            claims = sched.claim_allocations(o.pod) if o.node else None
            print(json.dumps({"pod": o.pod, "node": o.node, "attempts": o.attempts, "message": o.message,
                              **({"claims": claims} if claims is not None else {})}))
        return 0
    rep = report.simulate_report(sched, results, wall, load_seconds, args)
    if args.queue:
        rep["virtualSeconds"] = loop.clock.now()
        rep["cycles"] = loop.cycles
        # pods were still backing off or waiting for the unschedulable pods' flush at --until
        rep["horizonReached"] = loop.horizon_reached
    if args.output == "json":
        print(json.dumps(rep, indent=1))
    else:
        report.print_report(rep)
    return 0


class _progress:
    """A rich progress bar on a terminal; nothing otherwise (and for -o json)."""

    def __init__(self, total, output, what="scheduling", every=1000):
        self.total, self.what, self.every = total, what, every
        self.bar: Any = None
        if sys.stderr.isatty() and output != "json":
            from rich.progress import Progress
            self.bar = Progress(transient=True)

    def __enter__(self):
        if self.bar is None:
            return None
        self.bar.start()
        task = self.bar.add_task(self.what, total=self.total)
        count = [0]

        def tick(_result):
            count[0] += 1
            if count[0] % self.every == 0:
                self.bar.update(task, completed=count[0])
        tick.done = lambda n: self.bar.update(task, completed=n)     # type: ignore[attr-defined]  # a count told
        return tick

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()


# ---- replay and report ----------------------------------------------------------------------
def cmd_replay(args) -> int:
    from .replay import load_replay, run_document
    sched = Scheduler(percentage_of_nodes_to_score=args.percentage_of_nodes_to_score, tie_break=args.tie_break,
                      seed=args.seed, threads=args.threads, config=load_config(args.config) if args.config else None,
                      **_extender_options(args))
    replay = load_replay(inputs(args, args.workload), sched, arrival=args.arrival, until=args.until, bind_latency=args.bind_latency,
                         api_server=args.api_server)
    _loaded()
    with _progress(replay.expected_steps, args.output, "replaying") as bar:
        t0 = time.perf_counter()
        replay.run(progress=bar.done if bar is not None else None)
        wall = time.perf_counter() - t0
    doc = run_document(replay, wall)
    if args.report:
        _write_report(doc, args.report, args.png)
    if args.output == "jsonl":
        for rec in doc["pods"]:
            print(json.dumps(rec, separators=(",", ":")))
    elif args.output == "json":
        print(json.dumps(doc, separators=(",", ":")))
    else:
        report.print_replay_summary(doc["summary"])
    return 0


def cmd_report(args) -> int:
    from .replay.report import read_run
    _write_report(read_run(args.run), args.output, args.png)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _write_report(doc, path, png_dir):
    try:
        from .replay.report import write_report
    except ImportError as e:
        print(f"kschedcore: error: the report needs matplotlib ({e.name} is missing): "
              "pip install 'kschedcore[report]'", file=sys.stderr)
        raise SystemExit(EXIT_INPUT) from None
    write_report(doc, path, png_dir)


def cmd_perf(args) -> int:
    from . import perf
    if not args.sample_interval > 0:
        raise ValidationError("--sample-interval", "", f"must be positive, got {args.sample_interval}")
    if args.repeat < 1:
        raise ValidationError("--repeat", "", f"must be at least 1, got {args.repeat}")
    def skip(name, error):
        what = "workload" if "/" in name else "test case"
        print(f"kschedcore: skipped {what} {name}: {one_line(str(error))}", file=sys.stderr)
    results = perf.run_perf(args.config, args.test_case, args.workload, args.label_filter, args.sample_interval,
                            on_skip=skip, scheduler_options=_extender_options(args), repeat=args.repeat)
    if args.output == "json":
        json.dump(perf.data_items(results), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        perf.print_table(results)
    return 0


# ---- sweep ----------------------------------------------------------------------------------
def cmd_sweep(args) -> int:
    from . import sweep
    if args.jobs is not None and args.jobs < 1:
        raise ValidationError("--jobs", "", f"must be at least 1, got {args.jobs}")
    if args.jobs is not None and args.ray is not None:
        raise ValidationError("--jobs", "", "the local pool's size: not with --ray (Ray's CPUs run the tasks)")
    if args.output and sweep.table_format(args.output) == "parquet":     # missing extras: before any work
        sweep.require("pyarrow", "Parquet output", "sweep")
    if args.plot:
        sweep.require("matplotlib", "the summary plot", "sweep")
    if args.ray is not None:
        sweep.require("ray", "--ray", "ray")
    plan = sweep.plan(sweep.load_sweep(args.sweep))
    with _progress(len(plan.tasks), "table", "sweeping", every=1) as tick:
        result = sweep.run(plan, jobs=args.jobs, ray=args.ray is not None, ray_address=args.ray or None, on_row=tick)
    if args.output:
        sweep.write_table(result.rows, args.output)
    if args.json:
        sweep.write_json(result.rows, result.summary, args.json)
    if args.plot:
        sweep.write_plot(result.rows, result.summary, args.plot)
    if args.output:
        print(sweep.summary_line(result.summary), file=sys.stderr)
    else:
        sweep.print_table(result.rows, result.summary)
    return 0


COMMANDS = {"explain": cmd_explain, "simulate": cmd_simulate, "replay": cmd_replay, "report": cmd_report,
            "capacity": cmd_capacity, "whatif": cmd_whatif, "perf": cmd_perf, "sweep": cmd_sweep,
            "run": lambda args: cmd_run(args, _run_scheduler(args)),
            "extender": lambda args: cmd_extender(args, _extender_scheduler(args)), **LIVE_COMMANDS}

if __name__ == "__main__":
    sys.exit(main())
