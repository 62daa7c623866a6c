"""The compiled modules the pass (``kschedcore._kernels``, NodeKernel) is built on.

``ids`` (plugin ids, codes, limits), ``table`` and ``pod`` (the raw views the pass reads),
``spread`` / ``inter_pod`` / ``volumes`` / ``custom`` (the plugins' cycle state), ``cycle``
(per-cycle switches), ``equivalence`` (the per-template cache of rows' verdicts) and
``cross_copies`` (runs of cross-pod copies through the pass). The per-node Filter and Score
functions are ``cdef inline`` in filters.pxd / scores.pxd and compile into the pass.
``yaml_events`` (libyaml's events into PyYAML's objects) is here when setup.py could link
libyaml. This ``__init__`` imports neither ``_kernels`` nor ``cross_copies`` (which cimports
it): the pass cimports this package, never the other way at import time.
"""
from .ids import (C_NOT_EXAMINED, C_SUCCESS, C_UNRESOLVABLE, C_UNSCHEDULABLE, F_CUSTOM_0, F_DYNAMIC_RESOURCES,
                  F_INTER_POD_AFFINITY, F_NODE_AFFINITY, F_NODE_NAME, F_NODE_PORTS,
                  F_NODE_RESOURCES_FIT, F_NODE_UNSCHEDULABLE, F_NODE_VOLUME_LIMITS, F_NONE,
                  F_POD_TOPOLOGY_SPREAD, F_TAINT_TOLERATION, F_VOLUME_BINDING,
                  F_VOLUME_RESTRICTIONS, F_VOLUME_ZONE, H_CODE, H_PLUGIN, LEAST_ALLOCATED, MAX_SPREAD_SCORE_TERMS,
                  MOST_ALLOCATED, N_CUSTOM, N_FILTERS, N_SCORES, N_VOLUME_FILTERS, OP_DOES_NOT_EXIST,
                  OP_EXISTS, OP_GT, OP_IN, OP_LT, OP_NOT_IN, REQUESTED_TO_CAPACITY_RATIO,
                  S_BALANCED_ALLOCATION, S_CUSTOM_0, S_IMAGE_LOCALITY, S_INTER_POD_AFFINITY,
                  S_NODE_AFFINITY, S_NODE_RESOURCES_FIT, S_POD_TOPOLOGY_SPREAD, S_TAINT_TOLERATION,
                  TOO_MANY_PODS_BIT, VOLUME_UU)
from .custom import CustomSlots
from .inter_pod import InterPodState
from .pod import CompiledPod
from .spread import SpreadState
from .volumes import VolumeStatus

__all__ = [
    "C_NOT_EXAMINED", "C_SUCCESS", "C_UNRESOLVABLE", "C_UNSCHEDULABLE", "F_CUSTOM_0", "F_DYNAMIC_RESOURCES",
    "F_INTER_POD_AFFINITY", "F_NODE_AFFINITY", "F_NODE_NAME", "F_NODE_PORTS",
    "F_NODE_RESOURCES_FIT", "F_NODE_UNSCHEDULABLE", "F_NODE_VOLUME_LIMITS", "F_NONE",
    "F_POD_TOPOLOGY_SPREAD", "F_TAINT_TOLERATION", "F_VOLUME_BINDING", "F_VOLUME_RESTRICTIONS",
    "F_VOLUME_ZONE", "H_CODE", "H_PLUGIN", "LEAST_ALLOCATED", "MAX_SPREAD_SCORE_TERMS", "MOST_ALLOCATED", "N_CUSTOM",
    "N_FILTERS", "N_SCORES", "N_VOLUME_FILTERS", "OP_DOES_NOT_EXIST", "OP_EXISTS", "OP_GT",
    "OP_IN", "OP_LT", "OP_NOT_IN", "REQUESTED_TO_CAPACITY_RATIO", "S_BALANCED_ALLOCATION",
    "S_CUSTOM_0", "S_IMAGE_LOCALITY", "S_INTER_POD_AFFINITY", "S_NODE_AFFINITY",
    "S_NODE_RESOURCES_FIT", "S_POD_TOPOLOGY_SPREAD", "S_TAINT_TOLERATION", "TOO_MANY_PODS_BIT",
    "VOLUME_UU", "CompiledPod", "SpreadState", "InterPodState", "VolumeStatus",
    "CustomSlots",
]
