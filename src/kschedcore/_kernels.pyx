"""The per-pod pass over the node table, compiled.

One call of :meth:`NodeKernel.run` is one scheduling cycle's Filter + Score + NormalizeScore
+ selectHost for the node-local default plugins (semantics §3.1-3.6, §4.1-4.5, §5.2, §5.4).
Arithmetic follows Go: int64 with truncating division (``cdivision``), float64 steps in the
order kube-scheduler writes them, no fast-math and no FP contraction (see setup.py).
"""
from libc.math cimport fabs, sqrt, round as c_round
from libc.stdint cimport INT64_MIN

import numpy as np

# status.images: ImageLocality thresholds (plugins/imagelocality/image_locality.go)
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



cdef class CompiledPod:
    pass


cdef inline bint _requirement_matches(NodeKernel k, CompiledPod p, Py_ssize_t row,
                                      Py_ssize_t r) noexcept nogil:
    cdef int32_t v = k.labels[row, p.req_key[r]]
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
    if v < 0 or not k.value_is_int[v]:
        return False
    if op == OP_GT:
        return k.value_int[v] > p.req_num[r]
    return k.value_int[v] < p.req_num[r]


cdef inline bint _term_matches(NodeKernel k, CompiledPod p, Py_ssize_t row, Py_ssize_t t) noexcept nogil:
    cdef Py_ssize_t r
    for r in range(p.term_start[t], p.term_end[t]):
        if not _requirement_matches(k, p, row, r):
            return False
    return True


