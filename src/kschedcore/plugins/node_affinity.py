"""NodeAffinity (plugins/nodeaffinity): nodeSelector + required terms (filter), preferred (score)."""
import numpy as np

from .._kernels import (F_NODE_AFFINITY, OP_DOES_NOT_EXIST, OP_EXISTS, OP_GT, OP_IN, OP_LT,
                        OP_NOT_IN, S_NODE_AFFINITY)
from ..objects.pod import PodReader
from ..state.node_table import NAME_KEY
from .base import EMPTY_I32, EMPTY_I64, Plugin

REASON_POD = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
DETAIL_ENFORCED = 1     # the kernel's status detail for a node failing addedAffinity
REASON_CONFLICT = "pod affinity terms conflict"
OPS = {"In": OP_IN, "NotIn": OP_NOT_IN, "Exists": OP_EXISTS, "DoesNotExist": OP_DOES_NOT_EXIST,
       "Gt": OP_GT, "Lt": OP_LT}


class _TermBuilder:
    """Flattens selector terms into the kernel's requirement / term arrays."""

    def __init__(self, table):
        self.table = table
        self.key, self.op, self.vstart, self.vend, self.vals, self.num = [], [], [], [], [], []
        self.tstart, self.tend = [], []

    def requirement(self, key, op, values):
        self.key.append(self.table.label_key_col(key))
        self.op.append(OPS[op])
        self.vstart.append(len(self.vals))
        if op in ("In", "NotIn"):
            self.vals.extend(self.table.label_value_id(v) for v in values)
        self.vend.append(len(self.vals))
        self.num.append(int(values[0]) if op in ("Gt", "Lt") else 0)

    def term(self, requirements) -> int:
        self.tstart.append(len(self.key))
        for key, op, values in requirements:
            self.requirement(key, op, values)
        self.tend.append(len(self.key))
        return len(self.tstart) - 1

    def selector_term(self, term) -> int:
        if not term.parses:
            return self.term([(NAME_KEY, "In", ())])   # In over no values: matches nothing
        reqs = [(r.key, r.operator, r.values) for r in term.expressions]
        # a node's only field is metadata.name; another field key reads as absent
        reqs += [(NAME_KEY if r.key == NAME_KEY else "\x00field:" + r.key, r.operator, r.values)
                 for r in term.fields]
        return self.term(reqs)

    def write(self, cp):
        i32 = lambda xs: np.asarray(xs, np.int32) if xs else EMPTY_I32
        cp.req_key, cp.req_op = i32(self.key), i32(self.op)
        cp.req_vals_start, cp.req_vals_end, cp.req_vals = i32(self.vstart), i32(self.vend), i32(self.vals)
        cp.req_num = np.asarray(self.num, np.int64) if self.num else EMPTY_I64
        cp.term_start, cp.term_end = i32(self.tstart), i32(self.tend)


