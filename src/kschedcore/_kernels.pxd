# Compiled hot path: one pass per pod over the node table (filter, score, normalise, select).
from libc.stdint cimport int8_t, uint8_t, int32_t, int64_t, uint64_t

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
    F_CUSTOM_0 = 13                # custom Filter plugins (native or per-pod Python), after in-tree
    N_FILTERS = 17

# A volume plugin's per-row status: 0 passes, else the detail (reason bits) | VOLUME_UU if the
# code is UnschedulableAndUnresolvable (Unschedulable otherwise).
cpdef enum:
    N_VOLUME_FILTERS = 4
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

# A native custom Filter: a C function (e.g. a Numba cfunc) called per node: 0 passes,
# 1 Unschedulable, 2 UnschedulableAndUnresolvable.
ctypedef int64_t (*custom_fn)(int64_t row, int64_t n_rows, int64_t n_res, int64_t n_keys,
                              const int64_t* alloc, const int64_t* requested, const int32_t* labels,
                              const int64_t* pod_count, const int64_t* allowed_pods,
                              const int64_t* pod_requests, int64_t n_params,
                              const int64_t* params) noexcept nogil

# A native custom Score: called once per cycle with the feasible rows; writes their raw scores.
ctypedef void (*custom_batch_fn)(int64_t n, const int32_t* rows, int64_t* out, int64_t n_rows,
                                 int64_t n_res, int64_t n_keys, const int64_t* alloc,
                                 const int64_t* requested, const int32_t* labels,
                                 const int64_t* pod_count, const int64_t* allowed_pods,
                                 const int64_t* pod_requests, int64_t n_params,
                                 const int64_t* params) noexcept nogil


# The custom plugins of a profile: per slot a native function, or for a Filter a per-row array
# from a Python plugin's per-pod call (NULL both: slot unused this cycle). Python Score plugins
# score after the pass, outside the kernel.
cdef struct Custom:
    custom_fn filter_fn[N_CUSTOM]
    int8_t* filter_status[N_CUSTOM]
    int64_t* filter_params[N_CUSTOM]
    int64_t n_filter_params[N_CUSTOM]
    custom_batch_fn score_fn[N_CUSTOM]
    int64_t* score_params[N_CUSTOM]
    int64_t n_score_params[N_CUSTOM]
    bint score_normalize[N_CUSTOM]   # DefaultNormalizeScore: raw * 100 / max (max 0: unchanged)
    int64_t* pod_requests             # the pod's requests by resource column (dense)

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


# Raw views of the node table's columns, taken once per bind (rows are the first index).
cdef struct Table:
    Py_ssize_t n_rows, n_res, n_keys, taint_w, port_w, image_w
    int64_t* alloc
    double* inv_alloc      # 1.0 / alloc (0 where alloc is 0), for exact division by multiplication
    int64_t* requested
    int64_t* nonzero
    int64_t* pod_count
    int64_t* generation
    int64_t* allowed_pods
    int64_t* order_key
    uint8_t* unschedulable
    int32_t* labels
    int32_t* taints
    int32_t* n_taints
    int8_t* taint_effect
    int64_t* ports
    int32_t* n_ports
    int32_t* images
    int32_t* image_nn
    int32_t* n_images
    int64_t* image_size
    int64_t* image_count
    int64_t* domains           # [domain row, label value id]: matching pods per topology domain
    Py_ssize_t dom_stride
    int64_t* value_int
    uint8_t* value_is_int


# Raw views of a CompiledPod, taken at the start of each cycle.
cdef struct PodView:
    int64_t cpu, memory, ephemeral, n_containers
    bint has_scalar_entry, tolerates_unschedulable, has_node_affinity_filter
    bint skip_balanced, skip_node_affinity_score
    Py_ssize_t n_scalars, n_host_ports, n_images, n_preferred, n_taint_ids
    int32_t selector_term, required_start, required_end, added_start, added_end
    int64_t* scalar_cols
    int64_t* scalar_vals
    int64_t* fit_score_req
    int64_t* balanced_req
    uint8_t* tolerated
    uint8_t* prefer_intolerable
    int32_t* req_key
    int32_t* req_op
    int32_t* req_vals_start
    int32_t* req_vals_end
    int32_t* req_vals
    int64_t* req_num
    int32_t* term_start
    int32_t* term_end
    int32_t* preferred_terms
    int64_t* preferred_weights
    int64_t* host_ports
    int32_t* images
    int8_t* volume_status[N_VOLUME_FILTERS]   # by F_VOLUME_* - F_VOLUME_RESTRICTIONS; NULL: Skip
    Custom* custom
    int8_t* spread_status      # PodTopologySpread per row from PreFilter (1 missing label, 2 skew)
    Py_ssize_t n_spread        # or, >= 0: constraints on domain counts (-1 with no status: Skip)
    int32_t* spread_col
    int32_t* spread_dom
    int64_t* spread_limit      # a node fails when its domain's count exceeds this
    # InterPodAffinity, from PreFilter / PreScore: constraints on per-topology-domain counts
    Py_ssize_t n_ipa_filter, n_ipa_score   # -1: that extension point skips
    int8_t* ipa_kind           # 1 affinity term, 2 anti-affinity term, 3 existing pods' anti-affinity
    int32_t* ipa_col           # label key column of the term's topology key
    int32_t* ipa_dom           # row of the domain-count table
    bint ipa_self_affine       # first pod of a self-affine group: affinity terms pass
    int32_t* ipa_score_col
    int32_t* ipa_score_dom
    int64_t* ipa_score_weight


