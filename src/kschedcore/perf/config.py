"""scheduler_perf's configuration (kubernetes/kubernetes test/integration/scheduler_perf): a
`performance-config.yaml` is a list of test cases, each a `workloadTemplate` of ops and the
`workloads` that fill in its `$params`. Decoded strictly, as upstream decodes it."""
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UnsupportedError, WorkloadError
from ..sources.files import documents, read_text

TEST_CASE_KEYS = {"name", "featureGates", "defaultPodTemplatePath", "schedulerConfigPath", "metricsCollectorConfig",
                  "labels", "workloadTemplate", "workloads"}
WORKLOAD_KEYS = {"name", "params", "labels", "featureGates", "threshold"}
#: opcode -> the fields it takes (besides opcode); the ops kschedcore runs
OPS = {
    "createNodes": {"count", "countParam", "nodeTemplatePath", "labelNodePrepareStrategy", "uniqueNodeLabelStrategy",
                    "nodeAllocatableStrategy"},
    "createNamespaces": {"prefix", "count", "countParam", "namespaceTemplatePath"},
    "createPods": {"count", "countParam", "podTemplatePath", "namespace", "collectMetrics", "skipWaitToCompletion",
                   "templateParams", "countMultiplierParam", "persistentVolumeTemplatePath",
                   "persistentVolumeClaimTemplatePath", "steadyState", "duration", "durationParam"},
    "createPodSets": {"count", "countParam", "namespacePrefix", "createPodsOp"},
    "deletePods": {"namespace", "labelSelector", "skipWaitToCompletion", "deletePodsPerSecond"},
    "barrier": {"namespaces", "stageRequirement", "labelSelector"},
    "sleep": {"duration", "durationParam"},
    "churn": {"mode", "serviceTemplatePath", "templatePaths", "intervalMilliseconds", "number", "namespace"},
    "createAny": {"templatePath", "namespace", "count", "countParam", "templateParams"},
    "startCollectingMetrics": {"name", "namespaces", "labelSelector"},
    "stopCollectingMetrics": set(),
    "createResourceDriver": {"driverName", "nodes", "maxClaimsPerNode", "maxClaimsPerNodeParam"},
    "createResourceClaims": {"namespace", "count", "countParam", "templatePath"},
    "allocResourceClaims": {"namespace"},
}
#: feature gates the suites set, at their kube-scheduler v1.34 defaults (pkg/features): a workload
#: setting one to this value changes nothing, so it is not reported as a gate not applied
V1_34_DEFAULTS = {"DynamicResourceAllocation": True, "DRAPrioritizedList": True, "DRAAdminAccess": True,
                  "DRAResourceClaimDeviceStatus": True, "SchedulerQueueingHints": True,
                  "SchedulerAsyncAPICalls": True, "SchedulerAsyncPreemption": True, "SchedulerPopFromBackoffQ": True,
                  "DRADeviceTaints": False, "DRAPartitionableDevices": False, "DRAExtendedResource": False,
                  "DRAConsumableCapacity": False}
#: createNodes' nodeAllocatableStrategy (test/utils NodeAllocatableStrategy)
NODE_ALLOCATABLE_KEYS = {"nodeAllocatable", "csiNodeAllocatable", "migratedPlugins"}
#: upstream ops kschedcore does not run (yet): refused by name
UNSUPPORTED_OPS = {"createPodGroups", "updateAny", "startCollectingProfile", "stopCollectingProfile"}


@dataclass
class Workload:
    name: str
    params: dict
    labels: list
    threshold: float | None
    feature_gates: dict


@dataclass
class TestCase:
    name: str
    ops: list                      # raw op dicts, `$params` not yet filled in
    workloads: list
    labels: list
    default_pod_template: str | None
    scheduler_config: str | None
    feature_gates: dict
    base: Path = field(repr=False)  # template paths are relative to the config file's folder
    unsupported: Exception | None = None   # an op or field kschedcore does not run


def load_perf_config(path) -> list:
    """The test cases of a performance-config.yaml."""
    path = Path(path)
    docs = documents(path, read_text(path))
    doc = docs[0] if len(docs) == 1 else None
    if not isinstance(doc, list):
        raise WorkloadError(str(path), "", "expected a list of test cases (a scheduler_perf performance-config.yaml)")
    return [_test_case(tc, f"{path}: [{i}]", path.parent) for i, tc in enumerate(doc)]


