# The Filter plugins on one node, inlined into the pass (cdef inline: the functions compile
# into each module that cimports them, so the hot loop makes no cross-module call).
from libc.stdint cimport int8_t, int32_t, int64_t, uint64_t

from .custom cimport Custom, custom_fn
from .cycle cimport Cycle
from .ids cimport (DRA_STATUS_SLOT, F_DYNAMIC_RESOURCES, C_SUCCESS, C_UNRESOLVABLE, C_UNSCHEDULABLE, F_CUSTOM_0, F_INTER_POD_AFFINITY,
                   F_NODE_AFFINITY, F_NODE_NAME, F_NODE_PORTS, F_NODE_RESOURCES_FIT,
                   F_NODE_UNSCHEDULABLE, F_POD_TOPOLOGY_SPREAD, F_TAINT_TOLERATION,
                   F_VOLUME_RESTRICTIONS, F_VOLUME_ZONE, N_CUSTOM, OP_DOES_NOT_EXIST, OP_EXISTS,
                   OP_GT, OP_IN, OP_NOT_IN, TOO_MANY_PODS_BIT, VOLUME_UU)
from .pod cimport PodView
from .table cimport EFFECT_PREFER_NO_SCHEDULE, PORT_MASK, Table


# ---- NodeAffinity (term matching is shared with its Score) ------------------------------------
cdef inline bint requirement_matches(Table* t, PodView* p, Py_ssize_t row, Py_ssize_t r) noexcept nogil:
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


cdef inline bint term_matches(Table* t, PodView* p, Py_ssize_t row, Py_ssize_t term) noexcept nogil:
    cdef Py_ssize_t r
    for r in range(p.term_start[term], p.term_end[term]):
        if not requirement_matches(t, p, row, r):
            return False
    return True


cdef inline bint node_affinity_matches(Table* t, PodView* p, Py_ssize_t row, int64_t* detail) noexcept nogil:
    """NodeAffinity Filter; a node failing the profile's addedAffinity gets detail 1."""
    cdef Py_ssize_t term
    cdef bint ok
    if p.added_start >= 0:
        ok = False
        for term in range(p.added_start, p.added_end):
            if term_matches(t, p, row, term):
                ok = True
                break
        if not ok:
            detail[0] = 1
            return False
    if p.selector_term >= 0 and not term_matches(t, p, row, p.selector_term):
        return False
    if p.required_start < 0:
        return True
    for term in range(p.required_start, p.required_end):
        if term_matches(t, p, row, term):
            return True
    return False


# ---- NodePorts, TaintToleration -----------------------------------------------------------------
cdef inline bint node_unschedulable(Table* t, Py_ssize_t row) noexcept nogil:
    """NodeUnschedulable: the node is spec.unschedulable (the pass leaves this Filter out for
    pods that tolerate the unschedulable taint: Cycle.active)."""
    return t.unschedulable[row] != 0


cdef inline bint ports_conflict(Table* t, PodView* p, Py_ssize_t row) noexcept nogil:
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


cdef inline int64_t untolerated_taint(Table* t, PodView* p, Py_ssize_t row) noexcept nogil:
    """The first NoSchedule/NoExecute taint not tolerated, or -1."""
    cdef Py_ssize_t b
    cdef int32_t tid
    cdef int32_t* taints = t.taints + row * t.taint_w
    for b in range(t.n_taints[row]):
        tid = taints[b]
        if t.taint_effect[tid] != EFFECT_PREFER_NO_SCHEDULE and not p.tolerated[tid]:
            return tid
    return -1


# ---- NodeResourcesFit ---------------------------------------------------------------------------
cdef inline int fit_filter(Table* t, PodView* p, Py_ssize_t row, int64_t* detail) noexcept nogil:
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


# ---- PodTopologySpread, InterPodAffinity: from PreFilter's per-domain counts --------------------
cdef inline int spread_filter(Table* t, PodView* p, Py_ssize_t row, int64_t* detail) noexcept nogil:
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


cdef inline int inter_pod_filter(Table* t, PodView* p, Py_ssize_t row, int64_t* detail) noexcept nogil:
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


