# The FitError counts of a failed cycle (its Diagnosis), in one flat layout shared by the
# kernel's counts (NodeKernel.hist_*, views into one array) and the running counts a slot of the
# equivalence cache keeps over its rejected positions (so that a failed cycle through the slot
# copies them instead of counting every row).
from libc.stdint cimport int8_t, int32_t, int64_t, uint64_t
from libc.string cimport memset

from .arith cimport __builtin_ctzll
from .ids cimport C_SUCCESS, F_NODE_RESOURCES_FIT, F_TAINT_TOLERATION, H_CODE, H_DETAIL, H_FIT, H_PLUGIN, H_TAINT

cdef inline void hist_count(int64_t* h, int code, int plugin, int64_t detail, int64_t delta) noexcept nogil:
    """Counts (delta +1) or uncounts (-1) one rejected node with this status."""
    cdef uint64_t bits
    h[H_CODE + code] += delta
    h[H_PLUGIN + plugin] += delta
    if plugin == F_TAINT_TOLERATION:
        h[H_TAINT + detail] += delta
    elif plugin != F_NODE_RESOURCES_FIT:
        h[H_DETAIL + plugin * 16 + (detail & 15)] += delta
    else:
        bits = <uint64_t>detail
        while bits:                      # the set bits only: the missing resources
            h[H_FIT + __builtin_ctzll(bits)] += delta
            bits &= bits - 1


cdef inline void hist_of_statuses(int64_t* h, Py_ssize_t size, const int32_t* scan, Py_ssize_t n, Py_ssize_t pos,
                                  Py_ssize_t processed, const int8_t* code, const int8_t* plugin,
                                  const int64_t* detail) noexcept nogil:
    """The counts (h, `size` entries) of a cycle's processed rows from their statuses."""
    cdef Py_ssize_t i, row
    memset(h, 0, size * sizeof(int64_t))
    for i in range(processed):
        row = scan[(pos + i) % n]
        if code[row] != C_SUCCESS:
            hist_count(h, code[row], plugin[row], detail[row], 1)