cdef inline bint _node_affinity_matches(NodeKernel k, CompiledPod p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t t
    if p.selector_term >= 0 and not _term_matches(k, p, row, p.selector_term):
        return False
    if p.required_start < 0:
        return True
    for t in range(p.required_start, p.required_end):
        if _term_matches(k, p, row, t):
            return True
    return False


cdef inline bint _ports_conflict(NodeKernel k, CompiledPod p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t a, b
    cdef int64_t w, u, wip, uip
    for a in range(p.host_ports.shape[0]):
        w = p.host_ports[a]
        wip = w >> 18
        for b in range(k.n_ports[row]):
            u = k.ports[row, b]
            if (u & PORT_MASK) == (w & PORT_MASK):
                uip = u >> 18
                if wip == 0 or uip == 0 or uip == wip:
                    return True
    return False


cdef inline int _fit_filter(NodeKernel k, CompiledPod p, Py_ssize_t row, int64_t* detail) noexcept nogil:
    """NodeResourcesFit Filter: returns the status code, reasons as a bitmask of resource columns."""
    cdef uint64_t bits = 0
    cdef bint unresolvable = False
    cdef Py_ssize_t s
    cdef int64_t c, v
    if k.pod_count[row] + 1 > k.allowed_pods[row]:
        bits |= (<uint64_t>1) << TOO_MANY_PODS_BIT
    if p.cpu != 0 or p.memory != 0 or p.ephemeral != 0 or p.has_scalar_entry:
        if p.cpu > 0 and p.cpu > k.alloc[row, 0] - k.requested[row, 0]:
            bits |= 1
            unresolvable = unresolvable or p.cpu > k.alloc[row, 0]
        if p.memory > 0 and p.memory > k.alloc[row, 1] - k.requested[row, 1]:
            bits |= 2
            unresolvable = unresolvable or p.memory > k.alloc[row, 1]
        if p.ephemeral > 0 and p.ephemeral > k.alloc[row, 2] - k.requested[row, 2]:
            bits |= 4
            unresolvable = unresolvable or p.ephemeral > k.alloc[row, 2]
        for s in range(p.scalar_cols.shape[0]):
            c = p.scalar_cols[s]
            v = p.scalar_vals[s]
            if v > k.alloc[row, c] - k.requested[row, c]:
                bits |= (<uint64_t>1) << c
                unresolvable = unresolvable or v > k.alloc[row, c]
    if bits == 0:
        return C_SUCCESS
    detail[0] = <int64_t>bits
    return C_UNRESOLVABLE if unresolvable else C_UNSCHEDULABLE


cdef inline int64_t _broken_linear(NodeKernel k, int64_t x) noexcept nogil:
    """helper.BuildBrokenLinearFunction over the RequestedToCapacityRatio shape."""
    cdef Py_ssize_t i, n = k.shape_util.shape[0]
    for i in range(n):
        if x <= k.shape_util[i]:
            if i == 0:
                return k.shape_score[0]
            return k.shape_score[i - 1] + (k.shape_score[i] - k.shape_score[i - 1]) * \
                (x - k.shape_util[i - 1]) / (k.shape_util[i] - k.shape_util[i - 1])
    return k.shape_score[n - 1]


cdef inline void _alloc_req(NodeKernel k, Py_ssize_t row, int64_t col, int64_t pod_req, bint non_zero,
                            int64_t* alloc, int64_t* req) noexcept nogil:
    """resourceAllocationScorer.calculateResourceAllocatableRequest; alloc 0 means 'left out'."""
    alloc[0] = 0
    req[0] = 0
    if col < 0 or (col >= 3 and pod_req == 0):
        return
    alloc[0] = k.alloc[row, col]
    if col < 2 and non_zero:
        req[0] = k.nonzero[row, col] + pod_req
    else:
        req[0] = k.requested[row, col] + pod_req


cdef inline int64_t _fit_score(NodeKernel k, CompiledPod p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t alloc, req, w, s, total = 0, wsum = 0
    for i in range(k.strategy_cols.shape[0]):
        _alloc_req(k, row, k.strategy_cols[i], p.fit_score_req[i], True, &alloc, &req)
        if alloc == 0:
            continue
        w = k.strategy_weights[i]
        if k.strategy == LEAST_ALLOCATED:
            s = 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE / alloc
        elif k.strategy == MOST_ALLOCATED:
            s = (alloc if req > alloc else req) * MAX_NODE_SCORE / alloc
        else:
            s = _broken_linear(k, 100 if req > alloc else req * 100 / alloc)
            if s <= 0:
                continue
        total += s * w
        wsum += w
    if wsum == 0:
        return 0
    if k.strategy == REQUESTED_TO_CAPACITY_RATIO:
        return <int64_t>c_round(<double>total / <double>wsum)
    return total / wsum


cdef inline int64_t _balanced_score(NodeKernel k, CompiledPod p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t i
    cdef int n = 0
    cdef int64_t alloc, req
    cdef double f, total = 0.0, mean, acc, std = 0.0
    cdef double fr[64]
    for i in range(k.balanced_cols.shape[0]):
        _alloc_req(k, row, k.balanced_cols[i], p.balanced_req[i], False, &alloc, &req)
        if alloc == 0:
            continue
        f = <double>req / <double>alloc
        if f > 1:
            f = 1
        total += f
        fr[n] = f
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


cdef inline int64_t _image_score(NodeKernel k, CompiledPod p, Py_ssize_t row, int64_t n_nodes) noexcept nogil:
    cdef Py_ssize_t a, b
    cdef int64_t total = 0, max_t
    cdef int32_t img
    for a in range(p.images.shape[0]):
        img = p.images[a]
        for b in range(k.n_images[row]):
            if k.images[row, b] == img:
                total += <int64_t>(<double>k.image_size[img] *
                                   (<double>k.image_nn[row, b] / <double>n_nodes))
                break
    max_t = MAX_CONTAINER_IMAGE_THRESHOLD * p.n_containers
    if total < MIN_IMAGE_THRESHOLD:
        total = MIN_IMAGE_THRESHOLD
    elif total > max_t:
        total = max_t
    return MAX_NODE_SCORE * (total - MIN_IMAGE_THRESHOLD) / (max_t - MIN_IMAGE_THRESHOLD)


cdef inline int64_t _taint_score(NodeKernel k, CompiledPod p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t b
    cdef int32_t t
    cdef int64_t count = 0
    for b in range(k.n_taints[row]):
        t = k.taints[row, b]
        if k.taint_effect[t] == EFFECT_PREFER_NO_SCHEDULE and p.prefer_intolerable[t]:
            count += 1
    return count


cdef inline int64_t _node_affinity_score(NodeKernel k, CompiledPod p, Py_ssize_t row) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t total = 0
    for i in range(p.preferred_terms.shape[0]):
        if _term_matches(k, p, row, p.preferred_terms[i]):
            total += p.preferred_weights[i]
    return total


cdef inline uint64_t _next_random(uint64_t* state) noexcept nogil:
    """splitmix64: small, fast, reproducible from a seed."""
    state[0] += <uint64_t>0x9E3779B97F4A7C15
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EB
    return z ^ (z >> 31)


cdef class NodeKernel:
    """Bound views of the node table plus the reused per-cycle buffers."""

    def bind(self, table):
        """(Re)binds the table's columns; called whenever the table reallocates."""
        self.alloc = table.alloc
        self.requested = table.requested
        self.nonzero = table.nonzero
        self.pod_count = table.pod_count
        self.allowed_pods = table.allowed_pods
        self.order_key = table.order_key
        self.unschedulable = table.unschedulable
        self.labels = table.labels
        self.taints = table.taints
        self.n_taints = table.n_taints
        self.taint_effect = table.taint_effect
        self.ports = table.ports
        self.n_ports = table.n_ports
        self.images = table.images
        self.image_nn = table.image_nn
        self.n_images = table.n_images
        self.image_size = table.image_size
        self.value_int = table.value_int
        self.value_is_int = table.value_is_int
        self.n_resources = table.alloc.shape[1]
        cap = table.alloc.shape[0]
        if self.totals_cap != cap:
            self.totals_cap = cap
            self.st_code = np.zeros(cap, np.int8)
            self.st_plugin = np.zeros(cap, np.int8)
            self.st_detail = np.zeros(cap, np.int64)
            self.feasible = np.zeros(cap, np.int32)
            self.raw_scores = np.zeros((N_SCORES, cap), np.int64)
            self.scores = np.zeros((N_SCORES, cap), np.int64)
            self.totals = np.zeros(cap, np.int64)
        self.hist_plugin = np.zeros(N_FILTERS, np.int64)
        self.hist_taint = np.zeros(table.taint_effect.shape[0], np.int64)
        self.hist_fit = np.zeros(64, np.int64)
        self.score_ran = np.zeros(N_SCORES, np.uint8)

    def seed(self, seed):
        self.rng_state = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)

    def add_usage(self, Py_ssize_t row, const int64_t[::1] cols, const int64_t[::1] vals,
                         int64_t nz_cpu, int64_t nz_mem, int64_t sign):
        """Adds (sign=1) or removes (sign=-1) one pod's requests on a node row."""
        cdef Py_ssize_t i
        for i in range(cols.shape[0]):
            self.requested[row, cols[i]] += sign * vals[i]
        self.nonzero[row, 0] += sign * nz_cpu
        self.nonzero[row, 1] += sign * nz_mem
        self.pod_count[row] += sign

    def run(self, CompiledPod p, const int32_t[::1] scan, Py_ssize_t start,
                    Py_ssize_t num_to_find, Py_ssize_t node_name_row, int64_t n_all_nodes,
                    bint explain, bint tie_first):
        """Filters nodes scan[(start + i) % len(scan)] until num_to_find pass, then scores them.

        Returns (chosen row or -1, number feasible, number processed).
        """
        cdef Py_ssize_t n = scan.shape[0], i, j, row, nf = 0, processed = 0, s, best = -1
        cdef int code, plugin, b
        cdef int64_t detail, m, total, best_total = INT64_MIN, best_key = 0, ties = 0
        cdef uint64_t bits
        cdef bint use_score[N_SCORES]
        cdef bint check_affinity = p.has_node_affinity_filter and self.filter_enabled[F_NODE_AFFINITY]
        cdef bint check_ports = p.host_ports.shape[0] > 0 and self.filter_enabled[F_NODE_PORTS]
        self.hist_plugin[:] = 0
        self.hist_taint[:] = 0
        self.hist_fit[:] = 0
        with nogil:
            for i in range(n):
                if nf >= num_to_find:
                    break
                row = scan[(start + i) % n]
                processed += 1
                code = C_SUCCESS
                plugin = F_NONE
                detail = 0
                if self.filter_enabled[F_NODE_UNSCHEDULABLE] and self.unschedulable[row] \
                        and not p.tolerates_unschedulable:
                    code, plugin = C_UNRESOLVABLE, F_NODE_UNSCHEDULABLE
                elif self.filter_enabled[F_NODE_NAME] and node_name_row != -1 and node_name_row != row:
                    code, plugin = C_UNRESOLVABLE, F_NODE_NAME
                else:
                    if self.filter_enabled[F_TAINT_TOLERATION]:
                        for b in range(self.n_taints[row]):
                            j = self.taints[row, b]
                            if self.taint_effect[j] != EFFECT_PREFER_NO_SCHEDULE and not p.tolerated[j]:
                                code, plugin, detail = C_UNRESOLVABLE, F_TAINT_TOLERATION, j
                                self.hist_taint[j] += 1
                                break
                    if code == C_SUCCESS and check_affinity and not _node_affinity_matches(self, p, row):
                        code, plugin = C_UNRESOLVABLE, F_NODE_AFFINITY
                    if code == C_SUCCESS and check_ports and _ports_conflict(self, p, row):
                        code, plugin = C_UNSCHEDULABLE, F_NODE_PORTS
                    if code == C_SUCCESS and self.filter_enabled[F_NODE_RESOURCES_FIT]:
                        code = _fit_filter(self, p, row, &detail)
                        if code != C_SUCCESS:
                            plugin = F_NODE_RESOURCES_FIT
                            bits = <uint64_t>detail
                            for b in range(64):
                                if (bits >> b) & 1:
                                    self.hist_fit[b] += 1
                self.st_code[row] = code
                if code == C_SUCCESS:
                    self.feasible[nf] = row
                    nf += 1
                else:
                    self.st_plugin[row] = plugin
                    self.st_detail[row] = detail
                    self.hist_plugin[plugin] += 1

            if nf == 1:
                best = self.feasible[0]
            elif nf > 1:
                for s in range(N_SCORES):
                    use_score[s] = self.score_enabled[s]
                    self.score_ran[s] = 0
                use_score[S_NODE_AFFINITY] = use_score[S_NODE_AFFINITY] and not p.skip_node_affinity_score
                use_score[S_BALANCED_ALLOCATION] = use_score[S_BALANCED_ALLOCATION] and not p.skip_balanced
                for j in range(nf):
                    row = self.feasible[j]
                    if use_score[S_TAINT_TOLERATION]:
                        self.raw_scores[S_TAINT_TOLERATION, j] = _taint_score(self, p, row)
                    if use_score[S_NODE_AFFINITY]:
                        self.raw_scores[S_NODE_AFFINITY, j] = _node_affinity_score(self, p, row)
                    if use_score[S_NODE_RESOURCES_FIT]:
                        self.raw_scores[S_NODE_RESOURCES_FIT, j] = _fit_score(self, p, row)
                    if use_score[S_BALANCED_ALLOCATION]:
                        self.raw_scores[S_BALANCED_ALLOCATION, j] = _balanced_score(self, p, row)
                    if use_score[S_IMAGE_LOCALITY]:
                        self.raw_scores[S_IMAGE_LOCALITY, j] = _image_score(self, p, row, n_all_nodes)
                for s in range(N_SCORES):
                    if not use_score[s]:
                        continue
                    self.score_ran[s] = 1
                    if s == S_TAINT_TOLERATION or s == S_NODE_AFFINITY:
                        # DefaultNormalizeScore; reversed for TaintToleration
                        m = 0
                        for j in range(nf):
                            if self.raw_scores[s, j] > m:
                                m = self.raw_scores[s, j]
                        for j in range(nf):
                            if m == 0:
                                self.scores[s, j] = MAX_NODE_SCORE if s == S_TAINT_TOLERATION else self.raw_scores[s, j]
                            else:
                                self.scores[s, j] = MAX_NODE_SCORE * self.raw_scores[s, j] / m
                                if s == S_TAINT_TOLERATION:
                                    self.scores[s, j] = MAX_NODE_SCORE - self.scores[s, j]
                    else:
                        for j in range(nf):
                            self.scores[s, j] = self.raw_scores[s, j]
                for j in range(nf):
                    total = 0
                    for s in range(N_SCORES):
                        if use_score[s]:
                            total += self.weights[s] * self.scores[s, j]
                    self.totals[j] = total
                    row = self.feasible[j]
                    if total > best_total:
                        best_total, best, best_key, ties = total, row, self.order_key[row], 1
                    elif total == best_total:
                        # selectHost: uniform among the best (reservoir sampling), or first in input order
                        if tie_first:
                            if self.order_key[row] < best_key:
                                best, best_key = row, self.order_key[row]
                        else:
                            ties += 1
                            if _next_random(&self.rng_state) % <uint64_t>ties == 0:
                                best = row
        return best, nf, processed
