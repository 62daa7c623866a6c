"""Input that needs plugins kschedcore does not implement yet.

Rather than answer differently from kube-scheduler, kschedcore refuses such input with an
:class:`~kschedcore.errors.UnsupportedError` naming the object and the field.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UnsupportedError

if TYPE_CHECKING:
    from .pod import Pod


def check_supported(pod: Pod) -> None:
    """Raises UnsupportedError if `pod` (pending or bound) would make preemption act."""
    obj = f"pod {pod.key}"
    if (pod.raw.get("status") or {}).get("nominatedNodeName"):
        raise UnsupportedError(obj, "status.nominatedNodeName",
                               "a pod that arrives already nominated is not supported yet "
                               "(nominations are made by this scheduler's own preemption)")
