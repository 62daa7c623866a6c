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


# A summary of one word (64 scan positions) of a slot's columns, for selectHost over windows
# that cover the whole word (dense.pxd): 64 bytes. `fresh`: the maxima were made from the
# columns as they are (cleared whenever a position of the word is evaluated); best / ties /
# best_key / best_q were made under the window maxima norm_taint / norm_affinity (-1: not made).
cdef struct WordSum:
    int64_t max_taint, max_affinity     # raw TaintToleration / NodeAffinity maxima of its feasible positions
    int64_t norm_taint, norm_affinity
    int64_t best                        # the best normalised total (INT64_MIN: no feasible position)
    int64_t ties                        # how many positions have it
    int64_t best_key                    # the least order key among them, at position best_q
    int32_t best_q
    int32_t fresh


# A slot's per-position columns, as raw pointers (EquivalenceCache.columns).
cdef struct Columns:
    EqRow* entries
    uint64_t* valid
    uint64_t* ok
    int64_t* total
    int64_t* raw_taint
    int64_t* raw_affinity
    int64_t* seen
    WordSum* words
    int64_t* hist       # FitError counts over the valid rejected positions (fit_error.pxd layout)


cdef class EquivalenceCache:
    cdef readonly Py_ssize_t rows, n_slots
    cdef int64_t[:, :, ::1] entries     # [slot, row, 8 int64 words]: EqRow records
    cdef dict slot_of           # CompiledPod -> slot (kept alive: identities are never reused)
    cdef list owner             # slot -> CompiledPod or None
    cdef int64_t[::1] last_use
    cdef int64_t tick
    cdef object key             # the table state every entry was made under
    cdef readonly int64_t hits, misses
    # per slot and scan position (the whole table's scan): `valid` bit -- the columns below
    # hold the row's verdict at its current generation; `ok` bit -- it passes; the partial
    # total and the raw TaintToleration / NodeAffinity scores of a passing row. synced: the
    # table's change_seq replayed into the valid bits (-1: none yet); pos_of[row]: its position
    cdef uint64_t[:, ::1] valid, ok
    cdef int64_t[:, ::1] total
    cdef int64_t[:, ::1] raw_taint, raw_affinity
    cdef int64_t[:, ::1] seen           # [slot, 2]: a raw TaintToleration / NodeAffinity score > 0 was taken
    cdef int64_t[:, :, ::1] words       # [slot, word, 8]: WordSum records
    # [slot, fit_error layout]: the FitError counts of the slot's valid rejected positions; a
    # rejected position's `total` holds its status detail, its `raw_taint` code | plugin << 8
    cdef int64_t[:, ::1] hist
    cdef int64_t[::1] synced
    cdef int32_t[::1] pos_of
    cdef const int32_t* pos_scan       # the scan pos_of was made from (NULL: none)
    cdef readonly int64_t version      # bumped by every slot() call

    cdef EqRow* view(self, Py_ssize_t slot) noexcept
    cdef void _empty(self, Py_ssize_t s)
    cdef Columns columns(self, Py_ssize_t slot, const int32_t* scan, Py_ssize_t n,
                         const int32_t* log, int64_t seq, int64_t mask) noexcept nogil
