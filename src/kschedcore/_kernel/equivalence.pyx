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
"""
import numpy as np

#: bytes per row and slot (an EqRow)
ROW_BYTES = sizeof(EqRow)
assert ROW_BYTES == 64
#: the most slots, and the memory they may take together
MAX_SLOTS = 64
BUDGET_BYTES = 512 << 20


cdef class EquivalenceCache:

    def __cinit__(self):
        self.slot_of = {}
        self.owner = []
        self.rows = self.n_slots = 0

    def resize(self, Py_ssize_t rows):
        """Sized for a node table of `rows` rows (its capacity); every entry goes."""
        cdef Py_ssize_t n = max(1, min(MAX_SLOTS, BUDGET_BYTES // max(1, rows * ROW_BYTES)))
        self.rows, self.n_slots = rows, n
        # zeroed pages are mapped as they are first written (a slot's generations are reset
        # when a template takes it)
        self.entries = np.zeros((n, rows, ROW_BYTES // 8), np.int64)
        self.last_use = np.zeros(n, np.int64)
        self.owner = [None] * n
        self.slot_of = {}
        self.key = None

    def slot(self, cp, key) -> int:
        """The slot of template `cp` under table state `key` (a new key empties the cache)."""
        cdef Py_ssize_t s
        if key != self.key:
            self.key = key
            self.slot_of = {}
            self.owner = [None] * self.n_slots
        self.tick += 1
        found = self.slot_of.get(cp)
        if found is not None:
            s = found
            self.last_use[s] = self.tick
            self.hits += 1
            return s
        self.misses += 1
        s = int(np.argmin(self.last_use)) if None not in self.owner else self.owner.index(None)
        old = self.owner[s]
        if old is not None:
            del self.slot_of[old]
        self.owner[s] = cp
        self.slot_of[cp] = s
        self.last_use[s] = self.tick
        self.entries[s, :, 0] = -1         # EqRow.gen, the record's first word
        return s

    def clear(self):
        self.key = None

    cdef EqRow* view(self, Py_ssize_t slot) noexcept:
        return <EqRow*>&self.entries[slot, 0, 0]
