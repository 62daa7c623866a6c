"""The volume plugins' per-row Filter statuses in a NodeKernel (``kernel.volumes``)."""
cimport cython

from .ids cimport DRA_STATUS_SLOT, F_DYNAMIC_RESOURCES, F_VOLUME_RESTRICTIONS, F_VOLUME_ZONE


@cython.final
cdef class VolumeStatus:
    def __cinit__(self):
        self.arrays = [None] * N_VOLUME_FILTERS

    cpdef set(self, int fid, status, Py_ssize_t n_rows=0):
        """Volume plugin `fid`'s PreFilter result for the next cycle(s): per-row int8 status
        (0 passes, else reason bits | VOLUME_UU) of at least n_rows entries, or None: the
        plugin skips."""
        cdef Py_ssize_t k = DRA_STATUS_SLOT if fid == F_DYNAMIC_RESOURCES else fid - F_VOLUME_RESTRICTIONS
        cdef int8_t[::1] arr
        if not (F_VOLUME_RESTRICTIONS <= fid <= F_VOLUME_ZONE or fid == F_DYNAMIC_RESOURCES):
            raise ValueError(f"not a volume filter id: {fid}")
        if status is None:
            self.arrays[k] = None
            self.ptr[k] = NULL
            return
        if status.shape[0] < n_rows:
            raise ValueError("a volume status needs one entry per node table row")
        arr = status
        self.arrays[k] = status
        self.ptr[k] = &arr[0]

    cdef int check(self, Py_ssize_t n_rows) except -1:
        """Raises if a status set before the table grew is too short for it."""
        cdef Py_ssize_t v
        for v in range(N_VOLUME_FILTERS):
            if self.ptr[v] != NULL and self.arrays[v].shape[0] < n_rows:
                raise ValueError("a volume status is shorter than the node table (set it again)")
        return 0
