"""The equivalence-class cache of node-local cycles.

Pods of one template (one CompiledPod: the spec fields that decide Filters and Scores) whose
cycle is the kernel pass alone -- Filters and Scores that read the candidate row only -- get
the same verdict and raw scores on a row as long as the row does not change. Every change to
a row bumps its generation (NodeTable.touch, NodeKernel.place), so a row's entry is reused
while the generation it was computed at stands; everything that changes rows without bumping
generations (a node added, updated or removed, nominated pods counted for a cycle, a fork's
revert) changes the key the whole cache was made under, and it starts again. Normalisation
and selectHost still run over the cycle's own feasible set, so results are identical to the
uncached pass (kube-scheduler's old equivalence cache, done exactly; tests compare both).

Slots are per template, least recently used first out; their number is capped by memory.

A slot also keeps per-position columns over the whole table's scan: a `valid` bit (the row's
verdict at its current generation is in the columns), an `ok` bit (it passes), its partial total
and the raw scores that selectHost normalises. A cycle (_native/dense.pxd) counts feasible
positions 64 at a time and evaluates only positions that are not valid; it writes no per-node
status: the kernel fills statuses and the feasible list from the entries when they are read
(NodeKernel.st_code and friends). The table logs every generation bump (NodeTable.changed,
touch_row); before its cycle a slot replays the changes since its last one and clears their
valid bits, or all of them if the log has moved on.
"""
from libc.string cimport memset
import mmap

import numpy as np

from .arith cimport __builtin_prefetch
from .fit_error cimport hist_count
from .ids cimport C_SUCCESS, H_TAINT

#: bytes per row and slot (an EqRow)
ROW_BYTES = sizeof(EqRow)
assert ROW_BYTES == 64
#: bytes per row and slot of the per-position columns (total, two raw scores, two bits, and a
#: 64-byte WordSum per 64 rows)
COLUMN_BYTES = 8 + 8 + 8 + 1 + 1
assert sizeof(WordSum) == 64
#: the most slots, and the memory they may take together
MAX_SLOTS = 64
BUDGET_BYTES = 512 << 20


