# The FitError counts of a failed cycle (its Diagnosis), in one flat layout shared by the
# kernel's counts (NodeKernel.hist_*, views into one array) and the running counts a slot of the
# equivalence cache keeps over its rejected positions (so that a failed cycle through the slot
# copies them instead of counting every row).
from libc.stdint cimport int64_t, uint64_t

from .arith cimport __builtin_ctzll
from .ids cimport F_NODE_RESOURCES_FIT, F_TAINT_TOLERATION, N_FILTERS

cdef enum:
    H_CODE = 0                              # [8]: per status code
    H_PLUGIN = 8                            # [N_FILTERS]: per Filter plugin
    H_DETAIL = H_PLUGIN + N_FILTERS         # [N_FILTERS, 16]: per plugin and detail (the other plugins)
    H_FIT = H_DETAIL + N_FILTERS * 16       # [64]: per missing resource (NodeResourcesFit's bits)
    H_TAINT = H_FIT + 64                    # [taint ids]: per untolerated taint


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
