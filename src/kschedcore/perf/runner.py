"""Runs one scheduler_perf workload: its test case's ops in order on a Simulation (the queue,
the scheduling and binding cycles; Binds land at once, as on upstream's fake-free API server
they take no scheduler time), with the throughput collectors and churn on the wall clock."""
import copy
import marshal
import time
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

# np.unique imports numpy.ma on its first call (about 10 ms): loaded here, so that no measured
# window pays a start-up cost that a long-running scheduler pays once
import numpy.ma  # noqa: F401


from ..errors import UnsupportedError, WorkloadError
from ..framework.config import load_config
from ..objects.selector_syntax import parse_selector
from ..objects.resource import RESOURCE_KINDS
from ..objects.storage import MIGRATED_PLUGINS_ANNOTATION
from ..scheduler import Scheduler
from ..scheduler import runs
from ..scheduler.loop import Simulation, SimulationListener
from ..util.collector import gc_frozen
from ..sources.files import documents, read_text
from ..util.gomath import parse_go_duration
from ..scheduler.dra_events import resource_object
from .config import V1_34_DEFAULTS, fill
from .dra import DRAOps, check_feature_gates
from .template import render
from .throughput import ThroughputCollector

#: makeBaseNode / makeBasePod of scheduler_perf, for ops without a template
BASE_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"generateName": "scheduler-perf-"},
             "status": {"capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
                        "conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"}}
BASE_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"},
            "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10",
                                     "ports": [{"containerPort": 80}],
                                     "resources": {"requests": {"cpu": "100m", "memory": "500Mi"},
                                                   "limits": {"cpu": "100m", "memory": "500Mi"}}}]}}


WAIT_SECONDS = 600.0


@dataclass
class Measurement:
    name: str                    # <TestCase>/<Workload>/<namespace or collector name>
    data: dict                   # Average, Perc50, ... in pods/s (empty: too short to sample)
    pods: int                    # pods bound in the window
    seconds: float               # the window's wall time
    interval: float = 0.0        # the ticks' length
    resampled: bool = False      # sampled again with finer ticks: the window was too short for two
    runs: list = field(default_factory=list)    # every run's Average, with --repeat (None: no sample)


@dataclass
class WorkloadResult:
    """One workload's run: its SchedulingThroughput measurements, threshold, wall seconds, and the
    feature gates it sets that are not applied."""
    test_case: str
    workload: str
    threshold: float | None
    measurements: list = field(default_factory=list)
    seconds: float = 0.0         # the whole workload, setup included
    ignored_feature_gates: dict = field(default_factory=dict)