def _mapped_zeros(shape, dtype):
    """Zeroed memory mapped in small pages as a slot first writes it. (NumPy asks for huge pages
    for large arrays: in a VM their first touch measured 113 MB/s against 1.6 GB/s, and the
    slots of 10^5 rows are ~400 MB written over the first cycles.)"""
    count = int(np.prod(shape))
    memory = mmap.mmap(-1, max(count * np.dtype(dtype).itemsize, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return np.frombuffer(memory, dtype, count).reshape(shape)


cdef class EquivalenceCache:

    def __cinit__(self):
        self.slot_of = {}
        self.owner = []
        self.rows = self.n_slots = 0

    def resize(self, Py_ssize_t rows):
        """Sized for a node table of `rows` rows (its capacity); every entry goes."""
        cdef Py_ssize_t n = max(1, min(MAX_SLOTS, BUDGET_BYTES // max(1, rows * (ROW_BYTES + COLUMN_BYTES))))
        self.rows, self.n_slots = rows, n
        # each record on a cache line of its own (the mapping starts on a page), so a reused
        # row costs one line, not two
        self.entries = _mapped_zeros((n, rows, ROW_BYTES // 8), np.int64)
        self.last_use = np.zeros(n, np.int64)
        self.owner = [None] * n
        self.slot_of = {}
        self.key = None
        self.valid = np.zeros((n, rows // 64 + 1), np.uint64)
        self.ok = np.zeros((n, rows // 64 + 1), np.uint64)
        self.total = _mapped_zeros((n, max(rows, 1)), np.int64)
        self.raw_taint = _mapped_zeros((n, max(rows, 1)), np.int64)
        self.raw_affinity = _mapped_zeros((n, max(rows, 1)), np.int64)
        self.seen = np.zeros((n, 2), np.int64)
        self.words = _mapped_zeros((n, rows // 64 + 1, 8), np.int64)
        self.hist = np.zeros((n, H_TAINT + 1), np.int64)
        self.synced = np.full(n, -1, np.int64)
        self.pos_of = np.zeros(max(rows, 1), np.int32)
        self.pos_scan = NULL

    def slot(self, cp, key, bint fresh=False) -> int:
        """The slot of template `cp` under table state `key` (a new key empties the cache);
        fresh: emptied even if `cp` holds one (its verdicts were made with a per-row status
        that has changed since: a run of copies with resource claims)."""
        cdef Py_ssize_t s
        if self.n_slots == 0:
            raise RuntimeError("the equivalence cache has no slots yet: the kernel is bound to a table first")
        self.version += 1
        if key != self.key:
            self.key = key
            self.slot_of = {}
            self.owner = [None] * self.n_slots
            self.pos_scan = NULL
        self.tick += 1
        found = self.slot_of.get(cp)
        if found is not None:
            s = found
            self.last_use[s] = self.tick
            self.hits += 1
            if fresh:
                self._empty(s)
            return s
        self.misses += 1
        s = int(np.argmin(self.last_use)) if None not in self.owner else self.owner.index(None)
        old = self.owner[s]
        if old is not None:
            del self.slot_of[old]
        self.owner[s] = cp
        self.slot_of[cp] = s
        self.last_use[s] = self.tick
        self._empty(s)
        return s

    cdef void _empty(self, Py_ssize_t s):
        """Slot s holds no verdict."""
        self.entries[s, :, 0] = -1         # EqRow.gen, the record's first word
        self.words[s, :, :] = 0            # the summaries were the old template's (WordSum.fresh 0)
        self.synced[s] = -1
        self.seen[s, 0] = self.seen[s, 1] = 0

    def feasible_into(self, Py_ssize_t slot, const int32_t[::1] scan, Py_ssize_t pos, Py_ssize_t count,
                      int8_t[::1] out):
        """out[row] = 1 for each row whose entry in `slot` passes, over `count` scan positions
        from `pos` (wrapping): the feasible rows of a cycle through the slot's columns."""
        cdef Py_ssize_t i, row, n = scan.shape[0]
        cdef const EqRow* entries = self.view(slot)
        for i in range(count):
            row = scan[pos]
            pos = pos + 1 if pos + 1 < n else 0
            if entries[row].code == C_SUCCESS and row < out.shape[0]:
                out[row] = 1

    def clear(self):
        self.key = None
        self.pos_scan = NULL

    def count_taints(self, Py_ssize_t n_taints):
        """Room in the slots' FitError counts for n_taints taint ids (the table's; they grow
        with a layout change, which empties the cache)."""
        if self.hist.shape[1] != H_TAINT + n_taints:
            self.hist = np.zeros((self.n_slots, H_TAINT + n_taints), np.int64)
            self.clear()

    cdef Columns columns(self, Py_ssize_t slot, const int32_t* scan, Py_ssize_t n,
                         const int32_t* log, int64_t seq, int64_t mask) noexcept nogil:
        """The slot's columns for a cycle over the whole table's scan (n rows), brought up to
        the table's change_seq `seq`: the valid bits of rows changed since the slot's last
        cycle cleared, a rejected one's FitError counts taken back (all of them when the log no
        longer holds those changes)."""
        cdef Py_ssize_t i, p, row
        cdef int64_t k, since = self.synced[slot]
        cdef uint64_t bit
        cdef Columns c
        c.entries = <EqRow*>&self.entries[slot, 0, 0]
        c.valid, c.ok = &self.valid[slot, 0], &self.ok[slot, 0]
        c.total = &self.total[slot, 0]
        c.raw_taint, c.raw_affinity = &self.raw_taint[slot, 0], &self.raw_affinity[slot, 0]
        c.seen = &self.seen[slot, 0]
        c.words = <WordSum*>&self.words[slot, 0, 0]
        c.hist = &self.hist[slot, 0]
        if self.pos_scan != scan:          # a new scan order (it comes with a new key)
            for i in range(n):
                self.pos_of[scan[i]] = <int32_t>i
            self.pos_scan = scan
            for i in range(self.n_slots):
                self.synced[i] = -1
            since = -1
        if since < 0 or seq - since > mask + 1:
            memset(c.valid, 0, self.valid.shape[1] * sizeof(uint64_t))
            memset(c.hist, 0, self.hist.shape[1] * sizeof(int64_t))
        else:
            for k in range(since, seq):
                if k + 8 < seq:          # a row's position: a miss too, asked 8 changes ahead
                    __builtin_prefetch(&self.pos_of[log[(k + 8) & mask]])
                row = log[k & mask]
                p = self.pos_of[row]
                # the walk evaluates the row again when it reaches it: its entry and columns
                # (cache misses at 10^5 rows) on the way while the replay goes on
                __builtin_prefetch(&c.entries[row])
                __builtin_prefetch(&c.total[p])
                bit = (<uint64_t>1) << (p & 63)
                if c.valid[p >> 6] & bit and not c.ok[p >> 6] & bit:
                    hist_count(c.hist, c.raw_taint[p] & 255, c.raw_taint[p] >> 8, c.total[p], -1)
                c.valid[p >> 6] &= ~bit
        self.synced[slot] = seq
        return c

    cdef EqRow* view(self, Py_ssize_t slot) noexcept:
        return <EqRow*>&self.entries[slot, 0, 0]
