"""NodeAffinity (plugins/nodeaffinity): nodeSelector + required terms (filter), preferred (score)."""
import numpy as np

from ..._native import (F_NODE_AFFINITY, OP_DOES_NOT_EXIST, OP_EXISTS, OP_GT, OP_IN, OP_LT,
                         OP_NOT_IN, S_NODE_AFFINITY)
from ...backend.cache.node_table import NAME_KEY
from ...framework.cluster_events import ActionType as A, EventResource as R, Queue, QueueSkip, with_hint
from ...framework.kernel_plugin import EMPTY_I32, EMPTY_I64, KernelPlugin
from ...objects.pod import PodReader
from ..helper.predicates import ParseError, required_node_affinity_matches, terms_match

REASON_POD = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
DETAIL_ENFORCED = 1     # the kernel's status detail for a node failing addedAffinity
REASON_CONFLICT = "pod affinity terms conflict"
PRESCORE_PARSE_ERROR = 'running PreScore plugin "NodeAffinity": invalid preferred node affinity terms'
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


class NodeAffinity(KernelPlugin):
    name = "NodeAffinity"
    static_reasons = True
    filter_id = F_NODE_AFFINITY
    score_id = S_NODE_AFFINITY
    default_weight = 2

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
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

    def prescore_error(self, pod) -> str:
        """PreScore fails to parse a weighted, non-empty preferred term: the cycle errors out."""
        return PRESCORE_PARSE_ERROR if pod.preferred_parse_error else ""

    def events_to_register(self):
        return [with_hint(R.Node, A.Add | A.UpdateNodeLabel, node_hint(self.added_required))]


def node_hint(added_required=None):
    """isSchedulableAfterNodeChange; added_required: NodeAffinityArgs.addedAffinity's required
    node selector terms (None: no added affinity)."""
    def hint(pod, old, new):
        if added_required is not None and not _matches_or_error(added_required, new):
            return QueueSkip
        try:
            if not required_node_affinity_matches(pod, new):
                return QueueSkip
            if old is None:
                return Queue
            return QueueSkip if required_node_affinity_matches(pod, old) else Queue
        except ParseError:
            return Queue
    return hint


def _matches_or_error(terms, node) -> bool:
    try:
        return terms_match(terms, node)
    except ParseError:
        return False   # NodeSelector.Match ignores errors (reported at start-up)
