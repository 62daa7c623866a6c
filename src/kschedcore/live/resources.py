"""The kinds kschedcore reads from an API server: where each is listed and watched."""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

__all__ = ["Resource", "RESOURCES", "resource"]


@dataclass(frozen=True)
class Resource:
    """A kind's API coordinates: its group/version, plural and whether it is namespaced."""
    kind: str
    group_version: str        # "v1", "apps/v1", ...
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return self.group_version

    def path(self, namespace: str = "", name: str = "", subresource: str = "") -> str:
        """The collection's path (every namespace's when namespace is empty), or one object's
        (and its subresource's), the names quoted."""
        root = "/api/v1" if self.group_version == "v1" else f"/apis/{self.group_version}"
        ns = f"/namespaces/{quote(namespace, safe='')}" if namespace and self.namespaced else ""
        one = f"/{quote(name, safe='')}" if name else ""
        return f"{root}{ns}/{self.plural}{one}" + (f"/{subresource}" if subresource else "")


#: what kube-scheduler's informers watch, and the controllers' objects DefaultPodTopologySpread
#: reads; Pods first: a snapshot lists them first and the others at their resourceVersion
RESOURCES = (
    Resource("Pod", "v1", "pods", True),
    Resource("Node", "v1", "nodes", False),
    Resource("Namespace", "v1", "namespaces", False),
    Resource("PersistentVolumeClaim", "v1", "persistentvolumeclaims", True),
    Resource("PersistentVolume", "v1", "persistentvolumes", False),
    Resource("Service", "v1", "services", True),
    Resource("ReplicationController", "v1", "replicationcontrollers", True),
    Resource("ReplicaSet", "apps/v1", "replicasets", True),
    Resource("StatefulSet", "apps/v1", "statefulsets", True),
    Resource("StorageClass", "storage.k8s.io/v1", "storageclasses", False),
    Resource("CSINode", "storage.k8s.io/v1", "csinodes", False),
    Resource("CSIDriver", "storage.k8s.io/v1", "csidrivers", False),
    Resource("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities", True),
    Resource("VolumeAttachment", "storage.k8s.io/v1", "volumeattachments", False),
    Resource("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", True),
    Resource("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", False),
    Resource("DeviceClass", "resource.k8s.io/v1", "deviceclasses", False),
    Resource("ResourceSlice", "resource.k8s.io/v1", "resourceslices", False),
    Resource("ResourceClaim", "resource.k8s.io/v1", "resourceclaims", True),
    Resource("ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates", True),
)
"""Every kind kschedcore lists and watches, Pods first."""
_BY_KIND = {r.kind: r for r in RESOURCES}


def resource(kind: str) -> Resource:
    """The Resource of a kind in RESOURCES."""
    return _BY_KIND[kind]
