"""The command line's live-cluster commands (`run`, `snapshot`, `record`) and the
`--kubeconfig` input of the offline ones."""
from __future__ import annotations

import json
import signal
import socket
import sys
import threading
import time
import uuid

from ..errors import ValidationError
from .client import DEFAULT_BURST, DEFAULT_QPS, connect

__all__ = ["add_input_options", "add_parsers", "inputs", "COMMANDS"]


def add_input_options(sp) -> None:
    """--kubeconfig / --context: a live cluster as the input (read as its dump would be)."""
    sp.add_argument("--kubeconfig", metavar="FILE",
                    help="read the cluster from the API server of this kubeconfig (every kind kschedcore "
                         "reads, listed at one resourceVersion), before any files; needs kschedcore[live]")
    sp.add_argument("--context", metavar="NAME", help="with --kubeconfig: this context instead of the current one")


def _client_options(sp, qps: float = DEFAULT_QPS, burst: int = DEFAULT_BURST, config: bool = False) -> None:
    def default(field: str, value) -> str:
        return f"default: the configuration's clientConnection.{field}, else {value}" if config else f"default {value}"
    sp.add_argument("--kubeconfig", metavar="FILE", default=None,
                    help=f"the cluster's kubeconfig ({default('kubeconfig', 'in-cluster, else ~/.kube/config')}); "
                         "needs kschedcore[live]")
    sp.add_argument("--context", metavar="NAME", help="this context instead of the current one")
    sp.add_argument("--kube-api-qps", type=float, default=None, metavar="QPS",
                    help=f"requests per second to the API server ({default('qps', format(qps, 'g'))}"
                         f"{', kube-scheduler' + chr(39) + 's' if qps == DEFAULT_QPS else ''}; 0: no limit)")
    sp.add_argument("--kube-api-burst", type=int, default=None, metavar="N",
                    help=f"requests allowed in a burst ({default('burst', burst)})")
    sp.set_defaults(default_qps=qps, default_burst=burst)


def add_parsers(sub, common) -> None:
    run = sub.add_parser("run", help="schedule a live cluster's pending pods of the configuration's profiles, "
                                     "as kube-scheduler does (informers, binding, status, events)")
    _client_options(run, config=True)
    common(run)
    run.add_argument("--binders", type=int, default=16, metavar="N", help="binding threads (default 16)")
    run.add_argument("--no-events", action="store_true", help="write no events (events.k8s.io/v1)")
    run.add_argument("--leader-elect", action="store_true",
                     help="schedule only while holding the leader lease (coordination.k8s.io/v1), as kube-scheduler "
                          "(also where the configuration's leaderElection.leaderElect is true)")
    run.add_argument("--leader-elect-resource-name", default=None, metavar="NAME",
                     help="the Lease's name (default: the configuration's, else kschedcore)")
    run.add_argument("--leader-elect-resource-namespace", default=None, metavar="NS",
                     help="the Lease's namespace (default: the configuration's, else kube-system)")
    run.add_argument("--serve", default="127.0.0.1:10251", metavar="HOST:PORT",
                     help="serve /healthz, /readyz and /metrics here (default 127.0.0.1:10251; off: not at all)")
    run.add_argument("--exit-when-idle", type=float, default=None, metavar="SECONDS",
                     help="stop once no pod was pending or binding for this long (default: run until SIGTERM)")

    _add_extender_parser(sub, common)

    snap = sub.add_parser("snapshot", help="a live cluster's objects (every kind kschedcore reads, at one "
                                           "resourceVersion) as a dump the other commands read")
    _client_options(snap, qps=0.0)
    snap.add_argument("-o", "--output", required=True, metavar="DUMP.yaml|DUMP.json",
                      help="the dump: a kind: List, as YAML or (.json) JSON")

    rec = sub.add_parser("record", help="a live cluster's watch stream as JSON lines that `kschedcore replay` reads")
    _client_options(rec, qps=0.0)
    rec.add_argument("-o", "--output", required=True, metavar="EVENTS.jsonl")
    rec.add_argument("--duration", type=float, default=None, metavar="SECONDS",
                     help="stop after this long (default: until SIGINT or SIGTERM)")


