"""VolumePlugin: what the four volume plugins share. Each one's PreFilter turns the cache's
volume facts into one int8 status per node row with NumPy (0 passes, else reason bits |
VOLUME_UU), which the kernel reads as that plugin's Filter; pods without volumes skip them."""
from ...framework.interface import PreFilterRejection
from ...framework.kernel_plugin import KernelPlugin



class VolumePlugin(KernelPlugin):
    #: reason strings by status bit
    bit_reasons: dict = {}
    dynamic = True
    applies_when = "volumes"      # pods without volumes skip every volume PreFilter

    #: its Filter reads the volumes of the pods on a node (NodeVolumeLimits' attached volumes,
    #: VolumeRestrictions' disks and ReadWriteOncePod claims); VolumeBinding and VolumeZone read
    #: storage objects only
    reads_placed_pods = False

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.skipped = True        # the last cycle's PreFilter returned Skip
        self.status = (None, None)  # (pod, per-row status) of the last cycle (None: no node fails)

    def leaves_pass(self) -> bool:
        """No status this cycle: no node can fail its Filter."""
        return not self.armed

    def prefilter_skips(self, pod) -> bool:
        # a pod without volumes skips every volume PreFilter; `skipped` may then be another pod's
        return self.skipped or not pod.volumes

    def applies(self, pod, cache) -> bool:
        return bool(pod.volumes)

    def sees_other_pods(self, pod, cache) -> bool:
        """Taking lower-priority pods off a node changes this Filter's verdict only through
        their volumes: preemption's dry run is resource arithmetic when none of them has any
        (its own verdict per row is then `status`, as the cycle's PreFilter made it)."""
        return bool(pod.volumes) and self.reads_placed_pods and cache.volumes.held_below(pod.priority)

    def pre_filter(self, cycle):
        """The status array into the kernel (None: no node can fail, or Skip)."""
        pod, kernel = cycle.pod, cycle.framework.kernel
        self.armed = True           # a rejection below leaves the kernel's status stale
        self.status = (None, None)  # (a rejection below: no status of this pod's)
        if pod.volumes:
            status = self.prefilter(pod, cycle.cache.volumes, cycle.cache.table)
        else:
            status, self.skipped = None, True
        kernel.set_volume_status(self.filter_id, status)
        self.status = (pod, status)
        self.armed = status is not None
        if not self.skipped:
            cycle.acted(self.name, True, False)

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
