# Go's integer and float arithmetic, inlined wherever it is used (no fast-math: see setup.py).
from libc.math cimport copysign, fabs, floor
from libc.stdint cimport int64_t, uint64_t

cdef extern from *:
    """
    static inline uint64_t ks_mul_high(uint64_t a, uint64_t b) {
        return (uint64_t)(((unsigned __int128)a * b) >> 64);
    }
    """
    uint64_t ks_mul_high(uint64_t a, uint64_t b) nogil
    int __builtin_ctzll(unsigned long long x) nogil
    void __builtin_prefetch(const void* address) nogil


cdef inline int64_t div_small(int64_t a, int64_t b) noexcept nogil:
    """a / b (Go: truncating) for 0 <= a and 0 < b with a small quotient (<= ~100).

    A 64-bit integer division costs tens of cycles; a float64 division plus one correction
    step is exact here: the float quotient is within 1 of the true one, and the integer
    checks below fix it up.
    """
    if a < 0 or b <= 0:
        return a / b
    cdef int64_t q = <int64_t>(<double>a / <double>b)
    if q * b > a:
        q -= 1
    elif (q + 1) * b <= a:
        q += 1
    return q


cdef inline int64_t div_recip(int64_t a, int64_t b, double inv_b) noexcept nogil:
    """a / b (truncating) given inv_b = 1.0 / b, for 0 <= a, 0 < b < 2^52, small quotients.

    A multiplication instead of a division; the float quotient is within 1 of the true one
    and the integer checks make it exact.
    """
    if a < 0 or b <= 0 or b >= (<int64_t>1 << 52):
        return a / b
    cdef int64_t q = <int64_t>(<double>a * inv_b)
    if q * b > a:
        q -= 1
    elif (q + 1) * b <= a:
        q += 1
    return q


cdef inline int64_t go_round(double x) noexcept nogil:
    """math.Round: half away from zero."""
    cdef double a = fabs(x)
    cdef double f = floor(a)
    if a - f >= 0.5:
        f = f + 1.0
    return <int64_t>copysign(f, x)


cdef inline uint64_t next_random(uint64_t* state) noexcept nogil:
    """splitmix64: small, fast, reproducible from a seed."""
    state[0] += <uint64_t>0x9E3779B97F4A7C15
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)


cdef inline uint64_t uniform_below(uint64_t* state, uint64_t n) noexcept nogil:
    """A draw uniform in [0, n) (n >= 1): the high word of draw * n (Lemire's multiply-shift,
    no division)."""
    return ks_mul_high(next_random(state), n)