# The profile's settings, taken at the start of each cycle.
cdef struct Config:
    int strategy
    Py_ssize_t n_strategy, n_balanced, n_shape
    int32_t* strategy_cols
    int64_t* strategy_weights
    int64_t* shape_util
    int64_t* shape_score
    int32_t* balanced_cols
    int64_t* weights
    int32_t* filter_order
    Py_ssize_t n_filter_order
    uint8_t* score_enabled
    double* recip
    Py_ssize_t n_recip


cdef struct Cycle

# Out-of-line parts of the per-node pass, called through pointers so that the compiler keeps
# them out of the hot loop (most pods have no volumes, most profiles no custom plugins).
ctypedef int (*volume_filters_fn)(PodView* p, Cycle* y, Py_ssize_t row, int64_t* detail, int* plugin) noexcept nogil
ctypedef int (*custom_filters_fn)(Table* t, PodView* p, Cycle* y, Py_ssize_t row, int* plugin) noexcept nogil

# Per-cycle switches derived from the pod and the profile.
cdef struct Cycle:
    int filters[N_FILTERS]     # the Filter plugins that can act on this pod, in profile order
    int n_filters
    bint active[N_FILTERS]
    bint in_id_order           # the ids ascend (the default profile's order): a straight-line path
    bint any_volume            # a volume plugin acts this cycle
    bint any_custom            # a custom Filter plugin acts this cycle
    bint any_custom_score      # a custom Score plugin acts this cycle
    volume_filters_fn volume_filters
    custom_filters_fn custom_filters

    Py_ssize_t node_name_row
    int64_t n_all_nodes
    bint use[N_SCORES]
    bint zero[N_SCORES]    # a used plugin whose raw score is 0 on every node this cycle


# The per-cycle output buffers, as raw pointers (taken at bind).
cdef struct Buffers:
    Py_ssize_t cap
    int8_t* st_code
    int8_t* st_plugin
    int64_t* st_detail
    int32_t* feasible
    int32_t* feas_pos
    int64_t* totals
    int64_t* raw


# One round of a scan shared between threads: chunk k covers positions [k*chunk, (k+1)*chunk).
cdef struct Round:
    Table* t
    PodView* p
    Config* c
    Cycle* y
    Buffers* b
    const int32_t* scan
    Py_ssize_t n, pos, size, offset, out, limit, chunk
    Py_ssize_t* counts


cdef extern from "_pool.h" nogil:
    ctypedef void (*ks_chunk_fn)(void* ctx, int64_t chunk) noexcept nogil
    ctypedef struct ks_pool:
        pass
    int ks_pool_start(ks_pool* p)
    void ks_pool_stop(ks_pool* p)
    void ks_pool_run(ks_pool* p, ks_chunk_fn fn, void* ctx, int64_t n_chunks)


cdef class CompiledPod:
    """A pod in integer form, compiled once against the node table's interners."""
    cdef public int64_t cpu, memory, ephemeral
    cdef public bint has_scalar_entry, tolerates_unschedulable
    cdef public int64_t[::1] scalar_cols, scalar_vals
    cdef public int64_t[::1] fit_score_req       # aligned with the kernel's strategy resources
    cdef public int64_t[::1] balanced_req        # aligned with the kernel's balanced resources
    cdef public bint skip_balanced, skip_node_affinity_score
    cdef public uint8_t[::1] tolerated           # by taint id: NoSchedule/NoExecute filter
    cdef public uint8_t[::1] prefer_intolerable  # by taint id: PreferNoSchedule taints counted by Score
    # node affinity: requirements, terms (ranges of requirements), groups of terms
    cdef public int32_t[::1] req_key, req_op, req_vals_start, req_vals_end, req_vals
    cdef public int64_t[::1] req_num
    cdef public int32_t[::1] term_start, term_end
    cdef public int32_t selector_term             # nodeSelector as one AND term, -1 if none
    cdef public int32_t required_start, required_end  # OR over these terms; -1: no required affinity
    cdef public int32_t added_start, added_end        # the profile's addedAffinity terms (OR); -1: none
    cdef public int32_t[::1] preferred_terms
    cdef public int64_t[::1] preferred_weights
    cdef public bint has_node_affinity_filter
    cdef public int64_t[::1] host_ports
    cdef public int32_t[::1] images
    cdef public int64_t n_containers
    cdef public int64_t taint_version
    # what assuming the pod adds to its node's row
    cdef public int64_t[::1] usage_cols, usage_vals
    cdef public int64_t usage_nz_cpu, usage_nz_mem
    cdef public bint preferred_parse_error
    # Python-side facts of the pod's cycle (PreFilter results, placement usage)
    cdef public object prefilter_node_names
    cdef public object usage


