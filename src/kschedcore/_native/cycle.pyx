"""A cycle's switches: which Filter plugins can act on the pod, which Score plugins run."""
from .filters cimport custom_filters, volume_filters
from .ids cimport (DRA_STATUS_SLOT, F_DYNAMIC_RESOURCES, F_CUSTOM_0, F_INTER_POD_AFFINITY, F_NODE_AFFINITY, F_NODE_NAME, F_NODE_PORTS,
                   F_NODE_UNSCHEDULABLE, F_POD_TOPOLOGY_SPREAD, F_VOLUME_RESTRICTIONS,
                   F_VOLUME_ZONE, N_CUSTOM, S_BALANCED_ALLOCATION, S_CUSTOM_0, S_IMAGE_LOCALITY,
                   S_INTER_POD_AFFINITY, S_NODE_AFFINITY, S_TAINT_TOLERATION)


cdef void begin_cycle(Table* t, PodView* p, Config* c, Cycle* y, Py_ssize_t node_name_row,
                      int64_t n_all_nodes) noexcept:
    cdef Py_ssize_t s
    cdef int fid
    cdef bint acts
    # the profile's Filter plugins in order, less those that cannot reject this pod
    y.volume_filters, y.custom_filters = volume_filters, custom_filters
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
        elif fid == F_DYNAMIC_RESOURCES:
            acts = p.volume_status[DRA_STATUS_SLOT] != NULL
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
        if t.image_count[p.images[s]] > 0:
            y.zero[S_IMAGE_LOCALITY] = False
            break
