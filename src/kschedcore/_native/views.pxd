# Raw pointers of contiguous memoryviews (NULL for empty ones), for the structs the pass reads.
from libc.stdint cimport int8_t, uint8_t, int32_t, int64_t


cdef inline int64_t* i64_ptr(int64_t[::1] a) noexcept:
    return &a[0] if a.shape[0] > 0 else NULL

cdef inline int32_t* i32_ptr(int32_t[::1] a) noexcept:
    return &a[0] if a.shape[0] > 0 else NULL

cdef inline uint8_t* u8_ptr(uint8_t[::1] a) noexcept:
    return &a[0] if a.shape[0] > 0 else NULL

cdef inline int8_t* i8_ptr(int8_t[::1] a) noexcept:
    return &a[0] if a.shape[0] > 0 else NULL
