"""CompiledPod, and its raw view for the pass (the plugins' cycle state is added by the kernel)."""
import numpy as np

from .views cimport i32_ptr, i64_ptr, u8_ptr

_EMPTY_I64 = np.zeros(0, np.int64)
_EMPTY_I32 = np.zeros(0, np.int32)
_EMPTY_U8 = np.zeros(0, np.uint8)


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


cdef void load_pod(CompiledPod cp, PodView* p) noexcept:
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
    p.scalar_cols, p.scalar_vals = i64_ptr(cp.scalar_cols), i64_ptr(cp.scalar_vals)
    p.fit_score_req, p.balanced_req = i64_ptr(cp.fit_score_req), i64_ptr(cp.balanced_req)
    p.tolerated, p.prefer_intolerable = u8_ptr(cp.tolerated), u8_ptr(cp.prefer_intolerable)
    p.req_key, p.req_op = i32_ptr(cp.req_key), i32_ptr(cp.req_op)
    p.req_vals_start, p.req_vals_end, p.req_vals = i32_ptr(cp.req_vals_start), i32_ptr(cp.req_vals_end), i32_ptr(cp.req_vals)
    p.req_num = i64_ptr(cp.req_num)
    p.term_start, p.term_end = i32_ptr(cp.term_start), i32_ptr(cp.term_end)
    p.preferred_terms, p.preferred_weights = i32_ptr(cp.preferred_terms), i64_ptr(cp.preferred_weights)
    p.host_ports, p.images = i64_ptr(cp.host_ports), i32_ptr(cp.images)
