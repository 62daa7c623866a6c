"""The per-pod pass over the node table, compiled.

One call of :meth:`NodeKernel.run` is one scheduling cycle's Filter + Score + NormalizeScore
+ selectHost for the node-local default plugins (semantics §3.1-3.6, §4.1-4.5, §5.2, §5.4).
Arithmetic follows Go: int64 with truncating division, float64 steps in the order
kube-scheduler writes them, no fast-math and no FP contraction (see setup.py).

The loops read raw pointers (the Table / PodView / Config structs of the .pxd) taken once per
cycle, so the C compiler keeps them in registers; no Python object is touched per node.
"""
from libc.math cimport copysign, fabs, floor, sqrt, round as c_round
from libc.stdint cimport INT64_MIN, INT64_MAX

import numpy as np

# ImageLocality thresholds (plugins/imagelocality/image_locality.go)
cdef int64_t MIN_IMAGE_THRESHOLD = 23 * 1024 * 1024
cdef int64_t MAX_CONTAINER_IMAGE_THRESHOLD = 1000 * 1024 * 1024
cdef int64_t MAX_NODE_SCORE = 100

# taint effects as interned by the node table
cdef enum:
    EFFECT_NO_SCHEDULE = 0
    EFFECT_PREFER_NO_SCHEDULE = 1
    EFFECT_NO_EXECUTE = 2

# Host ports are packed as (ip id << 18) | (protocol << 16) | port; ip id 0 is 0.0.0.0.
cdef int64_t PORT_MASK = (1 << 18) - 1

# A scan round shorter than this runs on one thread: below it, sharing costs about what it saves.
cdef Py_ssize_t PARALLEL_MIN_NODES = 256
# Nodes per chunk of a shared scan round.
cdef Py_ssize_t CHUNK_NODES = 128

_EMPTY_I64 = np.zeros(0, np.int64)
_EMPTY_I32 = np.zeros(0, np.int32)
_EMPTY_U8 = np.zeros(0, np.uint8)


# ---- raw pointers of memoryviews (NULL for empty ones) ----------------------------------------
cdef inline int64_t* _i64(int64_t[::1] a) noexcept:
    return &a[0] if a.shape[0] > 0 else NULL

cdef inline int32_t* _i32(int32_t[::1] a) noexcept:
    return &a[0] if a.shape[0] > 0 else NULL

cdef inline uint8_t* _u8(uint8_t[::1] a) noexcept:
    return &a[0] if a.shape[0] > 0 else NULL

cdef inline int8_t* _i8(int8_t[::1] a) noexcept:
    return &a[0] if a.shape[0] > 0 else NULL


cdef class CompiledPod:
    def __cinit__(self):
        # every plugin fills its part; a disabled plugin leaves these empty defaults
        self.scalar_cols = self.scalar_vals = self.fit_score_req = self.balanced_req = _EMPTY_I64
        self.req_num = self.preferred_weights = self.host_ports = _EMPTY_I64
        self.tolerated = self.prefer_intolerable = _EMPTY_U8
        self.req_key = self.req_op = self.req_vals_start = self.req_vals_end = self.req_vals = _EMPTY_I32
        self.term_start = self.term_end = self.preferred_terms = self.images = _EMPTY_I32
        self.usage_cols = self.usage_vals = _EMPTY_I64
        self.selector_term = self.required_start = self.required_end = -1
        self.added_start = self.added_end = -1
        self.n_containers = 1


cdef void _load_pod(CompiledPod cp, PodView* p) noexcept:
    p.cpu, p.memory, p.ephemeral = cp.cpu, cp.memory, cp.ephemeral
    p.n_containers = cp.n_containers if cp.n_containers > 0 else 1
    p.has_scalar_entry = cp.has_scalar_entry
    p.tolerates_unschedulable = cp.tolerates_unschedulable
    p.has_node_affinity_filter = cp.has_node_affinity_filter
    p.skip_balanced = cp.skip_balanced
    p.skip_node_affinity_score = cp.skip_node_affinity_score
    p.n_scalars = cp.scalar_cols.shape[0]
    p.n_host_ports = cp.host_ports.shape[0]
    p.n_images = cp.images.shape[0]
    p.n_preferred = cp.preferred_terms.shape[0]
    p.n_taint_ids = cp.prefer_intolerable.shape[0]
    p.selector_term, p.required_start, p.required_end = cp.selector_term, cp.required_start, cp.required_end
    p.added_start, p.added_end = cp.added_start, cp.added_end
    p.scalar_cols, p.scalar_vals = _i64(cp.scalar_cols), _i64(cp.scalar_vals)
    p.fit_score_req, p.balanced_req = _i64(cp.fit_score_req), _i64(cp.balanced_req)
    p.tolerated, p.prefer_intolerable = _u8(cp.tolerated), _u8(cp.prefer_intolerable)
    p.req_key, p.req_op = _i32(cp.req_key), _i32(cp.req_op)
    p.req_vals_start, p.req_vals_end, p.req_vals = _i32(cp.req_vals_start), _i32(cp.req_vals_end), _i32(cp.req_vals)
    p.req_num = _i64(cp.req_num)
    p.term_start, p.term_end = _i32(cp.term_start), _i32(cp.term_end)
    p.preferred_terms, p.preferred_weights = _i32(cp.preferred_terms), _i64(cp.preferred_weights)
    p.host_ports, p.images = _i64(cp.host_ports), _i32(cp.images)


# ---- arithmetic ---------------------------------------------------------------------------------
cdef inline int64_t _div_small(int64_t a, int64_t b) noexcept nogil:
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


cdef inline int64_t _div_recip(int64_t a, int64_t b, double inv_b) noexcept nogil:
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


cdef inline uint64_t _next_random(uint64_t* state) noexcept nogil:
    """splitmix64: small, fast, reproducible from a seed."""
    state[0] += <uint64_t>0x9E3779B97F4A7C15
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)


# ---- NodeAffinity --------------------------------------------------------------------------------
cdef inline bint _requirement_matches(Table* t, PodView* p, Py_ssize_t row, Py_ssize_t r) noexcept nogil:
    cdef int32_t v = t.labels[row * t.n_keys + p.req_key[r]]
    cdef int op = p.req_op[r]
    cdef Py_ssize_t j
    cdef bint found = False
    if op == OP_EXISTS:
        return v >= 0
    if op == OP_DOES_NOT_EXIST:
        return v < 0
    if op == OP_IN or op == OP_NOT_IN:
        if v >= 0:
            for j in range(p.req_vals_start[r], p.req_vals_end[r]):
                if p.req_vals[j] == v:
                    found = True
                    break
        return found if op == OP_IN else not found
    # Gt / Lt: the node's value must parse as an int64 (semantics §3.4)
    if v < 0 or not t.value_is_int[v]:
        return False
    if op == OP_GT:
        return t.value_int[v] > p.req_num[r]
    return t.value_int[v] < p.req_num[r]


cdef inline bint _term_matches(Table* t, PodView* p, Py_ssize_t row, Py_ssize_t term) noexcept nogil:
    cdef Py_ssize_t r
    for r in range(p.term_start[term], p.term_end[term]):
        if not _requirement_matches(t, p, row, r):
            return False
    return True