def _add_extender_parser(sub, common) -> None:
    ext = sub.add_parser("extender", help="kschedcore's profiles as a scheduler extender of a real kube-scheduler")
    verbs = ext.add_subparsers(dest="extender_command", required=True, metavar="COMMAND")
    serve = verbs.add_parser("serve", help="answer kube-scheduler's extender calls (filter, prioritize; "
                                           "nodeCacheCapable) from the configuration's profile")
    _client_options(serve, qps=0.0)
    serve.add_argument("--config", metavar="FILE", help="a KubeSchedulerConfiguration: its first profile answers")
    serve.add_argument("--plugins", action="append", default=[], metavar="MODULE",
                       help="a Python module whose PLUGINS lists custom plugins (kschedcore.custom), Numba ones "
                            "included (repeatable)")
    serve.add_argument("--address", default="127.0.0.1:8888", metavar="HOST:PORT",
                       help="where to serve the verbs (default 127.0.0.1:8888): POST /filter, /prioritize")
    serve.add_argument("--priorities", choices=("choice", "scaled"), default="choice",
                       help="choice: 10 for the node the profile would choose, 0 for the others (default); "
                            "scaled: each node's total score scaled to 0-10")


def _connect(args, connection: dict | None = None):
    """The client of the flags, else of the configuration's clientConnection, else the defaults."""
    connection = connection or {}
    qps = _first(args.kube_api_qps, connection.get("qps"), args.default_qps)
    burst = _first(args.kube_api_burst, connection.get("burst"), args.default_burst)
    return connect(_first(args.kubeconfig, connection.get("kubeconfig") or None), args.context, qps=float(qps),
                   burst=int(burst))


def _first(*values):
    return next((v for v in values if v is not None), None)


def _config_sections(path) -> tuple[dict, dict]:
    """The configuration file's clientConnection and leaderElection (kube-scheduler reads them;
    the profiles are read apart)."""
    if not path:
        return {}, {}
    import yaml
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f) or {}
    return dict(doc.get("clientConnection") or {}), dict(doc.get("leaderElection") or {})


def _leader(args, client, election: dict):
    """The LeaderElector `--leader-elect` or leaderElection.leaderElect asks for, with the
    configuration's lease name, namespace and times (kube-scheduler's defaults otherwise)."""
    if not (args.leader_elect or election.get("leaderElect") is True):
        return None
    from ..util.gomath import parse_go_duration
    from .leader import LeaderElector
    times = {}
    for key, name in (("leaseDuration", "lease_duration"), ("renewDeadline", "renew_deadline"),
                      ("retryPeriod", "retry_period")):
        if key in election:
            seconds = parse_go_duration(str(election[key]))
            if seconds is None or seconds <= 0:
                raise ValidationError(args.config, f"leaderElection.{key}", f'invalid duration "{election[key]}"')
            times[name] = seconds
    try:
        return LeaderElector(client.with_own_limiter(),
                             _first(args.leader_elect_resource_namespace, election.get("resourceNamespace"), "kube-system"),
                             _first(args.leader_elect_resource_name, election.get("resourceName"), "kschedcore"),
                             f"{socket.gethostname()}_{uuid.uuid4()}", **times)
    except ValueError as e:
        raise ValidationError(args.config or "--leader-elect", "leaderElection", str(e)) from None


def inputs(args, files) -> list:
    """The inputs of an offline command: the live cluster's snapshot (--kubeconfig), then files."""
    from .lists import snapshot
    out = list(files or ())
    if getattr(args, "kubeconfig", None):
        out.insert(0, snapshot(connect(args.kubeconfig, args.context, qps=0.0), "cluster"))
    if not out:
        raise ValidationError(args.command, "", "no input: give files, or --kubeconfig for a live cluster")
    return out


