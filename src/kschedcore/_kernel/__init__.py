"""The compiled kernel: one pass per pod over the node table (filter, score, normalise, select).

Modules: ``ids`` (plugin ids, codes, limits), ``table`` and ``pod`` (the raw views the pass
reads), ``spread`` / ``inter_pod`` / ``volumes`` / ``custom`` (the plugins' cycle state),
``cycle`` (per-cycle switches) and ``node_kernel`` (the pass itself). The per-node Filter and
Score functions are ``cdef inline`` in filters.pxd / scores.pxd and compile into the pass.
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
from .node_kernel import NodeKernel
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
    "VOLUME_UU", "CompiledPod", "NodeKernel", "SpreadState", "InterPodState", "VolumeStatus",
    "CustomSlots",
]
