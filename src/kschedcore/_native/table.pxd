# The node table as the pass reads it: raw column pointers, taken once per bind.
from libc.stdint cimport int8_t, uint8_t, int32_t, int64_t

# taint effects as interned by the node table
cdef enum:
    EFFECT_NO_SCHEDULE = 0
    EFFECT_PREFER_NO_SCHEDULE = 1
    EFFECT_NO_EXECUTE = 2

# Host ports are packed as (ip id << 18) | (protocol << 16) | port; ip id 0 is 0.0.0.0.
cdef enum:
    PORT_MASK = (1 << 18) - 1


# Raw views of the node table's columns (rows are the first index).
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
    # the rows whose generation was bumped, in order: row of change k at change_log[k & log_mask];
    # change_seq[0] changes so far (NodeTable.changed; the equivalence cache replays them)
    int32_t* change_log
    int64_t* change_seq
    int64_t log_mask


cdef tuple bind_table(Table* t, table)


cdef inline void touch_row(Table* t, Py_ssize_t row) noexcept nogil:
    """A row changed: its generation bumped, the change logged (NodeTable.changed in C)."""
    t.generation[row] += 1
    t.change_log[t.change_seq[0] & t.log_mask] = <int32_t>row
    t.change_seq[0] += 1


cdef inline void add_row_usage(Table* t, Py_ssize_t row, const int64_t* cols, const int64_t* vals, Py_ssize_t n_usage,
                               int64_t nz_cpu, int64_t nz_mem, int64_t sign) noexcept nogil:
    """A pod's usage added to (sign 1: a copy placed) or taken off (-1: a departure) the row,
    the row touched (which retires its cached entry). The row's snapshot image NumNodes stay
    stale until the next cycle's UpdateSnapshot (refresh_images)."""
    cdef Py_ssize_t i
    for i in range(n_usage):
        t.requested[row * t.n_res + cols[i]] += sign * vals[i]
    t.nonzero[row * 2] += sign * nz_cpu
    t.nonzero[row * 2 + 1] += sign * nz_mem
    t.pod_count[row] += sign
    touch_row(t, row)


cdef inline void refresh_images(Table* t, Py_ssize_t row) noexcept nogil:
    """UpdateSnapshot's image part for one row: its images' NumNodes copied now."""
    cdef Py_ssize_t i
    for i in range(t.n_images[row]):
        t.image_nn[row * t.image_w + i] = <int32_t>t.image_count[t.images[row * t.image_w + i]]