class Runner(DRAOps):
    """Runs one workload of a test case: its ops in order (nodes, namespaces, pods, churn,
    barriers, DRA's) through kube-scheduler's loop, with scheduler_perf's throughput collector."""

    def __init__(self, case, workload, sample_interval: float = 0.01, seed: int = 0, options=None):
        self.case, self.workload = case, workload
        self.where = f"{case.name}/{workload.name}"
        check_feature_gates({**case.feature_gates, **workload.feature_gates}, self.where)
        self.seed = seed
        self.interval = sample_interval
        self.used: set = set()
        config = load_config(self._path(case.scheduler_config)) if case.scheduler_config else None
        self.sched = Scheduler(config=config, seed=seed, **(options or {}))
        self.bound_counts: dict = {}
        self.attempted: set[str] = set()
        self.unbound: set[str] = set()  # pods created and not bound yet (what the waits look at)
        listener = SimulationListener()
        listener.bound = self._bound  # type: ignore[method-assign]  # the listener's hooks, set per instance
        listener.attempted = self.attempted.add  # type: ignore[method-assign, assignment]
        self.sim = Simulation(self.sched, listener=listener)
        self.created: dict[str, list] = {}  # namespace -> pod keys created there, in order
        self.names: dict[str, int] = {}  # generateName -> next index
        self.collectors: list = []
        self.churns: list = []
        gates = {**case.feature_gates, **workload.feature_gates}
        self.result = WorkloadResult(case.name, workload.name, workload.threshold, ignored_feature_gates={
            k: v for k, v in gates.items() if V1_34_DEFAULTS.get(k) != v})

    def _bound(self, key, node):
        ns = key.split("/", 1)[0]
        self.bound_counts[ns] = self.bound_counts.get(ns, 0) + 1
        self.unbound.discard(key)

    # ---- helpers ---------------------------------------------------------------------------------
    def _path(self, rel) -> Path:
        return (self.case.base / rel).resolve()

    def _param(self, op, key, default=None):
        return fill(op.get(key, default), self.workload.params, self.used, self.where)

    def _count(self, op) -> int:
        count = self._param(op, "countParam") if "countParam" in op else op.get("count", 0)
        if "countMultiplierParam" in op:
            count *= self._param(op, "countMultiplierParam")
        if not isinstance(count, int) or count < 0:
            raise WorkloadError(self.where, "count", f"must be a non-negative integer, got {count!r}")
        return count

    def _template(self, rel, default):
        """A function index -> raw object: the template file rendered (Go text/template), or a
        copy of `default`."""
        if rel is None:
            return _copier(default)
        path = self._path(rel)
        text = read_text(path)
        if "{{" not in text:
            return _copier(self._yaml(text, path))
        return lambda i, params=None: self._yaml(render(text, {"Index": i, **(params or {})}, str(path)), path)

    @staticmethod
    def _yaml(text, path):
        docs = documents(path, text)
        if len(docs) != 1 or not isinstance(docs[0], dict):
            raise WorkloadError(str(path), "", "expected one Kubernetes object")
        return docs[0]

    def _name(self, obj, fallback) -> str:
        """metadata.name, or generateName + a counter (the API server adds 5 random characters)."""
        meta = obj.setdefault("metadata", {})
        if not meta.get("name"):
            prefix = meta.pop("generateName", None) or fallback
            i = self.names.get(prefix, 0)
            self.names[prefix] = i + 1
            meta["name"] = f"{prefix}{i:05d}"
        meta.pop("generateName", None)
        return meta["name"]

    # ---- the loop --------------------------------------------------------------------------------
    def _run(self, done) -> bool:
        """Schedules until `done()` or nothing can progress within 10 minutes of the virtual
        clock (upstream's wait; pods retry as backoff and flushes come); collectors and churn
        tick between cycles. True if done."""
        sim = self.sim
        deadline = sim.clock.now() + WAIT_SECONDS
        # churn ticks between cycles, a run of copies being one: shorter runs keep its ticks on time
        with gc_frozen(), runs.copies(sim, runs.COPIES_UNDER_CHURN if self.churns else runs.COPIES_AT_ONCE):
            while not done():
                progressed = sim.schedule_one()
                now = time.perf_counter()
                if sim._late_bindings and any(c.due(now) for c in self.collectors):
                    sim.land_late_bindings()    # kube-scheduler's binding goroutines are done by now
                for c in self.collectors:
                    c.tick(now)
                for churn in self.churns:
                    churn.tick(now)
                if progressed:
                    continue
                wake = sim.next_wakeup()
                if wake is None or wake > deadline:
                    if not self.churns or not self.churns[0].pending():
                        return done()
                    continue
                sim.clock.advance_to(max(wake, sim.clock.now()))
        return True

    def _all_bound(self, keys):
        """done() of a wait for `keys` to be bound (or deleted)."""
        unbound = self.unbound
        return self._wait(keys, lambda k: k in unbound)

    def _wait(self, keys, waiting):
        """done() of a wait until no key is `waiting` (or in the cluster): amortised O(1) per
        call, as the loop asks after every cycle (the last created are the last to go)."""
        pods = self.sim.pods
        left = [k for k in keys if waiting(k) and k in pods]

        def done():
            while left and (not waiting(left[-1]) or left[-1] not in pods):
                left.pop()
            return not left
        return done

    # ---- ops ---------------------------------------------------------------------------------------
    def run(self) -> WorkloadResult:
        start = time.perf_counter()
        ops = self._unrolled()
        for index, op in enumerate(ops):
            getattr(self, "op_" + op["opcode"])(op, index)
        unused = set(self.workload.params) - self.used
        if unused:
            raise WorkloadError(self.where, "params", f'unused param "{sorted(unused)[0]}" (upstream refuses it)')
        self.result.seconds = time.perf_counter() - start
        return self.result

    def _unrolled(self) -> list:
        """createPodSets becomes `count` createPods ops, one per namespace <prefix>-<i>."""
        out = []
        for op in self.case.ops:
            if op["opcode"] != "createPodSets":
                out.append(op)
                continue
            for i in range(self._count(op)):
                out.append({"opcode": "createPods", **op.get("createPodsOp", {}),
                            "namespace": f"{op.get('namespacePrefix', 'namespace')}-{i}"})
        return out

    def op_createNodes(self, op, index):
        make = self._template(op.get("nodeTemplatePath"), BASE_NODE)
        label = op.get("labelNodePrepareStrategy") or {}
        unique = op.get("uniqueNodeLabelStrategy") or {}
        strategy = op.get("nodeAllocatableStrategy")
        for i in range(self._count(op)):
            node = make(i)
            name = self._name(node, "scheduler-perf-")
            labels = node["metadata"].setdefault("labels", {})
            labels["kubernetes.io/hostname"] = name       # as IntegrationTestNodePreparer creates them
            if label:         # upstream picks at random; here in turn, so runs repeat
                values = label.get("labelValues") or [""]
                labels[label["labelKey"]] = values[i % len(values)]
            if unique:
                labels[unique["labelKey"]] = f"{name}-{i}"
            if strategy is not None:
                _allocatable_strategy(node, strategy)
            self.sim.add_node(node)
            if strategy is not None:
                self.sched.add_object(_csi_node(name, strategy))

    def op_createNamespaces(self, op, index):
        make = self._template(op.get("namespaceTemplatePath"), {"apiVersion": "v1", "kind": "Namespace"})
        for i in range(self._count(op)):
            ns = make(i)
            ns.setdefault("metadata", {})["name"] = f"{op.get('prefix', 'namespace')}-{i}"
            self.sched.add_namespace(ns)

    def op_createPods(self, op, index):
        ns = op.get("namespace") or f"namespace-{index}"
        default = self.case.default_pod_template
        make = self._template(op.get("podTemplatePath") or default, BASE_POD)
        params = {k: self._param(op["templateParams"], k) for k in op.get("templateParams") or {}}
        count = self._count(op)
        collector = None
        if op.get("collectMetrics"):
            if op.get("skipWaitToCompletion"):
                raise WorkloadError(self.where, "collectMetrics", "cannot be combined with skipWaitToCompletion")
            collector = self._start_collector(f"{self.where}/{ns}", [ns])
        volumes = self._volume_maker(op, ns)

        def create():
            mine = []
            for i in range(count):
                pod = make(i, params)
                pod.setdefault("metadata", {})["namespace"] = ns
                self._name(pod, "pod-")
                if volumes is not None:
                    volumes(i, pod)
                key = f"{ns}/{pod['metadata']['name']}"
                self.unbound.add(key)
                self.sim.add_pod(pod)
                mine.append(key)
            self.created.setdefault(ns, []).extend(mine)
            return mine
        if op.get("steadyState"):
            self._steady_state(op, ns, create)
        else:
            self._wait_created(op, index, ns, count, create())
        if collector is not None:
            self._stop_collector(collector)

    def _wait_created(self, op, index, ns, count, mine):
        if not op.get("skipWaitToCompletion") and not self._run(self._all_bound(mine)):
            left = sum(1 for k in mine if k not in self.sim.bound and k in self.sim.pods)
            raise WorkloadError(self.where, f"workloadTemplate[{index}]",
                                f"{left} of {count} pods in {ns} cannot be scheduled (upstream waits 10 minutes "
                                "and fails)")

    def _steady_state(self, op, ns, create):
        """createPods with steadyState: `count` pods pending at a time; once all are scheduled,
        every pod of the namespace is deleted and `count` new ones are created, until `duration`
        (wall time) ends. When the pods cannot progress, it ends early: upstream waits out the
        duration, binding nothing more."""
        duration = _seconds(self._param(op, "durationParam") if "durationParam" in op else op.get("duration"),
                            self.where)
        end = time.perf_counter() + duration
        while True:
            batch = create()
            bound = self._all_bound(batch)
            if not self._run(lambda: bound() or time.perf_counter() >= end) or not bound():
                return
            for key in self.created.pop(ns, []):
                self.sim.delete_pod(key, missing_ok=True)

    def _volume_maker(self, op, ns):
        """With persistentVolume(Claim)TemplatePath, a function (i, pod) that adds claim pvc-i
        and its PersistentVolume <ns>-vol-i, bound to each other, and gives the pod that one
        volume, as upstream's CreatePodWithPersistentVolume (bindVolume) does."""
        if "persistentVolumeTemplatePath" not in op:
            return None
        make_pv = self._template(op["persistentVolumeTemplatePath"], {})
        make_pvc = self._template(op["persistentVolumeClaimTemplatePath"], {})

        def add(i, pod):
            claim, volume = make_pvc(i), make_pv(i)
            _bind_volume(claim, volume, ns, i)
            self.sched.add_object(claim)
            self.sched.add_object(volume)
            pod.setdefault("spec", {})["volumes"] = [{"name": "vol", "persistentVolumeClaim":
                                                      {"claimName": claim["metadata"]["name"]}}]
        return add

    def op_deletePods(self, op, index):
        ns = op.get("namespace")
        selector = parse_selector(op["labelSelector"], "labelSelector") if op.get("labelSelector") else None
        for key in list(self.created.get(ns, [])):
            pod = self.sim.pods.get(key)
            if pod is not None and (selector is None or selector.matches(pod.labels)):
                self.sim.delete_pod(key)

    def op_barrier(self, op, index):
        namespaces = op.get("namespaces") or list(self.created)
        keys = [k for ns in namespaces for k in self.created.get(ns, [])]
        if op.get("stageRequirement", "Scheduled") == "Attempted":
            # a gated pod counts: kube-scheduler writes its PodScheduled=False (SchedulingGated)
            attempted, pods = self.attempted, self.sim.pods
            done = self._wait(keys, lambda k: k not in attempted and not pods[k].gated)
        else:
            done = self._all_bound(keys)
        if not self._run(done):
            raise WorkloadError(self.where, f"workloadTemplate[{index}]", "barrier: pods left unscheduled")

    def op_sleep(self, op, index):
        duration = _seconds(self._param(op, "durationParam") if "durationParam" in op else op.get("duration"),
                            self.where)
        end = time.perf_counter() + duration
        self._run(lambda: time.perf_counter() >= end)

    def op_createAny(self, op, index):
        make = self._template(op.get("templatePath"), {})
        params = {k: self._param(op["templateParams"], k) for k in op.get("templateParams") or {}}
        for i in range(self._count(op) if ("count" in op or "countParam" in op) else 1):
            self._add_any(make(i, params), op.get("namespace"))

    def _add_any(self, obj, namespace):
        kind = obj.get("kind")
        self._name(obj, (kind or "object").lower() + "-")
        if namespace and kind not in ("Node", "Namespace", "PriorityClass"):
            obj["metadata"]["namespace"] = namespace
        if kind == "Node":
            self.sim.add_node(obj)
        elif kind == "Pod":
            self.sim.add_pod(obj)
        elif kind == "Namespace":
            self.sched.add_namespace(obj)
        elif kind in RESOURCE_KINDS:
            resource_object(self.sim, "ADDED", kind, obj)
        else:
            self.sched.add_object(obj)

    def op_churn(self, op, index):
        self.churns.append(Churn(self, op, index))

    def op_startCollectingMetrics(self, op, index):
        name = op.get("name") or f"collector-{index}"
        self._start_collector(f"{self.where}/{name}", op.get("namespaces"))

    def op_stopCollectingMetrics(self, op, index):
        if not self.collectors:
            raise WorkloadError(self.where, f"workloadTemplate[{index}]", "no collector was started")
        self._run(lambda: not self.sim.queue.pods_in_active_q())
        self._stop_collector(self.collectors[-1])

    def _start_collector(self, name, namespaces):
        c = ThroughputCollector(name, namespaces, self.bound_counts, self.interval)
        self.collectors.append(c)
        return c

    def _stop_collector(self, c):
        c.tick(time.perf_counter())
        self.collectors.remove(c)
        pods, seconds = c.window()
        self.result.measurements.append(Measurement(c.name, c.summary(), pods, seconds, c.interval, c.resampled))


