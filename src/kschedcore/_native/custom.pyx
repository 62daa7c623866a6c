"""The custom-plugin slots of a NodeKernel (``kernel.custom``): native Filter / Score
functions, or per-row Filter statuses from Python plugins."""
cimport cython

import numpy as np

from .arith cimport div_small
from .ids cimport MAX_NODE_SCORE


@cython.final
cdef class CustomSlots:
    def __cinit__(self):
        self.arrays = {}
        self.pod_requests = np.zeros(8, np.int64)

    cpdef set_filter(self, int k, Py_ssize_t address=0, params=None, status=None, Py_ssize_t n_rows=0):
        """Custom Filter slot k: a native function's address (with its int64 params), or a
        per-row int8 status (0 passes, 1 Unschedulable, 2 UnschedulableAndUnresolvable) of at
        least n_rows entries; neither: the slot is off."""
        self._slot(("filter", k), k, address, params, status, True, False, n_rows)

    cpdef set_score(self, int k, Py_ssize_t address=0, params=None, bint normalize=False):
        """Custom Score slot k: a native function's address (0: the slot is off)."""
        self._slot(("score", k), k, address, params, None, False, normalize, 0)

    cdef _slot(self, key, int k, Py_ssize_t address, params, values, bint is_filter,
               bint normalize, Py_ssize_t n_rows):
        cdef int64_t[::1] pv
        cdef int8_t[::1] st
        if not 0 <= k < N_CUSTOM:
            raise ValueError(f"custom plugin slot {k} out of range (0-{N_CUSTOM - 1})")
        if values is not None and values.shape[0] < n_rows:
            raise ValueError("a custom plugin's per-row array needs one entry per node table row")
        params = np.zeros(1, np.int64) if params is None else np.ascontiguousarray(params, np.int64)
        if params.shape[0] == 0:
            params = np.zeros(1, np.int64)
        pv = params
        if address == 0 and values is None:
            self.arrays.pop(key, None)
        else:
            self.arrays[key] = (params, values)
        if is_filter:
            self.c.filter_fn[k] = <custom_fn><void*>address
            self.c.filter_params[k], self.c.n_filter_params[k] = &pv[0], params.shape[0]
            self.c.filter_status[k] = NULL
            if values is not None:
                st = values
                self.c.filter_status[k] = &st[0]
        else:
            self.c.score_fn[k] = <custom_batch_fn><void*>address
            self.c.score_params[k], self.c.n_score_params[k] = &pv[0], params.shape[0]
            self.c.score_normalize[k] = normalize

    cdef void load_pod_requests(self, const int64_t[::1] cols, const int64_t[::1] vals,
                                Py_ssize_t n_res) noexcept:
        """The cycle's pod requests, dense by resource column, for the native functions."""
        cdef Py_ssize_t i
        if self.pod_requests.shape[0] < n_res:
            self.pod_requests = np.zeros(2 * n_res, np.int64)
        for i in range(n_res):
            self.pod_requests[i] = 0
        for i in range(cols.shape[0]):
            if cols[i] < n_res:
                self.pod_requests[cols[i]] += vals[i]
        self.c.pod_requests = &self.pod_requests[0]

    cdef void score(self, Py_ssize_t k, Table* t, int32_t* feasible, int64_t* raw, int64_t* norm,
                    Py_ssize_t nf) noexcept nogil:
        """Native Score slot k over the nf feasible rows (one call): raw into `raw`, then
        DefaultNormalizeScore (or the raw score) into `norm`."""
        cdef Custom* c = &self.c
        cdef Py_ssize_t j
        cdef int64_t hi = 0
        c.score_fn[k](nf, feasible, raw, t.n_rows, t.n_res, t.n_keys, t.alloc, t.requested,
                      t.labels, t.pod_count, t.allowed_pods, c.pod_requests, c.n_score_params[k],
                      c.score_params[k])
        if c.score_normalize[k]:
            for j in range(nf):
                if raw[j] > hi:
                    hi = raw[j]
        for j in range(nf):
            norm[j] = div_small(MAX_NODE_SCORE * raw[j], hi) if hi > 0 else raw[j]