cdef inline int cross_pod_filters(Table* t, PodView* p, Cycle* y, Py_ssize_t first, Py_ssize_t row,
                                   int64_t* detail, int* plugin) noexcept nogil:
    """The cycle's Filters from y.filters[first] on, all PodTopologySpread / InterPodAffinity
    (scan.pxd local_cycle): a row whose node-local Filters passed, from this cycle's counts."""
    cdef Py_ssize_t k
    cdef int fid, code
    detail[0] = 0
    for k in range(first, y.n_filters):
        fid = y.filters[k]
        if fid == F_INTER_POD_AFFINITY:
            code = inter_pod_filter(t, p, row, detail)
        else:
            code = spread_filter(t, p, row, detail)
        if code != C_SUCCESS:
            plugin[0] = fid
            return code
    return C_SUCCESS


# ---- volume and custom plugins (per-row statuses, native functions) ---------------------------
cdef inline int volume_filter(PodView* p, int fid, Py_ssize_t row, int64_t* detail) noexcept nogil:
    """A volume plugin's (or DynamicResources') Filter, computed per row at PreFilter (only
    pods with volumes, or with claims)."""
    cdef int8_t s = p.volume_status[DRA_STATUS_SLOT if fid == F_DYNAMIC_RESOURCES else fid - F_VOLUME_RESTRICTIONS][row]
    if s == 0:
        return C_SUCCESS
    detail[0] = s & (VOLUME_UU - 1)
    return C_UNRESOLVABLE if s & VOLUME_UU else C_UNSCHEDULABLE


cdef inline int64_t custom_call(custom_fn fn, Table* t, PodView* p, Py_ssize_t row,
                                const int64_t* params, int64_t n_params) noexcept nogil:
    return fn(row, t.n_rows, t.n_res, t.n_keys, t.alloc, t.requested, t.labels, t.pod_count,
              t.allowed_pods, p.custom.pod_requests, n_params, params)


cdef inline int custom_filter(Table* t, PodView* p, int k, Py_ssize_t row) noexcept nogil:
    """A custom Filter plugin on one node (slot k): native function or per-row array."""
    cdef Custom* c = p.custom
    cdef int64_t r
    if c.filter_status[k] != NULL:
        r = c.filter_status[k][row]
    else:
        r = custom_call(c.filter_fn[k], t, p, row, c.filter_params[k], c.n_filter_params[k])
    if r == 0:
        return C_SUCCESS
    return C_UNRESOLVABLE if r == 2 else C_UNSCHEDULABLE


cdef inline int volume_filters(PodView* p, Cycle* y, Py_ssize_t row, int64_t* detail, int* plugin) noexcept nogil:
    """The volume Filters in id order (called through Cycle.volume_filters: out of line)."""
    cdef int k, code
    for k in range(F_VOLUME_RESTRICTIONS, F_VOLUME_ZONE + 1):
        if y.active[k]:
            code = volume_filter(p, k, row, detail)
            if code != C_SUCCESS:
                plugin[0] = k
                return code
    return C_SUCCESS


cdef inline int custom_filters(Table* t, PodView* p, Cycle* y, Py_ssize_t row, int* plugin) noexcept nogil:
    """The custom Filters in slot order (out of line, like the volume Filters)."""
    cdef int k, code
    for k in range(N_CUSTOM):
        if y.active[F_CUSTOM_0 + k]:
            code = custom_filter(t, p, k, row)
            if code != C_SUCCESS:
                plugin[0] = F_CUSTOM_0 + k
                return code
    return C_SUCCESS


