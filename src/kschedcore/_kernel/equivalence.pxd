# EquivalenceCache: per pod template, each node row's Filter verdict and raw scores, kept
# while the row's generation stands (an exact equivalence-class cache).
from libc.stdint cimport int8_t, int64_t

cdef enum:
    # the scores a node-local pass computes per row (score_row): S_TAINT_TOLERATION (0) ..
    # S_INTER_POD_AFFINITY (5)
    N_ROW_SCORES = 6


# One template's slot, as raw pointers (taken per cycle).
cdef struct EqSlot:
    int64_t* gen        # per row: the generation its entry was computed at; -1: none
    int8_t* code
    int8_t* plugin
    int64_t* detail
    int64_t* total      # the weighted sum of the scores that need no normalisation
    int64_t* raw        # raw score s of row r at s * stride + r
    Py_ssize_t stride


cdef class EquivalenceCache:
    cdef readonly Py_ssize_t rows, n_slots
    cdef int64_t[:, ::1] gen, detail, total
    cdef int8_t[:, ::1] code, plugin
    cdef int64_t[:, :, ::1] raw
    cdef dict slot_of           # CompiledPod -> slot (kept alive: identities are never reused)
    cdef list owner             # slot -> CompiledPod or None
    cdef int64_t[::1] last_use
    cdef int64_t tick
    cdef object key             # the table state every entry was made under
    cdef readonly int64_t hits, misses

    cdef void view(self, Py_ssize_t slot, EqSlot* e) noexcept
