"""Input that needs plugins kschedcore does not implement yet.

Rather than answer differently from kube-scheduler, kschedcore refuses such input with an
:class:`~kschedcore.errors.UnsupportedError` naming the object and the field.
"""
from ..errors import UnsupportedError


def check_supported(pod):
    """Raises UnsupportedError if `pod` (pending or bound) would make preemption act."""
    obj = f"pod {pod.key}"
    if (pod.raw.get("status") or {}).get("nominatedNodeName"):
        raise UnsupportedError(obj, "status.nominatedNodeName",
                               "a pod that arrives already nominated is not supported yet "
                               "(nominations are made by this scheduler's own preemption)")
