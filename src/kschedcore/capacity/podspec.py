"""Pod templates for capacity questions: read as cluster-capacity reads `--podspec`.

cluster-capacity (cmd/cluster-capacity/app/options) decodes the *first* YAML/JSON document of
the file as a v1.Pod, then defaults what the API server would: namespace "default", schedulerName
"default-scheduler", dnsPolicy ClusterFirst, restartPolicy Always, each container's
terminationMessagePolicy FallbackToLogsOnError. No admission runs (the simulated API is a fake
clientset): spec.priority is what the file says, priorityClassName is not resolved.

kschedcore also accepts, as the first document, an object with a pod template (Deployment,
ReplicaSet, StatefulSet, Job, ReplicationController, DaemonSet): its `spec.template`, named after
the object, with `spec.replicas` as the template's target count.
"""
import copy
from typing import Any
from dataclasses import dataclass
from pathlib import Path

from ..errors import WorkloadError
from ..sources.files import documents, read_text

PROVISIONER_ANNOTATION = "cc.kubernetes.io/provisioned-by"
"""The annotation cluster-capacity puts on every copy of a pod template: the scheduler that placed it."""
DEFAULT_SCHEDULER = "default-scheduler"
WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "Job", "ReplicationController", "DaemonSet")


@dataclass
class Template:
    """One pod shape: `pod` is the defaulted v1.Pod (raw dict) every copy is made from."""
    pod: dict
    source: str
    #: replicas wanted (from --podspec FILE=N or a workload object's spec.replicas); None: as many as fit
    target: int | None = None
    #: a gang: PodGroups of this many copies, all placed or none (Coscheduling's minMember)
    min_member: int | None = None

    @property
    def name(self) -> str:
        return self.pod["metadata"]["name"]

    @property
    def namespace(self) -> str:
        return self.pod["metadata"]["namespace"]

    def copy(self, index: int, scheduler_name: str = DEFAULT_SCHEDULER) -> dict:
        """Copy number `index` (singlePodGenerator.Generate): named `<name>-<index>`, no node,
        annotated as provisioned by the scheduler."""
        pod = copy.deepcopy(self.pod)
        meta = pod["metadata"]
        meta["name"] = f"{self.name}-{index}"
        meta["uid"] = f"{self.namespace}/{meta['name']}"
        meta.setdefault("annotations", {})
        meta["annotations"] = dict(meta["annotations"] or {}, **{PROVISIONER_ANNOTATION: scheduler_name})
        pod["spec"].pop("nodeName", None)
        pod["spec"]["schedulerName"] = scheduler_name
        return pod


def default_pod(pod: dict, scheduler_name: str = DEFAULT_SCHEDULER) -> dict:
    """ParseAPISpec's defaults on a raw pod (a deep copy)."""
    pod = copy.deepcopy(pod)
    meta = pod.setdefault("metadata", {})
    if not meta.get("namespace"):
        meta["namespace"] = "default"
    spec = pod.setdefault("spec", {})
    if not spec.get("schedulerName"):
        spec["schedulerName"] = scheduler_name
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    for c in spec.get("containers") or []:
        if isinstance(c, dict) and not c.get("terminationMessagePolicy"):
            c["terminationMessagePolicy"] = "FallbackToLogsOnError"
    return pod


def _from_document(doc: Any, where: str) -> tuple[dict, int | None]:
    """(pod dict, replicas or None) of the first document."""
    if not isinstance(doc, dict):
        raise WorkloadError(where, "", f"expected a Pod object, got {type(doc).__name__}")
    kind = doc.get("kind")
    if kind in WORKLOAD_KINDS:
        spec = doc["spec"] if isinstance(doc.get("spec"), dict) else {}
        tmpl = spec.get("template")
        if not isinstance(tmpl, dict):
            raise WorkloadError(where, "spec.template", f"a {kind} without a pod template")
        pod = copy.deepcopy(tmpl)
        meta = pod.setdefault("metadata", {})
        outer = doc.get("metadata") or {}
        meta["name"] = outer.get("name") or meta.get("name")
        if outer.get("namespace") and not meta.get("namespace"):
            meta["namespace"] = outer["namespace"]
        replicas = spec.get("replicas", 1 if kind != "DaemonSet" else None)
        if replicas is not None and (isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0):
            raise WorkloadError(where, "spec.replicas", f"must be a non-negative integer, got {replicas!r}")
        return {"apiVersion": "v1", "kind": "Pod", **pod}, replicas
    if kind not in (None, "Pod"):
        raise WorkloadError(where, "kind", f'expected a Pod (or an object with a pod template), got "{kind}"')
    return doc, None


def read_template(spec: str) -> Template:
    """`FILE` or `FILE=N` (N: the target count)."""
    path, target = spec, None
    if "=" in spec and not Path(spec).exists():
        path, _, count = spec.rpartition("=")
        try:
            target = int(count)
        except ValueError:
            raise WorkloadError(spec, "", f'the count after "=" must be an integer, got "{count}"') from None
        if target < 0:
            raise WorkloadError(spec, "", f"the count must be non-negative, got {target}")
    docs = documents(Path(path), read_text(Path(path)))
    if not docs:
        raise WorkloadError(path, "", "no pod in the file")
    pod, replicas = _from_document(docs[0], f"{path}: document 1")
    pod = default_pod(pod)
    if not pod["metadata"].get("name"):
        raise WorkloadError(path, "metadata.name", "Required value")
    return Template(pod, path, target if target is not None else replicas)
