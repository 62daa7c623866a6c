# The Score plugins on one node, inlined into the pass like the Filters (filters.pxd).
from libc.math cimport fabs, sqrt, round as c_round
from libc.stdint cimport int32_t, int64_t

from .arith cimport div_recip, div_small
from .cycle cimport Config
from .filters cimport term_matches
from .ids cimport LEAST_ALLOCATED, MAX_NODE_SCORE, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO
from .pod cimport PodView
from .table cimport EFFECT_PREFER_NO_SCHEDULE, Table

# ImageLocality thresholds (plugins/imagelocality/image_locality.go)
cdef enum:
    MIN_IMAGE_THRESHOLD = 23 * 1024 * 1024
    MAX_CONTAINER_IMAGE_THRESHOLD = 1000 * 1024 * 1024


cdef inline int64_t node_affinity_score(Table* t, PodView* p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t total = 0
    for i in range(p.n_preferred):
        if term_matches(t, p, row, p.preferred_terms[i]):
            total += p.preferred_weights[i]
    return total


cdef inline int64_t taint_score(Table* t, PodView* p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t b
    cdef int32_t tid
    cdef int64_t count = 0
    cdef int32_t* taints = t.taints + row * t.taint_w
    for b in range(t.n_taints[row]):
        tid = taints[b]
        if t.taint_effect[tid] == EFFECT_PREFER_NO_SCHEDULE and p.prefer_intolerable[tid]:
            count += 1
    return count


# ---- NodeResourcesFit, BalancedAllocation -------------------------------------------------------
cdef inline int64_t broken_linear(Config* c, int64_t x) noexcept nogil:
    """helper.BuildBrokenLinearFunction over the RequestedToCapacityRatio shape."""
    cdef Py_ssize_t i
    for i in range(c.n_shape):
        if x <= c.shape_util[i]:
            if i == 0:
                return c.shape_score[0]
            return c.shape_score[i - 1] + (c.shape_score[i] - c.shape_score[i - 1]) * \
                (x - c.shape_util[i - 1]) / (c.shape_util[i] - c.shape_util[i - 1])
    return c.shape_score[c.n_shape - 1]


cdef inline bint alloc_req(Table* t, Py_ssize_t row, int64_t col, int64_t pod_req, bint non_zero,
                           int64_t* alloc, int64_t* req) noexcept nogil:
    """resourceAllocationScorer.calculateResourceAllocatableRequest. False: the resource is
    left out (not a counted resource, an extended resource the pod does not request, or no
    allocatable)."""
    if col < 0 or (col >= 3 and pod_req == 0):
        return False
    alloc[0] = t.alloc[row * t.n_res + col]
    if alloc[0] == 0:
        return False
    if col < 2 and non_zero:
        req[0] = t.nonzero[row * 2 + col] + pod_req
    else:
        req[0] = t.requested[row * t.n_res + col] + pod_req
    return True


cdef inline int64_t fit_score(Table* t, PodView* p, Config* c, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t col, alloc = 0, req = 0, w, s, total = 0, wsum = 0
    cdef double inv
    for i in range(c.n_strategy):
        col = c.strategy_cols[i]
        if not alloc_req(t, row, col, p.fit_score_req[i], True, &alloc, &req):
            continue
        inv = t.inv_alloc[row * t.n_res + col]
        w = c.strategy_weights[i]
        if c.strategy == LEAST_ALLOCATED:
            s = 0 if req > alloc else div_recip((alloc - req) * MAX_NODE_SCORE, alloc, inv)
        elif c.strategy == MOST_ALLOCATED:
            s = div_recip((alloc if req > alloc else req) * MAX_NODE_SCORE, alloc, inv)
        else:
            s = broken_linear(c, 100 if req > alloc else div_recip(req * 100, alloc, inv))
            if s <= 0:
                continue
        total += s * w
        wsum += w
    if wsum == 0:
        return 0
    if c.strategy == REQUESTED_TO_CAPACITY_RATIO:
        return <int64_t>c_round(<double>total / <double>wsum)
    return div_recip(total, wsum, c.recip[wsum]) if wsum < c.n_recip else total / wsum


cdef inline bint balanced_fraction(Table* t, PodView* p, Config* c, Py_ssize_t row, Py_ssize_t i,
                                   double* f) noexcept nogil:
    """The i-th configured resource's requested/allocatable fraction (capped at 1), or False
    if the resource is left out."""
    cdef int64_t alloc = 0, req = 0
    if not alloc_req(t, row, c.balanced_cols[i], p.balanced_req[i], False, &alloc, &req):
        return False
    f[0] = <double>req / <double>alloc
    if f[0] > 1:
        f[0] = 1
    return True


cdef inline int64_t balanced_score_n(Table* t, PodView* p, Config* c, Py_ssize_t row) noexcept nogil:
    """BalancedAllocation over more than two resources (rare: kept out of balanced_score)."""
    cdef Py_ssize_t i
    cdef int n = 0
    cdef double total = 0.0, mean, acc, std = 0.0
    cdef double fr[64]
    for i in range(c.n_balanced):
        if balanced_fraction(t, p, c, row, i, &fr[n]):
            total += fr[n]
            n += 1
    if n == 2:
        std = fabs((fr[0] - fr[1]) / 2)
    elif n > 2:
        mean = total / <double>n
        acc = 0.0
        for i in range(n):
            acc = acc + (fr[i] - mean) * (fr[i] - mean)
        std = sqrt(acc / <double>n)
    return <int64_t>((1 - std) * <double>MAX_NODE_SCORE)


cdef inline int64_t balanced_score(Table* t, PodView* p, Config* c, Py_ssize_t row) noexcept nogil:
    """BalancedAllocation: 100 * (1 - standard deviation of the fractions); the usual case of at
    most two resources needs no scratch array."""
    cdef Py_ssize_t i
    cdef int n = 0
    cdef double f = 0.0, f0 = 0.0, std = 0.0
    if c.n_balanced > 2:
        return balanced_score_n(t, p, c, row)
    for i in range(c.n_balanced):
        if balanced_fraction(t, p, c, row, i, &f):
            if n == 0:
                f0 = f
            else:
                std = fabs((f0 - f) / 2)
            n += 1
    return <int64_t>((1 - std) * <double>MAX_NODE_SCORE)


# ---- ImageLocality, InterPodAffinity --------------------------------------------------------------
cdef inline int64_t image_score(Table* t, PodView* p, Py_ssize_t row, int64_t n_nodes) noexcept nogil:
    cdef Py_ssize_t a, b
    cdef int64_t total = 0, max_t
    cdef int32_t img
    cdef int32_t* images = t.images + row * t.image_w
    cdef int32_t* num_nodes = t.image_nn + row * t.image_w
    for a in range(p.n_images):
        img = p.images[a]
        for b in range(t.n_images[row]):
            if images[b] == img:
                total += <int64_t>(<double>t.image_size[img] * (<double>num_nodes[b] / <double>n_nodes))
                break
    if total <= MIN_IMAGE_THRESHOLD:
        return 0
    max_t = MAX_CONTAINER_IMAGE_THRESHOLD * p.n_containers
    if total > max_t:
        total = max_t
    return div_small(MAX_NODE_SCORE * (total - MIN_IMAGE_THRESHOLD), max_t - MIN_IMAGE_THRESHOLD)


cdef inline int64_t inter_pod_score(Table* t, PodView* p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t i
    cdef int32_t v
    cdef int64_t total = 0
    for i in range(p.n_ipa_score):
        v = t.labels[row * t.n_keys + p.ipa_score_col[i]]
        if v >= 0:
            total += p.ipa_score_weight[i] * t.domains[p.ipa_score_dom[i] * t.dom_stride + v]
    return total
