"""Binding a NodeTable's columns to the raw :c:struct:`Table` the pass reads."""


cdef tuple bind_table(Table* t, table):
    """Fills `t` from the table's columns; returns the arrays behind the pointers, which the
    caller keeps alive as long as it uses `t`."""
    cdef int64_t[:, ::1] alloc = table.alloc, requested = table.requested, nonzero = table.nonzero
    cdef double[:, ::1] inv_alloc = table.inv_alloc
    cdef int64_t[::1] pod_count = table.pod_count, allowed = table.allowed_pods, order = table.order_key
    cdef int64_t[::1] generation = table.generation
    cdef uint8_t[::1] unsched = table.unschedulable, is_int = table.value_is_int
    cdef int32_t[:, ::1] labels = table.labels, taints = table.taints, images = table.images
    cdef int32_t[:, ::1] image_nn = table.image_nn
    cdef int32_t[::1] n_taints = table.n_taints, n_ports = table.n_ports, n_images = table.n_images
    cdef int8_t[::1] effect = table.taint_effect
    cdef int64_t[:, ::1] ports = table.ports
    cdef int64_t[::1] image_size = table.image_size, value_int = table.value_int
    cdef int64_t[::1] image_count = table.image_count
    cdef int64_t[:, ::1] domains = table.domains
    cdef int32_t[::1] change_log = table.change_log
    cdef int64_t[::1] change_seq = table.change_seq
    arrays = (table.domains, table.image_count, table.generation, table.inv_alloc, table.alloc, table.requested, table.nonzero, table.pod_count, table.allowed_pods,
              table.order_key, table.unschedulable, table.value_is_int, table.labels,
              table.taints, table.images, table.image_nn, table.n_taints, table.n_ports,
              table.n_images, table.taint_effect, table.ports, table.image_size, table.value_int,
              table.change_log, table.change_seq)
    t.n_res, t.n_keys = alloc.shape[1], labels.shape[1]
    t.taint_w, t.port_w, t.image_w = taints.shape[1], ports.shape[1], images.shape[1]
    t.alloc, t.requested, t.nonzero = &alloc[0, 0], &requested[0, 0], &nonzero[0, 0]
    t.inv_alloc = &inv_alloc[0, 0]
    t.pod_count, t.allowed_pods, t.order_key = &pod_count[0], &allowed[0], &order[0]
    t.generation = &generation[0]
    t.unschedulable, t.labels = &unsched[0], &labels[0, 0]
    t.taints, t.n_taints, t.taint_effect = &taints[0, 0], &n_taints[0], &effect[0]
    t.ports, t.n_ports = &ports[0, 0], &n_ports[0]
    t.images, t.image_nn, t.n_images = &images[0, 0], &image_nn[0, 0], &n_images[0]
    t.image_size, t.value_int, t.value_is_int = &image_size[0], &value_int[0], &is_int[0]
    t.image_count = &image_count[0]
    t.domains, t.dom_stride = &domains[0, 0], domains.shape[1]
    t.change_log, t.change_seq, t.log_mask = &change_log[0], &change_seq[0], change_log.shape[0] - 1
    assert change_log.shape[0] & (change_log.shape[0] - 1) == 0, "the change log's length is a power of 2"
    t.n_rows = alloc.shape[0]
    return arrays


def add_usage(int64_t[:, ::1] requested, int64_t[:, ::1] nonzero, int64_t[::1] pod_count, Py_ssize_t row,
              const int64_t[::1] cols, const int64_t[::1] vals, tuple non_zero, int64_t sign):
    """A pod's requests added (sign 1) to or taken (-1) from a row of the node table's
    (requested, non-zero requested, pod count) columns: the Cache's add_usage in C, for the
    table's own C-contiguous int64 arrays (a departure or a forget costs no NumPy call)."""
    cdef Py_ssize_t i
    for i in range(cols.shape[0]):
        requested[row, cols[i]] += sign * vals[i]
    nonzero[row, 0] += sign * <int64_t>non_zero[0]
    nonzero[row, 1] += sign * <int64_t>non_zero[1]
    pod_count[row] += sign


def add_rows_usage(table, const int64_t[::1] rows, const int64_t[:, ::1] req, const int64_t[:, ::1] nonzero_req,
                   const int64_t[::1] count, int64_t sign):
    """Usage summed per row (`rows` distinct, `req` as wide as the table's requests) added
    (sign 1) or taken off (-1), each row's change logged as touch_row logs it: the few
    nominated pods a cycle counts (NominatedUsage), in C."""
    cdef int64_t[:, ::1] requested = table.requested, nonzero = table.nonzero
    cdef int64_t[::1] pod_count = table.pod_count, generation = table.generation
    cdef int64_t[::1] change_seq = table.change_seq
    cdef int32_t[::1] change_log = table.change_log
    cdef Py_ssize_t i, j, row, mask = change_log.shape[0] - 1
    assert req.shape[1] == requested.shape[1]
    for i in range(rows.shape[0]):
        row = rows[i]
        for j in range(req.shape[1]):
            requested[row, j] += sign * req[i, j]
        nonzero[row, 0] += sign * nonzero_req[i, 0]
        nonzero[row, 1] += sign * nonzero_req[i, 1]
        pod_count[row] += sign * count[i]
        generation[row] += 1
        change_log[change_seq[0] & mask] = <int32_t>row
        change_seq[0] += 1


cdef class TableRows:
    """A node table's row writes that come pod by pod -- a departure's usage taken off, a
    cycle's snapshot of image counts -- on raw views bound once per layout
    (NodeTable.rows()): a call takes no memoryview of the table's columns."""
    cdef Table t
    cdef object _arrays
    cdef readonly Py_ssize_t layout

    def __init__(self, table):
        self._arrays = bind_table(&self.t, table)       # kept alive while the pointers are used
        self.layout = table.layout

    def add_usage(self, Py_ssize_t row, const int64_t[::1] cols, const int64_t[::1] vals, tuple non_zero,
                  int64_t sign):
        """A pod's requests added to (sign 1) or taken off (-1) the row, the row touched
        (NodeTable.touch without a journal). Returns whether the row lists images (its
        snapshot's NumNodes copy goes stale)."""
        cdef Table* t = &self.t
        assert 0 <= row < t.n_rows and cols.shape[0] == vals.shape[0]
        add_row_usage(t, row, &cols[0] if cols.shape[0] else NULL, &vals[0] if vals.shape[0] else NULL,
                      cols.shape[0], non_zero[0], non_zero[1], sign)
        return t.n_images[row] > 0

    def refresh_images(self, rows):
        """refresh_image_counts for the given rows, on the bound views."""
        cdef Py_ssize_t row
        for r in rows:
            row = r
            assert 0 <= row < self.t.n_rows
            refresh_images(&self.t, row)


def refresh_image_counts(rows, const int32_t[::1] n_images, const int32_t[:, ::1] images,
                         const int64_t[::1] image_count, int32_t[:, ::1] image_nn):
    """UpdateSnapshot's image part for the given rows: each copies NumNodes of its images now
    (NodeTable.refresh_snapshot without a fork's journal, in C: a cycle after each placement)."""
    cdef Py_ssize_t row, j
    for r in rows:
        row = r
        for j in range(n_images[row]):
            image_nn[row, j] = <int32_t>image_count[images[row, j]]