def _stop_event() -> threading.Event:
    """Set by SIGTERM or SIGINT."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def cmd_snapshot(args) -> int:
    from .lists import snapshot_document
    doc = snapshot_document(_connect(args))
    with open(args.output, "w", encoding="utf-8") as f:
        if args.output.endswith(".json"):
            json.dump(doc, f, separators=(",", ":"))
        else:
            import yaml
            yaml.dump(doc, f, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)
    print(f"{len(doc['items'])} objects at resourceVersion {doc['metadata']['resourceVersion']} -> {args.output}",
          file=sys.stderr)
    return 0


def cmd_record(args) -> int:
    from .record import Recorder
    stop = _stop_event()
    with open(args.output, "w", encoding="utf-8") as out:
        rec = Recorder(_connect(args), out).start()
        stop.wait(args.duration)
        rec.stop()
    print(f"{rec.events} events -> {args.output}", file=sys.stderr)
    return 0


def cmd_run(args, scheduler) -> int:
    """Schedules until SIGTERM / SIGINT (or --exit-when-idle), then stops cleanly."""
    from .runner import Runner
    if args.binders < 1:
        raise ValidationError("--binders", "", f"must be at least 1, got {args.binders}")
    stop = _stop_event()
    connection, election = _config_sections(args.config)
    client = _connect(args, connection)
    leader = _leader(args, client, election)
    runner = Runner(client, scheduler, binders=args.binders, events=not args.no_events, leader=leader)
    if args.serve != "off":
        from .metrics import serve
        server = serve(args.serve, runner)
        host, port = server.server_address[:2]
        print(f"kschedcore: serving /healthz /readyz /metrics on {host!s}:{port}", file=sys.stderr, flush=True)
    runner.start(stop=stop)
    if stop.is_set():
        runner.stop()
        return 0
    print(f"kschedcore: scheduling for {', '.join(sorted(runner.profiles))} "
          f"({len(runner.reflectors['Node'].store)} nodes)", file=sys.stderr, flush=True)
    idle_since = time.monotonic()
    while not stop.wait(0.2):
        if runner.lost.is_set():
            runner.stop()
            print("kschedcore: error: leader election lost", file=sys.stderr)
            return 1
        if args.exit_when_idle is None:
            continue
        with runner.lock:
            q = runner.live.sim.queue
            busy = bool(q.pods_in_active_q() or q.pods_in_backoff_q() or q.in_flight_pods() or runner.live.sim.binding)
        if busy:
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since >= args.exit_when_idle:
            break
    runner.stop()
    print(f"kschedcore: stopped: {runner.bindings} pods bound, {runner.bind_errors} bindings rejected, "
          f"{runner.status.errors} status writes failed", file=sys.stderr)
    return 0


def custom_plugins(modules) -> list:
    """The custom plugins the modules' PLUGINS list, in order."""
    import importlib
    out: list = []
    for name in modules:
        try:
            mod = importlib.import_module(name)
        except ImportError as e:
            raise ValidationError("--plugins", "", f"cannot import {name}: {e}") from None
        plugins = getattr(mod, "PLUGINS", None)
        if not isinstance(plugins, (list, tuple)):
            raise ValidationError("--plugins", "", f"module {name} has no PLUGINS list")
        out += plugins
    return out


def cmd_extender(args, scheduler) -> int:
    """`extender serve`: until SIGTERM / SIGINT."""
    from .extender_server import ExtenderServer
    stop = _stop_event()
    server = ExtenderServer(_connect(args), scheduler, priorities=args.priorities).start(args.address)
    print(f"kschedcore: extender for {next(iter(scheduler.profiles))} on http://{server.address} "
          f"({len(scheduler.cache.table.row_of)} nodes)", file=sys.stderr, flush=True)
    stop.wait()
    server.stop()
    print(f"kschedcore: stopped: {server.calls['filter']} filter, {server.calls['prioritize']} prioritize calls",
          file=sys.stderr)
    return 0


COMMANDS = {"snapshot": cmd_snapshot, "record": cmd_record}