def _test_case(raw, where, base) -> TestCase:
    if not isinstance(raw, dict):
        raise WorkloadError(where, "", "expected a test case object")
    name = raw.get("name")
    where = f"{where.rsplit(':', 1)[0]}: test case {name}"
    _strict(raw, TEST_CASE_KEYS, where, "")
    ops = raw.get("workloadTemplate")
    if not isinstance(ops, list) or not ops:
        raise WorkloadError(where, "workloadTemplate", "expected a non-empty list of ops")
    unsupported = None
    for i, op in enumerate(ops):
        try:
            _check_op(op, where, f"workloadTemplate[{i}]")
        except UnsupportedError as e:   # upstream runs it; kschedcore cannot: said when selected
            unsupported = unsupported or e
    workloads = []
    for i, w in enumerate(raw.get("workloads") or []):
        if not isinstance(w, dict):
            raise WorkloadError(where, f"workloads[{i}]", "expected an object")
        _strict(w, WORKLOAD_KEYS, where, f"workloads[{i}].")
        threshold = w.get("threshold")
        if isinstance(threshold, dict):      # topic -> value: the one given
            threshold = next(iter(threshold.values()), None)
        workloads.append(Workload(str(w.get("name")), dict(w.get("params") or {}), list(w.get("labels") or []),
                                  float(threshold) if threshold else None, dict(w.get("featureGates") or {})))
    return TestCase(str(name), ops, workloads, list(raw.get("labels") or []), raw.get("defaultPodTemplatePath"),
                    raw.get("schedulerConfigPath"), dict(raw.get("featureGates") or {}), base, unsupported)


def _strict(raw: dict, known: set, where: str, prefix: str):
    unknown = sorted(set(raw) - known)
    if unknown:
        raise WorkloadError(where, prefix + unknown[0], f"unknown field (known: {', '.join(sorted(known))})")


def _check_op(op, where, path):
    if not isinstance(op, dict):
        raise WorkloadError(where, path, "expected an op object")
    code = op.get("opcode")
    if code in UNSUPPORTED_OPS:
        raise UnsupportedError(where, path + ".opcode", f'the op "{code}" is not supported by kschedcore perf')
    if code not in OPS:
        raise WorkloadError(where, path + ".opcode", f'unknown opcode "{code}" (known: {", ".join(sorted(OPS))})')
    fields = set(op) - {"opcode"}
    unknown = sorted(fields - OPS[code])
    if unknown:
        raise WorkloadError(where, f"{path}.{unknown[0]}", f"unknown field of {code}")
    if code == "createPods" and op.get("steadyState") and not (op.get("duration") or op.get("durationParam")):
        raise WorkloadError(where, path + ".steadyState", "needs duration or durationParam")
    if code == "createPods" and ("persistentVolumeTemplatePath" in op) != ("persistentVolumeClaimTemplatePath" in op):
        raise WorkloadError(where, path, "persistentVolumeTemplatePath and persistentVolumeClaimTemplatePath go together")
    strategy = op.get("nodeAllocatableStrategy") if code == "createNodes" else None
    if strategy is not None:
        if not isinstance(strategy, dict):
            raise WorkloadError(where, path + ".nodeAllocatableStrategy", "expected an object")
        _strict(strategy, NODE_ALLOCATABLE_KEYS, where, path + ".nodeAllocatableStrategy.")
    if code == "createPodSets":
        _check_op({"opcode": "createPods", **(op.get("createPodsOp") or {})}, where, path + ".createPodsOp")


def selected(labels: list, label_filter: str) -> bool:
    """scheduler_perf's -perf-scheduling-label-filter: comma-separated labels, each required
    ("x" or "+x") or excluded ("-x")."""
    have = set(labels)
    for item in filter(None, (s.strip() for s in label_filter.split(","))):
        if item.startswith("-"):
            if item[1:] in have:
                return False
        elif item.lstrip("+") not in have:
            return False
    return True


def fill(value, params: dict, used: set, where: str):
    """A `$name` string taken from the workload's params (recorded in `used`)."""
    if isinstance(value, str) and value.startswith("$"):
        name = value[1:]
        if name not in params:
            raise WorkloadError(where, value, "the workload has no such param")
        used.add(name)
        return params[name]
    return value