cdef inline bint _node_affinity_matches(Table* t, PodView* p, Py_ssize_t row, int64_t* detail) noexcept nogil:
    """NodeAffinity Filter; a node failing the profile's addedAffinity gets detail 1."""
    cdef Py_ssize_t term
    cdef bint ok
    if p.added_start >= 0:
        ok = False
        for term in range(p.added_start, p.added_end):
            if _term_matches(t, p, row, term):
                ok = True
                break
        if not ok:
            detail[0] = 1
            return False
    if p.selector_term >= 0 and not _term_matches(t, p, row, p.selector_term):
        return False
    if p.required_start < 0:
        return True
    for term in range(p.required_start, p.required_end):
        if _term_matches(t, p, row, term):
            return True
    return False


cdef inline int64_t _node_affinity_score(Table* t, PodView* p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t total = 0
    for i in range(p.n_preferred):
        if _term_matches(t, p, row, p.preferred_terms[i]):
            total += p.preferred_weights[i]
    return total


# ---- NodePorts, TaintToleration -----------------------------------------------------------------
cdef inline bint _ports_conflict(Table* t, PodView* p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t a, b
    cdef int64_t w, u, wip, uip
    cdef int64_t* used = t.ports + row * t.port_w
    for a in range(p.n_host_ports):
        w = p.host_ports[a]
        wip = w >> 18
        for b in range(t.n_ports[row]):
            u = used[b]
            if (u & PORT_MASK) == (w & PORT_MASK):
                uip = u >> 18
                if wip == 0 or uip == 0 or uip == wip:
                    return True
    return False


cdef inline int64_t _untolerated_taint(Table* t, PodView* p, Py_ssize_t row) noexcept nogil:
    """The first NoSchedule/NoExecute taint not tolerated, or -1."""
    cdef Py_ssize_t b
    cdef int32_t tid
    cdef int32_t* taints = t.taints + row * t.taint_w
    for b in range(t.n_taints[row]):
        tid = taints[b]
        if t.taint_effect[tid] != EFFECT_PREFER_NO_SCHEDULE and not p.tolerated[tid]:
            return tid
    return -1


cdef inline int64_t _taint_score(Table* t, PodView* p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t b
    cdef int32_t tid
    cdef int64_t count = 0
    cdef int32_t* taints = t.taints + row * t.taint_w
    for b in range(t.n_taints[row]):
        tid = taints[b]
        if t.taint_effect[tid] == EFFECT_PREFER_NO_SCHEDULE and p.prefer_intolerable[tid]:
            count += 1
    return count


# ---- NodeResourcesFit ---------------------------------------------------------------------------
cdef inline int _fit_filter(Table* t, PodView* p, Py_ssize_t row, int64_t* detail) noexcept nogil:
    """NodeResourcesFit Filter: the status code; reasons as a bitmask of resource columns."""
    cdef uint64_t bits = 0
    cdef bint unresolvable = False
    cdef Py_ssize_t s
    cdef int64_t c, v
    cdef int64_t* alloc = t.alloc + row * t.n_res
    cdef int64_t* req = t.requested + row * t.n_res
    if t.pod_count[row] + 1 > t.allowed_pods[row]:
        bits |= (<uint64_t>1) << TOO_MANY_PODS_BIT
    if p.cpu != 0 or p.memory != 0 or p.ephemeral != 0 or p.has_scalar_entry:
        if p.cpu > 0 and p.cpu > alloc[0] - req[0]:
            bits |= 1
            unresolvable = unresolvable or p.cpu > alloc[0]
        if p.memory > 0 and p.memory > alloc[1] - req[1]:
            bits |= 2
            unresolvable = unresolvable or p.memory > alloc[1]
        if p.ephemeral > 0 and p.ephemeral > alloc[2] - req[2]:
            bits |= 4
            unresolvable = unresolvable or p.ephemeral > alloc[2]
        for s in range(p.n_scalars):
            c = p.scalar_cols[s]
            v = p.scalar_vals[s]
            if v > alloc[c] - req[c]:
                bits |= (<uint64_t>1) << c
                unresolvable = unresolvable or v > alloc[c]
    if bits == 0:
        return C_SUCCESS
    detail[0] = <int64_t>bits
    return C_UNRESOLVABLE if unresolvable else C_UNSCHEDULABLE


cdef inline int64_t _broken_linear(Config* c, int64_t x) noexcept nogil:
    """helper.BuildBrokenLinearFunction over the RequestedToCapacityRatio shape."""
    cdef Py_ssize_t i
    for i in range(c.n_shape):
        if x <= c.shape_util[i]:
            if i == 0:
                return c.shape_score[0]
            return c.shape_score[i - 1] + (c.shape_score[i] - c.shape_score[i - 1]) * \
                (x - c.shape_util[i - 1]) / (c.shape_util[i] - c.shape_util[i - 1])
    return c.shape_score[c.n_shape - 1]


cdef inline bint _alloc_req(Table* t, Py_ssize_t row, int64_t col, int64_t pod_req, bint non_zero,
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


cdef inline int64_t _fit_score(Table* t, PodView* p, Config* c, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t col, alloc = 0, req = 0, w, s, total = 0, wsum = 0
    cdef double inv
    for i in range(c.n_strategy):
        col = c.strategy_cols[i]
        if not _alloc_req(t, row, col, p.fit_score_req[i], True, &alloc, &req):
            continue
        inv = t.inv_alloc[row * t.n_res + col]
        w = c.strategy_weights[i]
        if c.strategy == LEAST_ALLOCATED:
            s = 0 if req > alloc else _div_recip((alloc - req) * MAX_NODE_SCORE, alloc, inv)
        elif c.strategy == MOST_ALLOCATED:
            s = _div_recip((alloc if req > alloc else req) * MAX_NODE_SCORE, alloc, inv)
        else:
            s = _broken_linear(c, 100 if req > alloc else _div_recip(req * 100, alloc, inv))
            if s <= 0:
                continue
        total += s * w
        wsum += w
    if wsum == 0:
        return 0
    if c.strategy == REQUESTED_TO_CAPACITY_RATIO:
        return <int64_t>c_round(<double>total / <double>wsum)
    return _div_recip(total, wsum, c.recip[wsum]) if wsum < c.n_recip else total / wsum


cdef inline bint _balanced_fraction(Table* t, PodView* p, Config* c, Py_ssize_t row, Py_ssize_t i,
                                    double* f) noexcept nogil:
    """The i-th configured resource's requested/allocatable fraction (capped at 1), or False
    if the resource is left out."""
    cdef int64_t alloc = 0, req = 0
    if not _alloc_req(t, row, c.balanced_cols[i], p.balanced_req[i], False, &alloc, &req):
        return False
    f[0] = <double>req / <double>alloc
    if f[0] > 1:
        f[0] = 1
    return True


cdef inline int64_t _balanced_score(Table* t, PodView* p, Config* c, Py_ssize_t row) noexcept nogil:
    """BalancedAllocation: 100 * (1 - standard deviation of the fractions); the usual case of at
    most two resources needs no scratch array."""
    cdef Py_ssize_t i
    cdef int n = 0
    cdef double f = 0.0, f0 = 0.0, std = 0.0
    if c.n_balanced > 2:
        return _balanced_score_n(t, p, c, row)
    for i in range(c.n_balanced):
        if _balanced_fraction(t, p, c, row, i, &f):
            if n == 0:
                f0 = f
            else:
                std = fabs((f0 - f) / 2)
            n += 1
    return <int64_t>((1 - std) * <double>MAX_NODE_SCORE)


cdef int64_t _balanced_score_n(Table* t, PodView* p, Config* c, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t i
    cdef int n = 0
    cdef double total = 0.0, mean, acc, std = 0.0
    cdef double fr[64]
    for i in range(c.n_balanced):
        if _balanced_fraction(t, p, c, row, i, &fr[n]):
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


# ---- ImageLocality --------------------------------------------------------------------------------
cdef inline int64_t _image_score(Table* t, PodView* p, Py_ssize_t row, int64_t n_nodes) noexcept nogil:
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
    return _div_small(MAX_NODE_SCORE * (total - MIN_IMAGE_THRESHOLD), max_t - MIN_IMAGE_THRESHOLD)


# ---- the Filter plugins, in profile order ------------------------------------------------------
cdef inline int _spread_filter(Table* t, PodView* p, Py_ssize_t row, int64_t* detail) noexcept nogil:
    """PodTopologySpread Filter: 1 the node lacks a constraint's topology key (UU), 2 placing the
    pod there would exceed maxSkew (U) -- from domain counts, or from a per-node status."""
    cdef Py_ssize_t i
    cdef int32_t v
    cdef int8_t s
    if p.n_spread >= 0:
        for i in range(p.n_spread):
            v = t.labels[row * t.n_keys + p.spread_col[i]]
            if v < 0:
                detail[0] = 1
                return C_UNRESOLVABLE
            if t.domains[p.spread_dom[i] * t.dom_stride + v] > p.spread_limit[i]:
                detail[0] = 2
                return C_UNSCHEDULABLE
        return C_SUCCESS
    s = p.spread_status[row]
    if s == 0:
        return C_SUCCESS
    detail[0] = s
    return C_UNRESOLVABLE if s == 1 else C_UNSCHEDULABLE


cdef inline int _volume_filter(PodView* p, int fid, Py_ssize_t row, int64_t* detail) noexcept nogil:
    """A volume plugin's Filter, computed per row at PreFilter (only pods with volumes)."""
    cdef int8_t s = p.volume_status[fid - F_VOLUME_RESTRICTIONS][row]
    if s == 0:
        return C_SUCCESS
    detail[0] = s & (VOLUME_UU - 1)
    return C_UNRESOLVABLE if s & VOLUME_UU else C_UNSCHEDULABLE


cdef inline int64_t _custom_call(custom_fn fn, Table* t, PodView* p, Py_ssize_t row,
                                 const int64_t* params, int64_t n_params) noexcept nogil:
    return fn(row, t.n_rows, t.n_res, t.n_keys, t.alloc, t.requested, t.labels, t.pod_count,
              t.allowed_pods, p.custom.pod_requests, n_params, params)


cdef inline int _custom_filter(Table* t, PodView* p, int k, Py_ssize_t row) noexcept nogil:
    """A custom Filter plugin on one node (slot k): native function or per-row array."""
    cdef Custom* c = p.custom
    cdef int64_t r
    if c.filter_status[k] != NULL:
        r = c.filter_status[k][row]
    else:
        r = _custom_call(c.filter_fn[k], t, p, row, c.filter_params[k], c.n_filter_params[k])
    if r == 0:
        return C_SUCCESS
    return C_UNRESOLVABLE if r == 2 else C_UNSCHEDULABLE


cdef inline int _ext_filter(Table* t, PodView* p, Py_ssize_t row, int64_t* detail) noexcept nogil:
    """InterPodAffinity Filter from per-topology-domain counts: every affinity term's domain
    must hold a matching pod (UU), no anti-affinity term's (U), no existing pod's (U)."""
    cdef Py_ssize_t i
    cdef int kind
    cdef int32_t v
    cdef int64_t count
    for i in range(p.n_ipa_filter):
        kind = p.ipa_kind[i]
        v = t.labels[row * t.n_keys + p.ipa_col[i]]
        if v < 0:
            if kind == 1:                  # the node lacks an affinity term's topology key
                detail[0] = 1
                return C_UNRESOLVABLE
            continue
        count = t.domains[p.ipa_dom[i] * t.dom_stride + v]
        if kind == 1:
            if count <= 0 and not p.ipa_self_affine:
                detail[0] = 1
                return C_UNRESOLVABLE
        elif count > 0:
            detail[0] = kind
            return C_UNSCHEDULABLE
    return C_SUCCESS


cdef inline int64_t _ipa_score(Table* t, PodView* p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t i
    cdef int32_t v
    cdef int64_t total = 0
    for i in range(p.n_ipa_score):
        v = t.labels[row * t.n_keys + p.ipa_score_col[i]]
        if v >= 0:
            total += p.ipa_score_weight[i] * t.domains[p.ipa_score_dom[i] * t.dom_stride + v]
    return total


cdef inline int _run_filter(int fid, Table* t, PodView* p, Cycle* y, Py_ssize_t row,
                            int64_t* detail) noexcept nogil:
    """One Filter plugin on one node: its status code (detail: taint id / resource bits)."""
    if fid == F_NODE_UNSCHEDULABLE:
        return C_UNRESOLVABLE if t.unschedulable[row] else C_SUCCESS
    if fid == F_NODE_NAME:
        return C_UNRESOLVABLE if y.node_name_row != row else C_SUCCESS
    if fid == F_TAINT_TOLERATION:
        if t.n_taints[row]:
            detail[0] = _untolerated_taint(t, p, row)
            if detail[0] >= 0:
                return C_UNRESOLVABLE
            detail[0] = 0
        return C_SUCCESS
    if fid == F_NODE_AFFINITY:
        return C_SUCCESS if _node_affinity_matches(t, p, row, detail) else C_UNRESOLVABLE
    if fid == F_NODE_PORTS:
        return C_UNSCHEDULABLE if _ports_conflict(t, p, row) else C_SUCCESS
    if fid == F_INTER_POD_AFFINITY:
        return _ext_filter(t, p, row, detail)
    if fid == F_POD_TOPOLOGY_SPREAD:
        return _spread_filter(t, p, row, detail)
    if F_VOLUME_RESTRICTIONS <= fid <= F_VOLUME_ZONE:
        return _volume_filter(p, fid, row, detail)
    if fid >= F_CUSTOM_0:
        return _custom_filter(t, p, fid - F_CUSTOM_0, row)
    return _fit_filter(t, p, row, detail)


cdef int _volume_filters(PodView* p, Cycle* y, Py_ssize_t row, int64_t* detail, int* plugin) noexcept nogil:
    """The volume Filters in id order (out of line: most pods have no volumes)."""
    cdef int k, code
    for k in range(F_VOLUME_RESTRICTIONS, F_VOLUME_ZONE + 1):
        if y.active[k]:
            code = _volume_filter(p, k, row, detail)
            if code != C_SUCCESS:
                plugin[0] = k
                return code
    return C_SUCCESS


cdef int _custom_filters(Table* t, PodView* p, Cycle* y, Py_ssize_t row, int* plugin) noexcept nogil:
    """The custom Filters in slot order (out of line, like the volume Filters)."""
    cdef int k, code
    for k in range(N_CUSTOM):
        if y.active[F_CUSTOM_0 + k]:
            code = _custom_filter(t, p, k, row)
            if code != C_SUCCESS:
                plugin[0] = F_CUSTOM_0 + k
                return code
    return C_SUCCESS


cdef inline int _filter_node(Table* t, PodView* p, Cycle* y, Py_ssize_t row, int64_t* detail,
                             int* plugin) noexcept nogil:
    """The Filter plugins that can act on this pod, in profile order; the first non-success
    status stops the node (only that plugin's status is recorded)."""
    cdef int k, code
    detail[0] = 0
    if y.in_id_order:
        # the default order (ids follow it): straight-line code, which the compiler inlines
        if y.active[F_NODE_UNSCHEDULABLE] and t.unschedulable[row]:
            plugin[0] = F_NODE_UNSCHEDULABLE
            return C_UNRESOLVABLE
        if y.active[F_NODE_NAME] and y.node_name_row != row:
            plugin[0] = F_NODE_NAME
            return C_UNRESOLVABLE
        if y.active[F_TAINT_TOLERATION] and t.n_taints[row]:
            detail[0] = _untolerated_taint(t, p, row)
            if detail[0] >= 0:
                plugin[0] = F_TAINT_TOLERATION
                return C_UNRESOLVABLE
            detail[0] = 0
        if y.active[F_NODE_AFFINITY] and not _node_affinity_matches(t, p, row, detail):
            plugin[0] = F_NODE_AFFINITY
            return C_UNRESOLVABLE
        if y.active[F_NODE_PORTS] and _ports_conflict(t, p, row):
            plugin[0] = F_NODE_PORTS
            return C_UNSCHEDULABLE
        if y.active[F_NODE_RESOURCES_FIT]:
            code = _fit_filter(t, p, row, detail)
            if code != C_SUCCESS:
                plugin[0] = F_NODE_RESOURCES_FIT
                return code
        if y.any_volume:
            code = y.volume_filters(p, y, row, detail, plugin)
            if code != C_SUCCESS:
                return code
        if y.active[F_POD_TOPOLOGY_SPREAD]:
            code = _spread_filter(t, p, row, detail)
            if code != C_SUCCESS:
                plugin[0] = F_POD_TOPOLOGY_SPREAD
                return code
        if y.active[F_INTER_POD_AFFINITY]:
            code = _ext_filter(t, p, row, detail)
            if code != C_SUCCESS:
                plugin[0] = F_INTER_POD_AFFINITY
                return code
        if y.any_custom:
            return y.custom_filters(t, p, y, row, plugin)
        return C_SUCCESS
    for k in range(y.n_filters):
        code = _run_filter(y.filters[k], t, p, y, row, detail)
        if code != C_SUCCESS:
            plugin[0] = y.filters[k]
            return code
    return C_SUCCESS


cdef void _compact(Buffers* b, Py_ssize_t src, Py_ssize_t dst, Py_ssize_t count) noexcept nogil:
    """Moves `count` feasible entries (row, position, raw scores, partial total) down to dst."""
    cdef Py_ssize_t i, s
    if src == dst:
        return
    for i in range(count):
        b.feasible[dst + i] = b.feasible[src + i]
        b.feas_pos[dst + i] = b.feas_pos[src + i]
        b.totals[dst + i] = b.totals[src + i]
        for s in range(N_SCORES):
            b.raw[s * b.cap + dst + i] = b.raw[s * b.cap + src + i]


cdef Py_ssize_t _eval_range(Table* t, PodView* p, Config* c, Cycle* y, Buffers* b,
                            const int32_t* scan, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t count,
                            Py_ssize_t offset, Py_ssize_t out, Py_ssize_t limit) noexcept nogil:
    """Filters `count` scan positions from `pos` (wrapping), stopping after `limit` feasible.

    A feasible node goes to index `out` + k of the feasible buffers with its position
    (`offset` + i, relative to the cycle's start), its raw scores and the weighted sum of
    the plugins that need no normalisation. Returns the number of feasible nodes.
    """
    cdef Py_ssize_t i, row, j, f = 0, cap = b.cap
    cdef int code, k, plugin = 0
    cdef int64_t detail, v, total
    cdef int64_t* raw = b.raw
    cdef int64_t* w = c.weights
    for i in range(count):
        if f >= limit:
            break
        row = scan[pos]
        pos += 1
        if pos == n:
            pos = 0
        code = _filter_node(t, p, y, row, &detail, &plugin)
        b.st_code[row] = code
        if code != C_SUCCESS:
            b.st_plugin[row] = plugin
            b.st_detail[row] = detail
            continue
        j = out + f
        f += 1
        b.feasible[j] = row
        b.feas_pos[j] = offset + i
        total = 0
        if y.use[S_TAINT_TOLERATION] and not y.zero[S_TAINT_TOLERATION]:
            raw[S_TAINT_TOLERATION * cap + j] = _taint_score(t, p, row)
        if y.use[S_NODE_AFFINITY]:
            raw[S_NODE_AFFINITY * cap + j] = _node_affinity_score(t, p, row)
        if y.use[S_NODE_RESOURCES_FIT]:
            v = _fit_score(t, p, c, row)
            raw[S_NODE_RESOURCES_FIT * cap + j] = v
            total += w[S_NODE_RESOURCES_FIT] * v
        if y.use[S_BALANCED_ALLOCATION]:
            v = _balanced_score(t, p, c, row)
            raw[S_BALANCED_ALLOCATION * cap + j] = v
            total += w[S_BALANCED_ALLOCATION] * v
        if y.use[S_INTER_POD_AFFINITY]:
            raw[S_INTER_POD_AFFINITY * cap + j] = _ipa_score(t, p, row)
        if y.use[S_IMAGE_LOCALITY] and not y.zero[S_IMAGE_LOCALITY]:
            v = _image_score(t, p, row, y.n_all_nodes)
            raw[S_IMAGE_LOCALITY * cap + j] = v
            total += w[S_IMAGE_LOCALITY] * v
        b.totals[j] = total
    return f



cdef void _eval_chunk(void* ctx, int64_t k) noexcept nogil:
    """One chunk of a scan round (run on either thread of the pool)."""
    cdef Round* r = <Round*>ctx
    cdef Py_ssize_t lo = k * r.chunk
    cdef Py_ssize_t count = r.size - lo if r.size - lo < r.chunk else r.chunk
    r.counts[k] = _eval_range(r.t, r.p, r.c, r.y, r.b, r.scan, r.n, (r.pos + lo) % r.n, count,
                              r.offset + lo, r.out + lo, r.limit)


cdef class NodeKernel:
    """Raw views of the node table plus the reused per-cycle buffers."""

    def bind(self, table):
        """(Re)binds the table's columns; called whenever the table reallocates."""
        cdef int64_t[:, ::1] alloc = table.alloc, requested = table.requested, nonzero = table.nonzero
        cdef double[:, ::1] inv_alloc = table.inv_alloc
        cdef int64_t[::1] pod_count = table.pod_count, allowed = table.allowed_pods, order = table.order_key
        cdef int64_t[::1] generation = table.generation
        cdef uint8_t[::1] unsched = table.unschedulable, is_int = table.value_is_int
        cdef int32_t[:, ::1] labels = table.labels, taints = table.taints, images = table.images
        cdef int32_t[:, ::1] image_nn = table.image_nn
        cdef int32_t[::1] n_taints = table.n_taints, n_ports = table.n_ports, n_images = table.n_images
        cdef int8_t[::1] effect = table.taint_effect
        cdef int64_t[:, ::1] ports = table.ports
        cdef int64_t[::1] image_size = table.image_size, value_int = table.value_int
        cdef int64_t[::1] image_count = table.image_count
        cdef int64_t[:, ::1] domains = table.domains
        # keep the arrays alive as long as the raw pointers are used
        self._arrays = (table.domains, table.image_count, table.generation, table.inv_alloc, table.alloc, table.requested, table.nonzero, table.pod_count, table.allowed_pods,
                        table.order_key, table.unschedulable, table.value_is_int, table.labels,
                        table.taints, table.images, table.image_nn, table.n_taints, table.n_ports,
                        table.n_images, table.taint_effect, table.ports, table.image_size, table.value_int)
        t = &self.t
        t.n_res, t.n_keys = alloc.shape[1], labels.shape[1]
        t.taint_w, t.port_w, t.image_w = taints.shape[1], ports.shape[1], images.shape[1]
        t.alloc, t.requested, t.nonzero = &alloc[0, 0], &requested[0, 0], &nonzero[0, 0]
        t.inv_alloc = &inv_alloc[0, 0]
        t.pod_count, t.allowed_pods, t.order_key = &pod_count[0], &allowed[0], &order[0]
        t.generation = &generation[0]
        t.unschedulable, t.labels = &unsched[0], &labels[0, 0]
        t.taints, t.n_taints, t.taint_effect = &taints[0, 0], &n_taints[0], &effect[0]
        t.ports, t.n_ports = &ports[0, 0], &n_ports[0]
        t.images, t.image_nn, t.n_images = &images[0, 0], &image_nn[0, 0], &n_images[0]
        t.image_size, t.value_int, t.value_is_int = &image_size[0], &value_int[0], &is_int[0]
        t.image_count = &image_count[0]
        t.domains, t.dom_stride = &domains[0, 0], domains.shape[1]
        t.n_rows = alloc.shape[0]
        cap = alloc.shape[0]
        if self.cap != cap:
            self.cap = cap
            self.st_code = np.zeros(cap, np.int8)
            self.st_plugin = np.zeros(cap, np.int8)
            self.st_detail = np.zeros(cap, np.int64)
            self.feasible = np.zeros(cap, np.int32)
            self.raw_scores = np.zeros((N_SCORES, cap), np.int64)
            self.scores = np.zeros((N_SCORES, cap), np.int64)
            self.totals = np.zeros(cap, np.int64)
            self.feas_pos = np.zeros(cap, np.int32)
            self.chunk_counts = np.zeros(cap // CHUNK_NODES + 2, np.intp)
        b = &self.b
        b.cap = cap
        b.st_code, b.st_plugin, b.st_detail = &self.st_code[0], &self.st_plugin[0], &self.st_detail[0]
        b.feasible, b.feas_pos, b.totals = &self.feasible[0], &self.feas_pos[0], &self.totals[0]
        b.raw = &self.raw_scores[0, 0]
        self.hist_plugin = np.zeros(N_FILTERS, np.int64)
        self.hist_detail = np.zeros((N_FILTERS, 16), np.int64)
        self.hist_taint = np.zeros(effect.shape[0], np.int64)
        self.hist_fit = np.zeros(64, np.int64)
        self.score_ran = np.zeros(N_SCORES, np.uint8)
        self.score_zero = np.zeros(N_SCORES, np.uint8)

    def __cinit__(self):
        self.volume_arrays = [None] * N_VOLUME_FILTERS
        self.custom_arrays = {}
        self.custom_pod_requests = np.zeros(8, np.int64)
        self.n_pts = -1
        self.pts_log = np.zeros(1, np.float64)
        self.pts_mark = np.zeros(1, np.int64)
        self.n_spread = -1
        self.spread_col = self.spread_dom = _EMPTY_I32
        self.spread_limit = _EMPTY_I64
        self.n_ipa_filter = self.n_ipa_score = -1
        self.ipa_kind = np.zeros(0, np.int8)
        self.ipa_col = self.ipa_dom = self.ipa_score_col = self.ipa_score_dom = _EMPTY_I32
        self.ipa_score_weight = _EMPTY_I64
        self.filter_order = _EMPTY_I32
        self.score_enabled = np.zeros(N_SCORES, np.uint8)
        self.weights = np.zeros(N_SCORES, np.int64)
        self.strategy_cols = self.balanced_cols = _EMPTY_I32
        self.strategy_weights = _EMPTY_I64
        self.shape_util = self.shape_score = np.zeros(1, np.int64)
        # 1/w for the weight sums of NodeResourcesFit's average (index 0 unused)
        self.recip = 1.0 / np.arange(1, 1025, dtype=np.float64)
        self.recip = np.concatenate(([0.0], np.asarray(self.recip)))

    def __dealloc__(self):
        ks_pool_stop(&self.pool)

    cdef bint _start_pool(self) noexcept:
        """Starts the helper thread once; False if it cannot run (then scans stay sequential)."""
        if not self.pool_state:
            self.pool_state = 1 if ks_pool_start(&self.pool) == 0 else -1
        return self.pool_state == 1

    def seed(self, seed):
        self.rng_state = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)

    def set_topology_spread(self, status, terms=None):
        """PodTopologySpread's PreFilter result for the next cycle(s): a per-row status (int8),
        or terms (label column int32[], domain row int32[], count limit int64[]); both None:
        PreFilter skips."""
        self.has_spread_status = status is not None
        if status is not None:
            self.spread_status = status
        self.n_spread = -1
        if terms is not None:
            self.spread_col, self.spread_dom, self.spread_limit = terms
            self.n_spread = self.spread_col.shape[0]

    def set_volume_status(self, int fid, status):
        """A volume plugin's PreFilter result for the next cycle(s): per-row int8 status
        (0 passes, else reason bits | VOLUME_UU), or None: the plugin skips."""
        cdef Py_ssize_t k = fid - F_VOLUME_RESTRICTIONS
        cdef int8_t[::1] arr
        if not 0 <= k < N_VOLUME_FILTERS:
            raise ValueError(f"not a volume filter id: {fid}")
        if status is None:
            self.volume_arrays[k] = None
            self.volume_ptr[k] = NULL
            return
        if status.shape[0] < self.cap:
            raise ValueError("a volume status needs one entry per node table row")
        arr = status
        self.volume_arrays[k] = status
        self.volume_ptr[k] = &arr[0]

    def set_spread_score(self, terms, bint require_all=True, int32_t empty_value=-1, Py_ssize_t n_values=0,
                         log_table=None):
        """PodTopologySpread's PreScore result for the kernel to score, or None (the Score is
        skipped or done in Python). terms: [(label column, domain row or -1, maxSkew,
        row counts int64[] for a hostname constraint else None)]; n_values: label values
        interned; log_table[i] = go_log(i + 2) for every size a cycle can see."""
        cdef Py_ssize_t i
        cdef int64_t[::1] rc
        if terms is None:
            self.n_pts = -1
            self.pts_arrays = None
            return
        if len(terms) > MAX_SPREAD_SCORE_TERMS:
            raise ValueError("too many spread score constraints for the kernel")
        keep = []
        for i, (col, dom, skew, rows) in enumerate(terms):
            self.pts_col[i], self.pts_dom[i], self.pts_skew[i] = col, dom, <double>(skew - 1)
            self.pts_rows[i] = NULL
            if rows is not None:
                if rows.shape[0] < self.cap:
                    raise ValueError("spread row counts are shorter than the node table")
                rc = rows
                self.pts_rows[i] = &rc[0]
                keep.append(rows)
        self.pts_arrays = keep
        self.n_pts = len(terms)
        self.pts_require_all, self.pts_empty = require_all, empty_value
        if log_table is not None:
            self.pts_log = log_table
        if self.pts_log.shape[0] <= self.cap:
            raise ValueError("the spread log table is shorter than the node table")
        if self.pts_mark.shape[0] < n_values or self.pts_mark.shape[0] <= empty_value:
            self.pts_mark = np.zeros(max(n_values, empty_value + 1, 2 * self.pts_mark.shape[0]), np.int64)
            self.pts_epoch = 0

    cdef void _custom_score(self, Py_ssize_t s, Py_ssize_t nf) noexcept nogil:
        """A native custom Score over the feasible nodes (one call); its `scores` row:
        DefaultNormalizeScore, or the raw score."""
        cdef Table* t = &self.t
        cdef Custom* c = &self.custom
        cdef Py_ssize_t j
        cdef int64_t hi = 0
        cdef int64_t* raw = &self.raw_scores[S_CUSTOM_0 + s, 0]
        cdef int64_t* norm = &self.scores[S_CUSTOM_0 + s, 0]
        c.score_fn[s](nf, &self.feasible[0], raw, t.n_rows, t.n_res, t.n_keys, t.alloc, t.requested,
                      t.labels, t.pod_count, t.allowed_pods, c.pod_requests, c.n_score_params[s],
                      c.score_params[s])
        if c.score_normalize[s]:
            for j in range(nf):
                if raw[j] > hi:
                    hi = raw[j]
        for j in range(nf):
            norm[j] = _div_small(MAX_NODE_SCORE * raw[j], hi) if hi > 0 else raw[j]

    cdef void _custom_pod_requests(self, CompiledPod cp) noexcept:
        cdef Py_ssize_t i, n = self.t.n_res
        if self.custom_pod_requests.shape[0] < n:
            self.custom_pod_requests = np.zeros(2 * n, np.int64)
        for i in range(n):
            self.custom_pod_requests[i] = 0
        for i in range(cp.usage_cols.shape[0]):
            if cp.usage_cols[i] < n:
                self.custom_pod_requests[cp.usage_cols[i]] += cp.usage_vals[i]
        self.custom.pod_requests = &self.custom_pod_requests[0]

    def set_custom_filter(self, int k, Py_ssize_t address=0, params=None, status=None):
        """Custom Filter slot k: a native function's address (with its int64 params), or a
        per-row int8 status (0 passes, 1 Unschedulable, 2 UnschedulableAndUnresolvable);
        neither: the slot is off."""
        self._custom_slot(("filter", k), k, address, params, status, True, False)

    def set_custom_score(self, int k, Py_ssize_t address=0, params=None, bint normalize=False):
        """Custom Score slot k: a native function's address (0: the slot is off)."""
        self._custom_slot(("score", k), k, address, params, None, False, normalize)

    cdef _custom_slot(self, key, int k, Py_ssize_t address, params, values, bint is_filter, bint normalize):
        cdef int64_t[::1] pv
        cdef int8_t[::1] st
        if not 0 <= k < N_CUSTOM:
            raise ValueError(f"custom plugin slot {k} out of range (0-{N_CUSTOM - 1})")
        if values is not None and values.shape[0] < self.cap:
            raise ValueError("a custom plugin's per-row array needs one entry per node table row")
        params = np.zeros(1, np.int64) if params is None else np.ascontiguousarray(params, np.int64)
        if params.shape[0] == 0:
            params = np.zeros(1, np.int64)
        pv = params
        if address == 0 and values is None:
            self.custom_arrays.pop(key, None)
        else:
            self.custom_arrays[key] = (params, values)
        if is_filter:
            self.custom.filter_fn[k] = <custom_fn><void*>address
            self.custom.filter_params[k], self.custom.n_filter_params[k] = &pv[0], params.shape[0]
            self.custom.filter_status[k] = NULL
            if values is not None:
                st = values
                self.custom.filter_status[k] = &st[0]
        else:
            self.custom.score_fn[k] = <custom_batch_fn><void*>address
            self.custom.score_params[k], self.custom.n_score_params[k] = &pv[0], params.shape[0]
            self.custom.score_normalize[k] = normalize

    cdef void _spread_score(self, Py_ssize_t nf) noexcept nogil:
        """PodTopologySpread PreScore + Score + NormalizeScore over the feasible nodes."""
        cdef Table* t = &self.t
        cdef Py_ssize_t j, i, row, n_ok = 0
        cdef int32_t v
        cdef int64_t size, cnt, r, lo = INT64_MAX, hi = INT64_MIN
        cdef double x, a, f
        cdef double w[MAX_SPREAD_SCORE_TERMS]
        cdef int64_t* raw = &self.raw_scores[S_POD_TOPOLOGY_SPREAD, 0]
        cdef int64_t* norm = &self.scores[S_POD_TOPOLOGY_SPREAD, 0]
        cdef bint ignored
        # a node lacking a constraint's key is ignored (raw 0, outside min/max) -- marked by -1
        for j in range(nf):
            row = self.feasible[j]
            ignored = False
            if self.pts_require_all:
                for i in range(self.n_pts):
                    if t.labels[row * t.n_keys + self.pts_col[i]] < 0:
                        ignored = True
            raw[j] = -1 if ignored else 0
            n_ok += not ignored
        # the topology normalizing weight: log(number of domains among the scored nodes + 2)
        for i in range(self.n_pts):
            if self.pts_dom[i] < 0:
                size = n_ok
            else:
                self.pts_epoch += 1
                size = 0
                for j in range(nf):
                    if raw[j] < 0:
                        continue
                    v = t.labels[self.feasible[j] * t.n_keys + self.pts_col[i]]
                    if v < 0:
                        v = self.pts_empty
                    if self.pts_mark[v] != self.pts_epoch:
                        self.pts_mark[v] = self.pts_epoch
                        size += 1
            w[i] = self.pts_log[size]
        for j in range(nf):
            if raw[j] < 0:
                raw[j] = 0
                norm[j] = -1
                continue
            row = self.feasible[j]
            x = 0.0
            for i in range(self.n_pts):
                v = t.labels[row * t.n_keys + self.pts_col[i]]
                if v < 0:
                    continue
                if self.pts_dom[i] < 0:
                    cnt = self.pts_rows[i][row]
                else:
                    cnt = t.domains[self.pts_dom[i] * t.dom_stride + v]
                x = x + (<double>cnt * w[i] + self.pts_skew[i])
            # math.Round: half away from zero
            a = fabs(x)
            f = floor(a)
            if a - f >= 0.5:
                f = f + 1.0
            r = <int64_t>copysign(f, x)
            raw[j] = r
            norm[j] = 0
            if r < lo:
                lo = r
            if r > hi:
                hi = r
        if hi < 0:
            hi = 0
        for j in range(nf):
            if norm[j] < 0:
                norm[j] = 0
            elif hi == 0:
                norm[j] = MAX_NODE_SCORE
            else:
                norm[j] = (MAX_NODE_SCORE * (hi + lo - raw[j])) // hi

    def set_inter_pod_affinity(self, filter_terms, self_affine, score_terms):
        """InterPodAffinity's PreFilter / PreScore results for the next cycle(s).

        filter_terms: (kind int8[], label column int32[], domain row int32[]) or None (Skip);
        score_terms: (label column int32[], domain row int32[], weight int64[]) or None (Skip).
        """
        if filter_terms is None:
            self.n_ipa_filter = -1
        else:
            self.ipa_kind, self.ipa_col, self.ipa_dom = filter_terms
            self.n_ipa_filter = self.ipa_kind.shape[0]
        self.ipa_self_affine = self_affine
        if score_terms is None:
            self.n_ipa_score = -1
        else:
            self.ipa_score_col, self.ipa_score_dom, self.ipa_score_weight = score_terms
            self.n_ipa_score = self.ipa_score_col.shape[0]

    def place(self, CompiledPod cp, Py_ssize_t row):
        """Assume: adds a compiled pod's requests to a node row and bumps its generation.

        Returns whether the row lists images (its ImageLocality NumNodes copy goes stale).
        """
        cdef Py_ssize_t i
        cdef Table* t = &self.t
        for i in range(cp.usage_cols.shape[0]):
            t.requested[row * t.n_res + cp.usage_cols[i]] += cp.usage_vals[i]
        t.nonzero[row * 2] += cp.usage_nz_cpu
        t.nonzero[row * 2 + 1] += cp.usage_nz_mem
        t.pod_count[row] += 1
        t.generation[row] += 1
        return t.n_images[row] > 0

    cdef void _load_config(self, Config* c) noexcept:
        c.strategy = self.strategy
        c.n_strategy = self.strategy_cols.shape[0]
        c.n_balanced = self.balanced_cols.shape[0]
        c.n_shape = self.shape_util.shape[0]
        c.strategy_cols, c.strategy_weights = _i32(self.strategy_cols), _i64(self.strategy_weights)
        c.shape_util, c.shape_score = _i64(self.shape_util), _i64(self.shape_score)
        c.balanced_cols, c.weights = _i32(self.balanced_cols), _i64(self.weights)
        c.filter_order, c.n_filter_order = _i32(self.filter_order), self.filter_order.shape[0]
        c.score_enabled = _u8(self.score_enabled)
        c.recip, c.n_recip = &self.recip[0], self.recip.shape[0]

    cdef void _begin(self, PodView* p, Config* c, Cycle* y, Py_ssize_t node_name_row,
                     int64_t n_all_nodes) noexcept:
        cdef Py_ssize_t s
        cdef int fid
        cdef bint acts
        # the profile's Filter plugins in order, less those that cannot reject this pod
        y.volume_filters, y.custom_filters = _volume_filters, _custom_filters
        y.n_filters = 0
        y.in_id_order = True
        y.any_volume = False
        y.any_custom = False
        for s in range(N_FILTERS):
            y.active[s] = False
        for s in range(c.n_filter_order):
            fid = c.filter_order[s]
            if fid == F_NODE_UNSCHEDULABLE:
                acts = not p.tolerates_unschedulable
            elif fid == F_NODE_NAME:
                acts = node_name_row != -1
            elif fid == F_NODE_AFFINITY:
                acts = p.has_node_affinity_filter
            elif fid == F_NODE_PORTS:
                acts = p.n_host_ports > 0
            elif fid == F_INTER_POD_AFFINITY:
                acts = p.n_ipa_filter >= 0
            elif fid == F_POD_TOPOLOGY_SPREAD:
                acts = p.spread_status != NULL or p.n_spread >= 0
            elif F_VOLUME_RESTRICTIONS <= fid <= F_VOLUME_ZONE:
                acts = p.volume_status[fid - F_VOLUME_RESTRICTIONS] != NULL
                y.any_volume = y.any_volume or acts
            elif fid >= F_CUSTOM_0:
                acts = p.custom.filter_fn[fid - F_CUSTOM_0] != NULL or p.custom.filter_status[fid - F_CUSTOM_0] != NULL
                y.any_custom = y.any_custom or acts
            else:
                acts = True
            if acts:
                if y.n_filters and y.filters[y.n_filters - 1] > fid:
                    y.in_id_order = False
                y.filters[y.n_filters] = fid
                y.n_filters += 1
                y.active[fid] = True
        y.node_name_row = node_name_row
        y.n_all_nodes = n_all_nodes
        for s in range(N_SCORES):
            y.use[s] = c.score_enabled[s]
        y.use[S_NODE_AFFINITY] = y.use[S_NODE_AFFINITY] and not p.skip_node_affinity_score
        y.use[S_BALANCED_ALLOCATION] = y.use[S_BALANCED_ALLOCATION] and not p.skip_balanced
        y.use[S_INTER_POD_AFFINITY] = y.use[S_INTER_POD_AFFINITY] and p.n_ipa_score >= 0
        y.any_custom_score = False
        for s in range(N_CUSTOM):
            y.use[S_CUSTOM_0 + s] = y.use[S_CUSTOM_0 + s] and p.custom.score_fn[s] != NULL
            y.any_custom_score = y.any_custom_score or y.use[S_CUSTOM_0 + s]
        # plugins that score 0 on every node need no per-node work: no PreferNoSchedule taint
        # this pod minds, no node with any of its images
        for s in range(N_SCORES):
            y.zero[s] = False
        y.zero[S_TAINT_TOLERATION] = True
        for s in range(p.n_taint_ids):
            if p.prefer_intolerable[s]:
                y.zero[S_TAINT_TOLERATION] = False
                break
        y.zero[S_IMAGE_LOCALITY] = True
        for s in range(p.n_images):
            if self.t.image_count[p.images[s]] > 0:
                y.zero[S_IMAGE_LOCALITY] = False
                break

    def run(self, CompiledPod cp, const int32_t[::1] scan, Py_ssize_t start, Py_ssize_t num_to_find,
            Py_ssize_t node_name_row, int64_t n_all_nodes, bint tie_first):
        """Filters nodes scan[(start + i) % len(scan)] until num_to_find pass, then scores them.

        Returns (chosen row or -1, number feasible, number processed). With `threads` > 1 the
        scan runs in rounds split between threads; results are merged in scan order, so they
        are identical to the sequential scan's.
        """
        cdef PodView p
        cdef Config c
        cdef Cycle y
        cdef Py_ssize_t v
        _load_pod(cp, &p)
        p.spread_status = &self.spread_status[0] if self.has_spread_status else NULL
        p.n_spread = self.n_spread
        p.custom = &self.custom
        if self.custom_arrays:
            self._custom_pod_requests(cp)
        for v in range(N_VOLUME_FILTERS):
            if self.volume_ptr[v] != NULL and self.volume_arrays[v].shape[0] < self.cap:
                raise ValueError("a volume status is shorter than the node table (set it again)")
            p.volume_status[v] = self.volume_ptr[v]
        p.spread_col, p.spread_dom, p.spread_limit = _i32(self.spread_col), _i32(self.spread_dom), _i64(self.spread_limit)
        p.n_ipa_filter, p.n_ipa_score = self.n_ipa_filter, self.n_ipa_score
        p.ipa_self_affine = self.ipa_self_affine
        p.ipa_kind, p.ipa_col, p.ipa_dom = _i8(self.ipa_kind), _i32(self.ipa_col), _i32(self.ipa_dom)
        p.ipa_score_col, p.ipa_score_dom = _i32(self.ipa_score_col), _i32(self.ipa_score_dom)
        p.ipa_score_weight = _i64(self.ipa_score_weight)
        self._load_config(&c)
        self._begin(&p, &c, &y, node_name_row, n_all_nodes)
        cdef Py_ssize_t n = scan.shape[0], nf = 0, processed = 0, best = -1
        cdef Py_ssize_t pos, size, need, got, take, k, n_chunks
        cdef bint parallel = self.threads > 1 and self._start_pool()
        cdef Round r
        cdef Buffers* b = &self.b
        if n == 0:
            self._histogram(NULL, 0, 0, 0)
            return -1, 0, 0
        pos = start % n
        r.t, r.p, r.c, r.y, r.b = &self.t, &p, &c, &y, b
        r.scan, r.n, r.chunk, r.counts = &scan[0], n, CHUNK_NODES, &self.chunk_counts[0]
        with nogil:
            while processed < n and nf < num_to_find:
                need = num_to_find - nf
                # a round: what is still needed (x2 once nodes have been rejected), >= 256
                size = need if processed == 0 else 2 * need
                if size < 256:
                    size = 256
                if size > n - processed:
                    size = n - processed
                if not parallel or size < PARALLEL_MIN_NODES:
                    got = _eval_range(&self.t, &p, &c, &y, b, r.scan, n, (pos + processed) % n, size,
                                      processed, nf, need)
                else:
                    # chunks in parallel, each writing from its own offset; then merged in
                    # scan order and cut at the need-th feasible node
                    r.pos, r.size, r.offset, r.out, r.limit = (pos + processed) % n, size, processed, nf, need
                    n_chunks = (size + CHUNK_NODES - 1) // CHUNK_NODES
                    ks_pool_run(&self.pool, _eval_chunk, &r, n_chunks)
                    got = 0
                    for k in range(n_chunks):
                        take = r.counts[k] if r.counts[k] < need - got else need - got
                        _compact(b, nf + k * CHUNK_NODES, nf + got, take)
                        got += take
                        if got >= need:
                            break
                nf += got
                if nf >= num_to_find:
                    processed = b.feas_pos[nf - 1] + 1
                else:
                    processed += size
            if nf == 0:
                self._histogram(r.scan, n, pos, processed)
            elif nf == 1:
                best = self.feasible[0]
            else:
                best = self._select(&c, &y, nf, tie_first)
        return best, nf, processed

    cdef void _histogram(self, const int32_t* scan, Py_ssize_t n, Py_ssize_t pos,
                         Py_ssize_t processed) noexcept nogil:
        """FitError counts: per filter plugin, per untolerated taint, per missing resource."""
        cdef Py_ssize_t i, row, b
        cdef uint64_t bits
        cdef int plugin
        self.hist_plugin[:] = 0
        self.hist_detail[:, :] = 0
        self.hist_taint[:] = 0
        self.hist_fit[:] = 0
        for i in range(processed):
            row = scan[(pos + i) % n]
            if self.st_code[row] == C_SUCCESS:
                continue
            plugin = self.st_plugin[row]
            self.hist_plugin[plugin] += 1
            if plugin == F_TAINT_TOLERATION:
                self.hist_taint[self.st_detail[row]] += 1
            elif plugin != F_NODE_RESOURCES_FIT:
                self.hist_detail[plugin, self.st_detail[row] & 15] += 1
            else:
                bits = <uint64_t>self.st_detail[row]
                for b in range(64):
                    if (bits >> b) & 1:
                        self.hist_fit[b] += 1

    cdef Py_ssize_t _select(self, Config* c, Cycle* y, Py_ssize_t nf, bint tie_first) noexcept nogil:
        """NormalizeScore (TaintToleration reversed, NodeAffinity), weights and selectHost.

        Only the two normalised plugins get a `scores` row; the others' scores are their raw ones.
        """
        cdef Table* t = &self.t
        cdef Py_ssize_t j, row, s, best = -1, cap = self.cap
        cdef int64_t total, best_total = INT64_MIN, best_key = 0, ties = 0, v
        cdef int64_t max_taint = 0, max_affinity = 0
        cdef bint extra
        cdef int64_t ipa_min = INT64_MAX, ipa_max = INT64_MIN
        cdef int64_t* raw = &self.raw_scores[0, 0]
        cdef int64_t* norm = &self.scores[0, 0]
        for s in range(N_SCORES):
            self.score_ran[s] = y.use[s]
            self.score_zero[s] = y.use[s] and y.zero[s]
        if self.n_pts >= 0:
            self._spread_score(nf)
            self.score_ran[S_POD_TOPOLOGY_SPREAD] = True
        for s in range(N_CUSTOM):
            if y.use[S_CUSTOM_0 + s]:
                self._custom_score(s, nf)
        # scores added after normalisation besides the in-tree three: spread, custom
        extra = self.n_pts >= 0 or y.any_custom_score
        for j in range(nf):
            if y.use[S_TAINT_TOLERATION] and not y.zero[S_TAINT_TOLERATION] and \
                    raw[S_TAINT_TOLERATION * cap + j] > max_taint:
                max_taint = raw[S_TAINT_TOLERATION * cap + j]
            if y.use[S_NODE_AFFINITY] and raw[S_NODE_AFFINITY * cap + j] > max_affinity:
                max_affinity = raw[S_NODE_AFFINITY * cap + j]
            if y.use[S_INTER_POD_AFFINITY]:
                v = raw[S_INTER_POD_AFFINITY * cap + j]
                if v < ipa_min:
                    ipa_min = v
                if v > ipa_max:
                    ipa_max = v
        for j in range(nf):
            total = self.totals[j]
            if y.use[S_TAINT_TOLERATION]:
                v = MAX_NODE_SCORE     # all raw scores 0 (max_taint 0): every node gets 100
                if max_taint > 0:
                    v = MAX_NODE_SCORE - _div_small(MAX_NODE_SCORE * raw[S_TAINT_TOLERATION * cap + j], max_taint)
                norm[S_TAINT_TOLERATION * cap + j] = v
                total += c.weights[S_TAINT_TOLERATION] * v
            if y.use[S_NODE_AFFINITY]:
                v = raw[S_NODE_AFFINITY * cap + j]
                if max_affinity > 0:
                    v = _div_small(MAX_NODE_SCORE * v, max_affinity)
                norm[S_NODE_AFFINITY * cap + j] = v
                total += c.weights[S_NODE_AFFINITY] * v
            if y.use[S_INTER_POD_AFFINITY]:
                # min-max normalisation (scores may be negative), float64 as upstream
                v = 0
                if ipa_max - ipa_min > 0:
                    v = <int64_t>(<double>MAX_NODE_SCORE * (<double>(raw[S_INTER_POD_AFFINITY * cap + j] - ipa_min)
                                                        / <double>(ipa_max - ipa_min)))
                norm[S_INTER_POD_AFFINITY * cap + j] = v
                total += c.weights[S_INTER_POD_AFFINITY] * v
            if extra:
                if self.n_pts >= 0:
                    total += c.weights[S_POD_TOPOLOGY_SPREAD] * norm[S_POD_TOPOLOGY_SPREAD * cap + j]
                for s in range(N_CUSTOM):
                    if y.use[S_CUSTOM_0 + s]:
                        total += c.weights[S_CUSTOM_0 + s] * norm[(S_CUSTOM_0 + s) * cap + j]
            self.totals[j] = total
            row = self.feasible[j]
            if total > best_total:
                best_total, best, best_key, ties = total, row, t.order_key[row], 1
            elif total == best_total:
                # selectHost: uniform among the best (reservoir sampling), or first in input order
                if tie_first:
                    if t.order_key[row] < best_key:
                        best, best_key = row, t.order_key[row]
                else:
                    ties += 1
                    if _next_random(&self.rng_state) % <uint64_t>ties == 0:
                        best = row
        return best
