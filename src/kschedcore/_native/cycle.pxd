# The profile's settings (Config) and the per-cycle switches (Cycle) the pass reads.
from libc.stdint cimport uint8_t, int32_t, int64_t

from .ids cimport N_FILTERS, N_SCORES
from .pod cimport PodView
from .table cimport Table


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


cdef void begin_cycle(Table* t, PodView* p, Config* c, Cycle* y, Py_ssize_t node_name_row,
                      int64_t n_all_nodes) noexcept
