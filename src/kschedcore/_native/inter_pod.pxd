# InterPodAffinity's cycle state: PreFilter's and PreScore's terms on per-domain counts.
cimport cython
from libc.stdint cimport int8_t, int32_t, int64_t


@cython.final
cdef class InterPodState:
    cdef readonly Py_ssize_t n_filter, n_score   # -1: that extension point skips
    cdef int8_t[::1] kind                        # 1 affinity, 2 anti-affinity, 3 existing pods' anti-affinity
    cdef int32_t[::1] col, dom                   # topology key's label column, domain-count row
    cdef readonly bint self_affine               # first pod of a self-affine group: affinity terms pass
    cdef int32_t[::1] score_col, score_dom
    cdef int64_t[::1] score_weight

    cpdef set(self, filter_terms, self_affine, score_terms)