def _copier(obj):
    """A function (i, params=None) -> a fresh deep copy of `obj`: through marshal's bytes (20x
    copy.deepcopy for a JSON-like object: 30,000 pods are made in 0.1 s, not 1.6), or deepcopy
    where marshal cannot write a value (a YAML timestamp)."""
    try:
        blob = marshal.dumps(obj)
    except ValueError:
        return lambda i, params=None: copy.deepcopy(obj)
    return lambda i, params=None: marshal.loads(blob)


def _allocatable_strategy(node, strategy):
    """NodeAllocatableStrategy's patch: these allocatable amounts over the node's (the API
    server has defaulted allocatable to capacity)."""
    status = node.setdefault("status", {})
    status["allocatable"] = {**(status.get("allocatable") or status.get("capacity") or {}),
                             **(strategy.get("nodeAllocatable") or {})}


def _csi_node(name, strategy) -> dict:
    """The CSINode NodeAllocatableStrategy creates beside each node (its migrated-plugins
    annotation is always written, empty when no plugin is listed)."""
    drivers = [{"name": d, "nodeID": name, "allocatable": a} for d, a in (strategy.get("csiNodeAllocatable") or {}).items()]
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": name, "annotations": {MIGRATED_PLUGINS_ANNOTATION: ",".join(
                strategy.get("migratedPlugins") or [])}},
            "spec": {"drivers": drivers}}


