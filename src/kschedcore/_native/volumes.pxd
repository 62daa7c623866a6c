# The four volume plugins' and DynamicResources' cycle state: a per-row status each, from their PreFilter.
cimport cython
from libc.stdint cimport int8_t

from .ids cimport N_VOLUME_FILTERS


@cython.final
cdef class VolumeStatus:
    cdef list arrays                          # the int8 arrays behind ptr (kept alive)
    cdef int8_t* ptr[N_VOLUME_FILTERS]        # by F_VOLUME_* - F_VOLUME_RESTRICTIONS; NULL: Skip

    cpdef set(self, int fid, status, Py_ssize_t n_rows=*)
    cdef int check(self, Py_ssize_t n_rows) except -1
