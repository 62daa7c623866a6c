# EquivalenceCache: per pod template, each node row's Filter verdict and raw scores, kept
# while the row's generation stands (an exact equivalence-class cache).
from libc.stdint cimport int8_t, int32_t, int64_t, uint64_t

cdef enum:
    # the scores a node-local pass keeps per row: S_TAINT_TOLERATION (0) .. S_IMAGE_LOCALITY (4)
    N_ROW_SCORES = 5


# One row's entry: 64 bytes, one cache line (a cycle reads one line per row it reuses).
cdef struct EqRow:
    int64_t gen         # the row's generation the entry was computed at; -1: none
    int64_t total       # passing: the weighted sum of the scores that need no normalisation;
                        # rejected: the status detail
    int64_t raw[N_ROW_SCORES]
    int8_t code
    int8_t plugin


cdef class EquivalenceCache:
    cdef readonly Py_ssize_t rows, n_slots
    cdef int64_t[:, :, ::1] entries     # [slot, row, 8 int64 words]: EqRow records
    cdef dict slot_of           # CompiledPod -> slot (kept alive: identities are never reused)
    cdef list owner             # slot -> CompiledPod or None
    cdef int64_t[::1] last_use
    cdef int64_t tick
    cdef object key             # the table state every entry was made under
    cdef readonly int64_t hits, misses
    # per slot, the scan positions whose row is known to fail at its current generation (bit
    # set: the entry is current and rejects), and the table's change_seq replayed into it
    # (-1: none yet); pos_of[row]: the row's position in the scan they index
    cdef uint64_t[:, ::1] skip
    cdef int64_t[::1] synced
    cdef int32_t[::1] pos_of
    cdef const int32_t* pos_scan       # the scan pos_of was made from (NULL: none)
    cdef readonly int64_t version      # bumped by every slot() call

    cdef EqRow* view(self, Py_ssize_t slot) noexcept
    cdef uint64_t* skip_bits(self, Py_ssize_t slot, const int32_t* scan, Py_ssize_t n,
                             const int32_t* log, int64_t seq, int64_t mask) noexcept nogil
