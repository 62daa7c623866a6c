"""The plugin interface for node-local plugins whose per-node work is a compiled kernel.

A plugin does three things in Python, once per pod (not per node): ``compile`` its part of
the pod into the :class:`~kschedcore._kernels.CompiledPod`, say whether its PreFilter /
PreScore skip, and turn a node's status detail back into kube-scheduler's reason strings.
The kernel does the per-node work.
"""
import numpy as np

EMPTY_I32 = np.zeros(0, np.int32)
EMPTY_I64 = np.zeros(0, np.int64)


class Plugin:
    #: kube-scheduler's plugin name
    name = ""
    #: kernel filter id (0: no Filter) and score id (-1: no Score)
    filter_id = 0
    score_id = -1
    default_weight = 0

    def __init__(self, args=None):
        self.args = args or {}

    def compile(self, pod, cp, table):
        """Writes this plugin's part of the compiled pod."""

    def prefilter_skips(self, pod) -> bool:
        """True when PreFilter returns Skip (its Filter does not run); no PreFilter: False."""
        return False

    def prescore_skips(self, pod) -> bool:
        return False

    def reasons(self, detail: int, table) -> list:
        """Reason strings of a node this plugin rejected, from the kernel's status detail."""
        return []


class PreFilterRejection(Exception):
    """A PreFilter returned UnschedulableAndUnresolvable (or, after all PreFilters ran,
    Unschedulable): the cycle stops, every node gets this status and the FitError says
    `message`. plugins: the rejector plugins (several when PreFilterResults do not meet)."""

    def __init__(self, plugin: str, message: str, code: str = "UnschedulableAndUnresolvable", plugins=None):
        super().__init__(message)
        self.plugin = plugin
        self.message = message
        self.code = code
        self.plugins = set(plugins) if plugins else {plugin}


class VolumePlugin(Plugin):
    """A volume plugin: its PreFilter turns the cache's volume facts into a per-row int8
    status for the kernel (0 passes, else reason bits | VOLUME_UU), with NumPy."""
    #: reason strings by status bit
    bit_reasons = {}

    def __init__(self, args=None):
        super().__init__(args)
        self.skipped = True        # the last cycle's PreFilter returned Skip

    def prefilter_skips(self, pod) -> bool:
        # a pod without volumes skips every volume PreFilter; `skipped` may then be another pod's
        return self.skipped or not pod.volumes

    def prefilter(self, pod, volumes, table):
        """Returns the status array, or None when no node can fail; sets `skipped`.
        Raises PreFilterRejection."""
        raise NotImplementedError

    def reasons(self, detail: int, table) -> list:
        return [r for bit, r in self.bit_reasons.items() if detail & bit]

    def pvc_claims(self, pod, volumes):
        """(volume, claim) of the pod's persistentVolumeClaim volumes (not ephemeral ones); a
        claim the lister cannot find rejects the pod with the lister's not-found text."""
        for v in pod.volumes:
            if not v.claim or v.ephemeral:
                continue
            claim = volumes.claim(pod.namespace, v.claim)
            if claim is None:
                raise PreFilterRejection(self.name, f'persistentvolumeclaim "{v.claim}" not found')
            yield v, claim
