"""KernelPlugin: the interface of an in-tree plugin whose per-node work is the compiled pass.

Such a plugin does its work in Python once per pod, never per node: `compile` writes its part
of the pod's integer form (kschedcore._native.CompiledPod, cached per pod template), it says
whether its PreFilter / PreScore skip, and it turns a node's status detail back into
kube-scheduler's reason strings. The kernel does the per-node Filter and Score work under the
plugin's filter_id / score_id.

Optional hooks, each found by the Framework by name and run in profile order:

- `configure(kernel, table)`: the profile's settings into the kernel, once;
- `prefilter_node_names(pod)`: a PreFilterResult known from the pod alone (None: every node);
- `prescore_error(pod)`: a PreScore error known from the pod alone ('' : none);
- `pre_filter(cycle)` / `applies(pod, cache)`: PreFilter work that depends on the cycle, for
  plugins whose kernel state changes per cycle (set `dynamic = True`); `applies` tells cheaply
  whether it has anything to do (`cluster_dependent`), else it applies when the Pod field
  `applies_when` is not empty; `armed` says the kernel holds its state from an earlier cycle;
- `pre_score(cycle)`, run right after its `pre_filter` when the plugin scores in the profile:
  True when it scores after the pass in Python, then `score_after_pass(cycle, nf)` -> True
  when totals changed; `scored(cycle)` when the kernel scored it (`score_armed`);
- `reserve(pod, row, node_name, cache)`: what a placed pod commits (VolumeBinding);
- `copies_limits(pod)` (cross_pod plugins): what a run of copies recomputes per copy
  (_native/cross_copies; PodTopologySpread's DoNotSchedule limits);
- `histogram(kernel, table)`: the FitError reasons of the nodes it rejected (default: per
  status detail);
- `events_to_register()`: its cluster events with queueing hints (EnqueueExtensions).

`cycle` is the Framework's CycleContext: pod, compiled pod, cache, kernel, CycleState.
"""
import numpy as np

EMPTY_I32 = np.zeros(0, np.int32)
EMPTY_I64 = np.zeros(0, np.int64)


class KernelPlugin:
    #: kube-scheduler's plugin name
    name = ""
    #: kernel filter id (0: no Filter) and score id (-1: no Score)
    filter_id = 0
    score_id = -1
    default_weight = 0
    #: the kernel computes its score in the pass (False: after it, in Python)
    scored_in_kernel = True
    #: its PreFilter depends on the cycle (see pre_filter)
    dynamic = False
    #: whether it applies depends on the cluster too (`applies` is asked every cycle); if not,
    #: it applies when the pod's field `applies_when` is not empty
    cluster_dependent = False
    applies_when = ""
    #: the kernel holds this plugin's per-cycle state from an earlier cycle (pre_filter clears it)
    armed = False
    #: its reasons follow from the status detail and the table's names alone (no plugin state):
    #: the Framework may remember a failed cycle's histogram by the kernel's counts
    static_reasons = False
    #: its per-cycle kernel state is per-domain counts the pass reads per row after every
    #: node-local Filter (PodTopologySpread, InterPodAffinity): a cycle it acts in still reuses
    #: the template's equivalence-cache entries for the node-local part (scan.pxd local_cycle)
    cross_pod = False
    def __init__(self, args=None, handle=None):
        self.args = args or {}
        self.handle = handle

    def leaves_pass(self) -> bool:
        """After this cycle's pre_filter the pass is what it would be without the plugin (it
        left no per-row state in the kernel): the cycle may still read the template's slot."""
        return False

    def passes_everywhere(self, pod, cache, run=None) -> bool:
        """A dynamic plugin's PreFilter and Filter certainly pass `pod` on every node (False
        where unsure): runs of copies then schedule it with the node-local pass alone
        (Framework.node_local). run: a dict shared by the copies of one run, asked in order
        before any is placed -- the pod must pass with the earlier ones placed wherever the
        kernel puts them (a plugin keeps what they take there); None: the pod alone, or copies
        of it that share its very volumes (capacity's: a volume adds nothing where it is
        attached already)."""
        return False

    def compile(self, pod, cp, table):
        """Writes this plugin's part of the compiled pod."""

    def prefilter_skips(self, pod) -> bool:
        """True when PreFilter returns Skip (its Filter does not run); no PreFilter: False."""
        return False

    def prescore_skips(self, pod) -> bool:
        return False

    def sees_other_pods(self, pod, cache) -> bool:
        """Its Filter, for this pod, depends on the other pods on a node (so preemption's dry
        run cannot decide on resources alone)."""
        return False

    def reasons(self, detail: int, table) -> list:
        """Reason strings of a node this plugin rejected, from the kernel's status detail."""
        return []

    def histogram(self, kernel, table) -> list:
        """[(reason, nodes)] of the last pass's rejections by this plugin."""
        return detail_histogram(self, kernel, table)

    def events_to_register(self):
        """EnqueueExtensions.EventsToRegister: [ClusterEventWithHint]; None hears every event."""
        return None


def detail_histogram(plugin, kernel, table) -> list:
    """[(reason, nodes)] of the last pass's rejections by a Filter plugin, from the kernel's
    per-status-detail counters (any Filter with `filter_id` and `reasons`)."""
    counts = np.asarray(kernel.hist_detail[plugin.filter_id])
    return [(reason, int(counts[detail])) for detail in np.flatnonzero(counts).tolist()
            for reason in plugin.reasons(detail, table)]
