# Ids and codes shared by the kernel's modules and the Python plugins (cpdef: exported by ids.pyx).

# Filter plugin ids, in the default profile's Filter order (0 = none).
cpdef enum:
    F_NONE = 0
    F_NODE_UNSCHEDULABLE = 1
    F_NODE_NAME = 2
    F_TAINT_TOLERATION = 3
    F_NODE_AFFINITY = 4
    F_NODE_PORTS = 5
    F_NODE_RESOURCES_FIT = 6
    F_VOLUME_RESTRICTIONS = 7      # the four volume plugins read a per-row status from PreFilter
    F_NODE_VOLUME_LIMITS = 8
    F_VOLUME_BINDING = 9
    F_VOLUME_ZONE = 10
    F_POD_TOPOLOGY_SPREAD = 11
    F_INTER_POD_AFFINITY = 12
    F_DYNAMIC_RESOURCES = 13       # a per-row status from PreFilter too, the last in-tree Filter
    F_CUSTOM_0 = 14                # custom Filter plugins (native or per-pod Python), after in-tree
    N_FILTERS = 18

# A volume plugin's per-row status: 0 passes, else the detail (reason bits) | VOLUME_UU if the
# code is UnschedulableAndUnresolvable (Unschedulable otherwise).
cpdef enum:
    N_VOLUME_FILTERS = 5           # the four volume plugins' slots, then DynamicResources'
    DRA_STATUS_SLOT = 4
    VOLUME_UU = 64

# Score plugin ids (index into the score buffers).
cpdef enum:
    S_TAINT_TOLERATION = 0
    S_NODE_AFFINITY = 1
    S_NODE_RESOURCES_FIT = 2
    S_BALANCED_ALLOCATION = 3
    S_IMAGE_LOCALITY = 4
    S_INTER_POD_AFFINITY = 5
    S_POD_TOPOLOGY_SPREAD = 6      # scored after the filter pass (needs the feasible set)
    S_CUSTOM_0 = 7                 # custom Score plugins
    N_SCORES = 11

# Custom plugin slots (of each kind).
cpdef enum:
    N_CUSTOM = 4

# PodTopologySpread Score constraints the kernel scores itself (more: scored in Python).
cpdef enum:
    MAX_SPREAD_SCORE_TERMS = 8

# Status codes written per node.
cpdef enum:
    C_NOT_EXAMINED = 0
    C_SUCCESS = 1
    C_UNSCHEDULABLE = 2
    C_UNRESOLVABLE = 3

# NodeResourcesFit scoring strategies.
cpdef enum:
    LEAST_ALLOCATED = 0
    MOST_ALLOCATED = 1
    REQUESTED_TO_CAPACITY_RATIO = 2

# Node-affinity requirement operators.
cpdef enum:
    OP_IN = 0
    OP_NOT_IN = 1
    OP_EXISTS = 2
    OP_DOES_NOT_EXIST = 3
    OP_GT = 4
    OP_LT = 5

# bit of a NodeResourcesFit status detail meaning "Too many pods"
cpdef enum:
    TOO_MANY_PODS_BIT = 63

# The FitError counts' layout (fit_error.pxd; NodeKernel.hist): offsets of its parts.
cpdef enum:
    H_CODE = 0                              # [8]: per status code
    H_PLUGIN = 8                            # [N_FILTERS]: per Filter plugin
    H_DETAIL = H_PLUGIN + N_FILTERS         # [N_FILTERS, 16]: per plugin and detail (the other plugins)
    H_FIT = H_DETAIL + N_FILTERS * 16       # [64]: per missing resource (NodeResourcesFit's bits)
    H_TAINT = H_FIT + 64                    # [taint ids]: per untolerated taint

# framework.MaxNodeScore (a compile-time constant: not exported)
cdef enum:
    MAX_NODE_SCORE = 100
