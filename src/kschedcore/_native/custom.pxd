# Custom (user-written) Filter and Score plugins: the slots the pass calls.
cimport cython
from libc.stdint cimport int8_t, int32_t, int64_t

from .ids cimport N_CUSTOM
from .table cimport Table

# A native custom Filter: a C function (e.g. a Numba cfunc) called per node: 0 passes,
# 1 Unschedulable, 2 UnschedulableAndUnresolvable.
ctypedef int64_t (*custom_fn)(int64_t row, int64_t n_rows, int64_t n_res, int64_t n_keys,
                              const int64_t* alloc, const int64_t* requested, const int32_t* labels,
                              const int64_t* pod_count, const int64_t* allowed_pods,
                              const int64_t* pod_requests, int64_t n_params,
                              const int64_t* params) noexcept nogil

# A native custom Score: called once per cycle with the feasible rows; writes their raw scores.
ctypedef void (*custom_batch_fn)(int64_t n, const int32_t* rows, int64_t* out, int64_t n_rows,
                                 int64_t n_res, int64_t n_keys, const int64_t* alloc,
                                 const int64_t* requested, const int32_t* labels,
                                 const int64_t* pod_count, const int64_t* allowed_pods,
                                 const int64_t* pod_requests, int64_t n_params,
                                 const int64_t* params) noexcept nogil


# The custom plugins of a profile: per slot a native function, or for a Filter a per-row array
# from a Python plugin's per-pod call (NULL both: slot unused this cycle). Python Score plugins
# score after the pass, outside the kernel.
cdef struct Custom:
    custom_fn filter_fn[N_CUSTOM]
    int8_t* filter_status[N_CUSTOM]
    int64_t* filter_params[N_CUSTOM]
    int64_t n_filter_params[N_CUSTOM]
    custom_batch_fn score_fn[N_CUSTOM]
    int64_t* score_params[N_CUSTOM]
    int64_t n_score_params[N_CUSTOM]
    bint score_normalize[N_CUSTOM]   # DefaultNormalizeScore: raw * 100 / max (max 0: unchanged)
    int64_t* pod_requests             # the pod's requests by resource column (dense)


@cython.final
cdef class CustomSlots:
    cdef Custom c                     # the PodView points here
    cdef readonly dict arrays         # arrays behind the pointers of `c` (kept alive), by slot
    cdef int64_t[::1] pod_requests

    cpdef set_filter(self, int k, Py_ssize_t address=*, params=*, status=*, Py_ssize_t n_rows=*)
    cpdef set_score(self, int k, Py_ssize_t address=*, params=*, bint normalize=*)
    cdef _slot(self, key, int k, Py_ssize_t address, params, values, bint is_filter,
               bint normalize, Py_ssize_t n_rows)
    cdef void load_pod_requests(self, const int64_t[::1] cols, const int64_t[::1] vals,
                                Py_ssize_t n_res) noexcept
    cdef void score(self, Py_ssize_t k, Table* t, int32_t* feasible, int64_t* raw, int64_t* norm,
                    Py_ssize_t nf) noexcept nogil