def _bind_volume(claim, volume, ns, i):
    """getCustomVolumeFactory and bindVolume: PV vol-i (prefixed by the namespace: PVs are
    cluster-wide) whose CSI handle or EBS volume ID is vol-i, bound to claim pvc-i."""
    claim_name, volume_id = f"pvc-{i}", f"vol-{i}"
    volume_name = f"{ns}-{volume_id}"
    claim.setdefault("metadata", {}).update(name=claim_name, namespace=ns)
    claim.setdefault("spec", {})["volumeName"] = volume_name
    claim["status"] = {**(claim.get("status") or {}), "phase": "Bound"}
    volume.setdefault("metadata", {})["name"] = volume_name
    spec = volume.setdefault("spec", {})
    if isinstance(spec.get("csi"), dict):
        spec["csi"]["volumeHandle"] = volume_id
    elif isinstance(spec.get("awsElasticBlockStore"), dict):
        spec["awsElasticBlockStore"]["volumeID"] = volume_id
    spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns, "name": claim_name, "apiVersion": "v1"}
    volume["status"] = {**(volume.get("status") or {}), "phase": "Bound"}


class Churn:
    """The churn op: every intervalMilliseconds of wall time, for the rest of the workload, one
    object of each template is created (mode create, up to `number` times) or, in mode recreate,
    the current slot's object is deleted if present and created if its slot is empty."""

    def __init__(self, runner, op, index):
        self.runner = runner
        self.mode = op.get("mode")
        if self.mode not in ("create", "recreate"):
            raise UnsupportedError(runner.where, "mode", f'churn mode "{self.mode}" (known: create, recreate)')
        self.makers = [runner._template(p, {}) for p in op.get("templatePaths") or []]
        self.interval = (op.get("intervalMilliseconds") or 500) / 1000
        self.number = op.get("number") or 0
        self.namespace = op.get("namespace") or f"namespace-{index}"
        self.next = time.perf_counter() + self.interval
        self.ticks = 0
        self.slots: list[list[Any]] = [[None] * max(self.number, 1) for _ in self.makers]

    def pending(self) -> bool:
        return self.mode == "recreate" or not self.number or self.ticks < self.number

    def tick(self, now):
        if now < self.next:
            return
        self.next = now + self.interval
        if self.mode == "create" and self.number and self.ticks >= self.number:
            return
        for t, make in enumerate(self.makers):
            slot = self.ticks % len(self.slots[t])
            if self.mode == "recreate" and self.slots[t][slot] is not None:
                self._delete(self.slots[t][slot])
                self.slots[t][slot] = None
                continue
            obj = make(self.ticks)
            if obj.get("kind") not in ("Node", "Namespace", "PriorityClass"):
                obj.setdefault("metadata", {}).setdefault("namespace", self.namespace)
            self.runner._add_any(obj, None)
            self.slots[t][slot] = (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])
        self.ticks += 1

    def _delete(self, ident):
        kind, ns, name = ident
        sim = self.runner.sim
        if kind == "Node":
            sim.remove_node(name, missing_ok=True)
        elif kind == "Pod":
            sim.delete_pod(f"{ns}/{name}", missing_ok=True)
        elif not self.runner.sched.remove_object(kind, ns, name):
            raise UnsupportedError(self.runner.where, "templatePaths", f"churn of {kind} objects in mode recreate")


def _seconds(text, where) -> float:
    seconds = parse_go_duration(text) if isinstance(text, str) else None
    if seconds is None or seconds < 0:
        raise WorkloadError(where, "duration", f'expected a Go duration such as "5s", got {text!r}')
    return seconds
