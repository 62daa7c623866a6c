"""InterPodAffinity's cycle state in a NodeKernel (``kernel.inter_pod``)."""
cimport cython

import numpy as np


@cython.final
cdef class InterPodState:
    def __cinit__(self):
        self.n_filter = self.n_score = -1
        self.kind = np.zeros(0, np.int8)
        self.col = self.dom = self.score_col = self.score_dom = np.zeros(0, np.int32)
        self.score_weight = np.zeros(0, np.int64)

    cpdef set(self, filter_terms, self_affine, score_terms):
        """PreFilter's / PreScore's results for the next cycle(s).

        filter_terms: (kind int8[], label column int32[], domain row int32[]) or None (Skip);
        score_terms: (label column int32[], domain row int32[], weight int64[]) or None (Skip).
        """
        if filter_terms is None:
            self.n_filter = -1
        else:
            self.kind, self.col, self.dom = filter_terms
            self.n_filter = self.kind.shape[0]
        self.self_affine = self_affine
        if score_terms is None:
            self.n_score = -1
        else:
            self.score_col, self.score_dom, self.score_weight = score_terms
            self.n_score = self.score_col.shape[0]
