"""The C heap of a long run: glibc's malloc raises its mmap threshold each time a large block
it mapped is freed (up to 32 MiB), after which large NumPy arrays come from the heap, and the
holes they leave when freed -- node churn reallocates the kernels' per-node arrays -- are not
given back. Fixing the threshold at its starting value (128 KiB) keeps large arrays mapped and
returned on free. It once halved the soak's RSS growth under node churn; the soak now measures
the same RSS with it and without (500 nodes, 10^6 cycles: 74-103 MiB either way, with or without
malloc_trim; 5,000 nodes, 3 x 10^5 cycles: 97-178 MiB). It is process-wide and for good (glibc's
adaptive threshold cannot be restored) and costly for the process's other large allocations --
each is mapped and its pages faulted in anew (a 480 KiB NumPy copy: 6 us before, ~270 us after)
--, so the loop does it only when asked (`Simulation(fix_heap=True)`); nothing on other C
libraries."""
import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3
THRESHOLD = 128 * 1024
_done = False


def fix_mmap_threshold() -> bool:
    """mallopt(M_MMAP_THRESHOLD, 128 KiB) on glibc; True if it was set (now or before)."""
    global _done
    if _done:
        return True
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    _done = mallopt(M_MMAP_THRESHOLD, THRESHOLD) == 1
    return _done


def mmap_threshold_fixed() -> bool:
    """Whether fix_mmap_threshold has fixed the threshold in this process."""
    return _done