class NodeAffinity(Plugin):
    name = "NodeAffinity"
    filter_id = F_NODE_AFFINITY
    score_id = S_NODE_AFFINITY
    default_weight = 2

    def __init__(self, args=None):
        super().__init__(args)
        # NodeAffinityArgs.addedAffinity: terms every pod of the profile must match / prefers
        self.added_required, self.added_preferred = None, None
        added = self.args.get("addedAffinity")
        if added:
            reader = PodReader("NodeAffinityArgs")
            if not isinstance(added, dict):
                reader.fail("addedAffinity", "expected an object")
            self.added_required, self.added_preferred = reader.node_affinity_of(added, "addedAffinity")
            terms = list(self.added_required or ()) + [p.term for p in self.added_preferred or ()]
            if any(not t.parses for t in terms):   # kube-scheduler rejects such args at start-up
                reader.fail("addedAffinity", "a node selector term does not parse")

    def compile(self, pod, cp, table):
        b = _TermBuilder(table)
        cp.added_start = cp.added_end = -1
        if self.added_required is not None:
            cp.added_start = len(b.tstart)
            for t in self.added_required:
                if not t.empty:
                    b.selector_term(t)
            cp.added_end = len(b.tstart)
        cp.selector_term = -1
        if pod.node_selector:
            cp.selector_term = b.term([(k, "In", (v,)) for k, v in pod.node_selector.items()])
        cp.required_start = cp.required_end = -1
        if pod.required_terms is not None:
            # a term with neither expressions nor fields is dropped: it matches nothing
            usable = [t for t in pod.required_terms if not t.empty]
            cp.required_start = len(b.tstart)
            for t in usable:
                b.selector_term(t)
            cp.required_end = len(b.tstart)
        cp.has_node_affinity_filter = cp.selector_term >= 0 or cp.required_start >= 0 or cp.added_start >= 0
        preferred = [p for p in (pod.preferred_terms or ()) + (self.added_preferred or ())
                     if p.weight and not p.term.empty]
        cp.preferred_terms = np.asarray([b.selector_term(p.term) for p in preferred], np.int32) \
            if preferred else EMPTY_I32
        cp.preferred_weights = np.asarray([p.weight for p in preferred], np.int64) \
            if preferred else EMPTY_I64
        cp.skip_node_affinity_score = self.prescore_skips(pod)
        b.write(cp)

    def prefilter_skips(self, pod):
        return pod.required_terms is None and pod.node_selector is None and self.added_required is None

    def prefilter_node_names(self, pod):
        """PreFilterResult: node names when every required term pins metadata.name with In.

        Returns None (all nodes) or a set (possibly empty: `pod affinity terms conflict`).
        """
        if not pod.required_terms:
            return None
        names = set()
        for term in pod.required_terms:
            term_names = None
            for r in term.fields:
                if r.key == NAME_KEY and r.operator == "In":
                    term_names = set(r.values) if term_names is None else term_names & set(r.values)
            if term_names is None:
                return None
            names |= term_names
        return names

    def prescore_skips(self, pod):
        return pod.preferred_terms is None and self.added_preferred is None

    def reasons(self, detail, table):
        return [REASON_ENFORCED if detail == DETAIL_ENFORCED else REASON_POD]


def required_mask(pod, table) -> np.ndarray:
    """Per node row: the node matches the pod's nodeSelector and required node affinity
    (GetRequiredNodeAffinity, without addedAffinity), over the whole table with NumPy.
    PodTopologySpread's nodeAffinityPolicy=Honor counts only such nodes."""
    mask = np.ones(table.labels.shape[0], bool)
    for key, value in (pod.node_selector or {}).items():
        mask &= requirement_mask(table, key, "In", (value,))
    if pod.required_terms is not None:
        mask &= terms_mask(pod.required_terms, table)
    return mask


def terms_mask(terms, table, *, node_names=True) -> np.ndarray:
    """Per node row: some term of a NodeSelector matches (an empty or unparsable term matches
    nothing). node_names=False: the nodes are seen without their name, as CheckNodeAffinity
    sees them for PersistentVolumes: such a node has no fields, so matchFields are not checked
    (nodeSelectorTerm.match skips them when extractNodeFields is empty)."""
    n = table.labels.shape[0]
    out = np.zeros(n, bool)
    for t in terms:
        if t.empty or not t.parses:
            continue
        m = np.ones(n, bool)
        for r in t.expressions:
            m &= requirement_mask(table, r.key, r.operator, r.values)
        for r in t.fields if node_names else ():
            m &= requirement_mask(table, NAME_KEY if r.key == NAME_KEY else "\x00field:" + r.key,
                                  r.operator, r.values)
        out |= m
    return out


def requirement_mask(table, key, op, values) -> np.ndarray:
    """Per node row: one label requirement (labels.Requirement.Matches) holds."""
    labels = table.labels
    col = table.label_keys.get(key)
    v = labels[:, col] if col >= 0 else np.full(labels.shape[0], -1, np.int32)
    if op in ("In", "NotIn"):
        ids = [table.label_values.get(x) for x in values]
        found = np.isin(v, [i for i in ids if i >= 0]) & (v >= 0)
        return found if op == "In" else ~found
    if op == "Exists":
        return v >= 0
    if op == "DoesNotExist":
        return v < 0
    bound = int(values[0])
    safe = np.where(v >= 0, v, 0)
    ok = (v >= 0) & (table.value_is_int[safe] == 1)
    return ok & ((table.value_int[safe] > bound) if op == "Gt" else (table.value_int[safe] < bound))


def label_selector_mask(selector, table) -> np.ndarray:
    """Per node row: a LabelSelector (None: nothing) matches the node's labels."""
    n = table.labels.shape[0]
    if selector is None:
        return np.zeros(n, bool)
    m = np.ones(n, bool)
    for key, op, values in selector.requirements:
        m &= requirement_mask(table, key, op, tuple(values))
    return m
