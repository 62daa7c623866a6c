# PodTopologySpread's cycle state: the Filter's PreFilter result and the kernel-scored Score.
cimport cython
from libc.stdint cimport int8_t, int32_t, int64_t

from .ids cimport MAX_SPREAD_SCORE_TERMS
from .table cimport Table


@cython.final
cdef class SpreadState:
    # Filter (PreFilter's result): a per-row status, or constraints on domain counts
    cdef int8_t[::1] status
    cdef readonly bint has_status
    cdef int32_t[::1] col, dom
    cdef int64_t[::1] limit
    cdef readonly Py_ssize_t n_terms           # -1: no constraints (the status, if any, decides)
    # Score (PreScore's result): per constraint the label column, the domain counter row
    # (-1: hostname, counted per node row in score_rows), maxSkew - 1
    cdef readonly Py_ssize_t n_score           # -1: not scored in the kernel this cycle
    cdef int32_t score_col[MAX_SPREAD_SCORE_TERMS]
    cdef int32_t score_dom[MAX_SPREAD_SCORE_TERMS]
    cdef double score_skew[MAX_SPREAD_SCORE_TERMS]
    cdef int64_t* score_rows[MAX_SPREAD_SCORE_TERMS]
    cdef bint require_all                      # a node lacking any constraint's key is ignored
    cdef int32_t empty                         # label value id of "" (a missing label's domain)
    cdef object score_arrays                   # keeps the row-count arrays alive
    cdef double[::1] log                       # go_log(size + 2) by size
    cdef int64_t[::1] mark                     # per label value: last epoch it was seen
    cdef int64_t[::1] memo                     # ... and its raw score (_score_one_domain)
    cdef int64_t epoch

    cpdef set_filter(self, status, terms=*)
    cpdef set_score(self, terms, bint require_all=*, int32_t empty_value=*, Py_ssize_t n_values=*,
                    log_table=*, Py_ssize_t n_rows=*)
    cdef void score(self, Table* t, int32_t* feasible, int64_t* raw, int64_t* norm,
                    Py_ssize_t nf) noexcept nogil
    cdef void _score_one_domain(self, Table* t, int32_t* feasible, int64_t* raw, int64_t* norm,
                                Py_ssize_t nf, int64_t* lo, int64_t* hi) noexcept nogil
    cdef void _score_terms(self, Table* t, int32_t* feasible, int64_t* raw, int64_t* norm,
                           Py_ssize_t nf, int64_t* lo, int64_t* hi) noexcept nogil


cdef void fill_limits(const int64_t* domains, Py_ssize_t stride, const int32_t* dom, const int64_t* base,
                      const int32_t* values, const int32_t* start, Py_ssize_t n, int64_t* out) noexcept nogil