# ---- the Filter plugins, in profile order -------------------------------------------------------
cdef inline int run_filter(int fid, Table* t, PodView* p, Cycle* y, Py_ssize_t row,
                           int64_t* detail) noexcept nogil:
    """One Filter plugin on one node: its status code (detail: taint id / resource bits)."""
    if fid == F_NODE_UNSCHEDULABLE:
        return C_UNRESOLVABLE if node_unschedulable(t, row) else C_SUCCESS
    if fid == F_NODE_NAME:
        return C_UNRESOLVABLE if y.node_name_row != row else C_SUCCESS
    if fid == F_TAINT_TOLERATION:
        if t.n_taints[row]:
            detail[0] = untolerated_taint(t, p, row)
            if detail[0] >= 0:
                return C_UNRESOLVABLE
            detail[0] = 0
        return C_SUCCESS
    if fid == F_NODE_AFFINITY:
        return C_SUCCESS if node_affinity_matches(t, p, row, detail) else C_UNRESOLVABLE
    if fid == F_NODE_PORTS:
        return C_UNSCHEDULABLE if ports_conflict(t, p, row) else C_SUCCESS
    if fid == F_INTER_POD_AFFINITY:
        return inter_pod_filter(t, p, row, detail)
    if fid == F_POD_TOPOLOGY_SPREAD:
        return spread_filter(t, p, row, detail)
    if F_VOLUME_RESTRICTIONS <= fid <= F_VOLUME_ZONE or fid == F_DYNAMIC_RESOURCES:
        return volume_filter(p, fid, row, detail)
    if fid >= F_CUSTOM_0:
        return custom_filter(t, p, fid - F_CUSTOM_0, row)
    return fit_filter(t, p, row, detail)


cdef inline int filter_node(Table* t, PodView* p, Cycle* y, Py_ssize_t row, int64_t* detail,
                            int* plugin) noexcept nogil:
    """The Filter plugins that can act on this pod, in profile order; the first non-success
    status stops the node (only that plugin's status is recorded)."""
    cdef int k, code
    detail[0] = 0
    if y.in_id_order:
        # the default order (ids follow it): straight-line code, which the compiler inlines
        if y.active[F_NODE_UNSCHEDULABLE] and node_unschedulable(t, row):
            plugin[0] = F_NODE_UNSCHEDULABLE
            return C_UNRESOLVABLE
        if y.active[F_NODE_NAME] and y.node_name_row != row:
            plugin[0] = F_NODE_NAME
            return C_UNRESOLVABLE
        if y.active[F_TAINT_TOLERATION] and t.n_taints[row]:
            detail[0] = untolerated_taint(t, p, row)
            if detail[0] >= 0:
                plugin[0] = F_TAINT_TOLERATION
                return C_UNRESOLVABLE
            detail[0] = 0
        if y.active[F_NODE_AFFINITY] and not node_affinity_matches(t, p, row, detail):
            plugin[0] = F_NODE_AFFINITY
            return C_UNRESOLVABLE
        if y.active[F_NODE_PORTS] and ports_conflict(t, p, row):
            plugin[0] = F_NODE_PORTS
            return C_UNSCHEDULABLE
        if y.active[F_NODE_RESOURCES_FIT]:
            code = fit_filter(t, p, row, detail)
            if code != C_SUCCESS:
                plugin[0] = F_NODE_RESOURCES_FIT
                return code
        if y.any_volume:
            code = y.volume_filters(p, y, row, detail, plugin)
            if code != C_SUCCESS:
                return code
        if y.active[F_POD_TOPOLOGY_SPREAD]:
            code = spread_filter(t, p, row, detail)
            if code != C_SUCCESS:
                plugin[0] = F_POD_TOPOLOGY_SPREAD
                return code
        if y.active[F_INTER_POD_AFFINITY]:
            code = inter_pod_filter(t, p, row, detail)
            if code != C_SUCCESS:
                plugin[0] = F_INTER_POD_AFFINITY
                return code
        if y.active[F_DYNAMIC_RESOURCES]:
            code = volume_filter(p, F_DYNAMIC_RESOURCES, row, detail)
            if code != C_SUCCESS:
                plugin[0] = F_DYNAMIC_RESOURCES
                return code
        if y.any_custom:
            return y.custom_filters(t, p, y, row, plugin)
        return C_SUCCESS
    for k in range(y.n_filters):
        code = run_filter(y.filters[k], t, p, y, row, detail)
        if code != C_SUCCESS:
            plugin[0] = y.filters[k]
            return code
    return C_SUCCESS
