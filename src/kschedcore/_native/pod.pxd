# A pod in integer form (CompiledPod) and the raw view of it the pass reads (PodView).
from libc.stdint cimport int8_t, uint8_t, int32_t, int64_t

from .custom cimport Custom
from .ids cimport N_VOLUME_FILTERS


# Raw views of a CompiledPod (load_pod) and of the plugins' cycle state (NodeKernel.run),
# taken at the start of each cycle.
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
    int8_t* volume_status[N_VOLUME_FILTERS]   # by F_VOLUME_* - F_VOLUME_RESTRICTIONS, then DRA_STATUS_SLOT; NULL: Skip
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


cdef void load_pod(CompiledPod cp, PodView* p) noexcept