cdef class NodeKernel:
    cdef Table t
    # the arrays behind `t` (kept alive here)
    cdef object _arrays
    # per-cycle outputs
    cdef public int8_t[::1] st_code, st_plugin
    cdef public int64_t[::1] st_detail
    cdef public int32_t[::1] feasible
    cdef public int64_t[:, ::1] raw_scores, scores
    cdef public int64_t[::1] totals
    cdef public int64_t[::1] hist_plugin, hist_taint, hist_fit
    cdef public int64_t[:, ::1] hist_detail      # [plugin, detail 0-15] for the other plugins
    cdef Custom custom
    cdef object custom_arrays                    # arrays behind `custom` pointers (kept alive)
    cdef int64_t[::1] custom_pod_requests
    cdef object volume_arrays                    # the int8 arrays behind volume_ptr (kept alive)
    cdef int8_t* volume_ptr[N_VOLUME_FILTERS]
    cdef int8_t[::1] spread_status
    cdef bint has_spread_status
    cdef int32_t[::1] spread_col, spread_dom
    cdef int64_t[::1] spread_limit
    cdef Py_ssize_t n_spread
    cdef int8_t[::1] ipa_kind
    cdef int32_t[::1] ipa_col, ipa_dom, ipa_score_col, ipa_score_dom
    cdef int64_t[::1] ipa_score_weight
    cdef Py_ssize_t n_ipa_filter, n_ipa_score
    # PodTopologySpread Score (PreScore's result): per constraint the label column, the domain
    # counter row (-1: hostname, counted per node row in pts_rows), maxSkew - 1
    cdef Py_ssize_t n_pts                      # -1: not scored in the kernel this cycle
    cdef int32_t pts_col[MAX_SPREAD_SCORE_TERMS]
    cdef int32_t pts_dom[MAX_SPREAD_SCORE_TERMS]
    cdef double pts_skew[MAX_SPREAD_SCORE_TERMS]
    cdef int64_t* pts_rows[MAX_SPREAD_SCORE_TERMS]
    cdef bint pts_require_all                  # a node lacking any constraint's key is ignored
    cdef int32_t pts_empty                     # label value id of "" (a missing label's domain)
    cdef object pts_arrays                     # keeps the row-count arrays alive
    cdef double[::1] pts_log                   # go_log(size + 2) by size
    cdef int64_t[::1] pts_mark                 # per label value: last epoch it was seen
    cdef int64_t pts_epoch
    cdef bint ipa_self_affine
    cdef public uint8_t[::1] score_ran, score_zero
    cdef Py_ssize_t cap
    # configuration
    cdef public int64_t[::1] weights
    cdef public int32_t[::1] filter_order     # Filter plugin ids in profile order
    cdef public uint8_t[::1] score_enabled
    cdef public int strategy
    cdef public int32_t[::1] strategy_cols, balanced_cols
    cdef public int64_t[::1] strategy_weights, shape_util, shape_score
    cdef public uint64_t rng_state
    cdef double[::1] recip

    cdef public int threads
    cdef int32_t[::1] feas_pos
    cdef Py_ssize_t[::1] chunk_counts
    cdef Buffers b
    cdef ks_pool pool
    cdef int pool_state      # 0 not started, 1 running, -1 failed to start

    cdef bint _start_pool(self) noexcept

    cdef void _load_config(self, Config* c) noexcept
    cdef void _begin(self, PodView* p, Config* c, Cycle* y, Py_ssize_t node_name_row,
                     int64_t n_all_nodes) noexcept
    cdef void _histogram(self, const int32_t* scan, Py_ssize_t n, Py_ssize_t pos,
                         Py_ssize_t processed) noexcept nogil
    cdef Py_ssize_t _select(self, Config* c, Cycle* y, Py_ssize_t nf, bint tie_first) noexcept nogil
    cdef void _spread_score(self, Py_ssize_t nf) noexcept nogil
    cdef void _custom_score(self, Py_ssize_t s, Py_ssize_t nf) noexcept nogil
    cdef void _custom_pod_requests(self, CompiledPod cp) noexcept
    cdef _custom_slot(self, key, int k, Py_ssize_t address, params, values, bint is_filter, bint normalize)
