"""Input that needs plugins kschedcore does not implement yet.

Rather than answer differently from kube-scheduler, kschedcore refuses such input with an
:class:`~kschedcore.errors.UnsupportedError` naming the object and the field.
"""
from ..errors import UnsupportedError

_VOLUME_KINDS = ("persistentVolumeClaim", "ephemeral", "gcePersistentDisk", "awsElasticBlockStore",
                 "iscsi", "rbd", "csi", "azureDisk", "cinder", "portworxVolume", "vsphereVolume")


def check_supported(pod):
    """Raises UnsupportedError if `pod` (pending or bound) would make a cross-pod,
    volume or DRA plugin act."""
    spec = pod.raw.get("spec") or {}
    obj = f"pod {pod.key}"
    for i, vol in enumerate(spec.get("volumes") or ()):
        for kind in _VOLUME_KINDS:
            if isinstance(vol, dict) and vol.get(kind) is not None:
                raise UnsupportedError(obj, f"spec.volumes[{i}].{kind}", "volume plugins are not implemented yet")
    if (pod.raw.get("status") or {}).get("nominatedNodeName"):
        raise UnsupportedError(obj, "status.nominatedNodeName",
                               "nominated pods (preemption) are not implemented yet")
    if spec.get("resourceClaims"):
        raise UnsupportedError(obj, "spec.resourceClaims", "dynamic resource allocation is not implemented yet")
