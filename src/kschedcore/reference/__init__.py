"""Plain-Python reference implementation of kube-scheduler v1.34.1's node-local default
plugins, InterPodAffinity, PodTopologySpread and the volume plugins (semantics document: /work/shared/docs/kube-scheduler-semantics.md).

Slow and obvious on purpose: the compiled kernels are tested against it.

Modules, by topic:

* ``goarith``  -- Go integer division, float truncation, math.Round, strconv.ParseInt (§0)
* ``names``    -- label/qualified-name validation, resource-name classification (§1.2)
* ``exactqty`` -- exact (Fraction) quantities on top of kschedcore.objects.quantity (§0)
* ``requests`` -- pod requests, non-zero requests, allocatable (§1)
* ``affinity`` -- node selectors, node affinity terms (§3.4)
* ``interpod`` -- InterPodAffinity Filter and Score, label selectors (§3.8, §4.6)
* ``topology`` -- PodTopologySpread Filter and Score, default constraints (§3.9, §4.7)
* ``storage``  -- the volume plugins' listers (Storage), storage-object accessors, pod claims (§3.7)
* ``volumebinding`` -- VolumeBinding PreFilter/Filter (+ Reserve), PV matching, provisioning (§3.7)
* ``volumes``  -- VolumeRestrictions, NodeVolumeLimits, VolumeZone; entry points of all four
  volume plugins (§3.7)
* ``state``    -- NodeInfo, host ports, node-tree order, image summaries (§3.5, §7)
* ``plugins``  -- NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
  NodeResourcesFit, NodeResourcesBalancedAllocation, ImageLocality (§3, §4)
* ``cycle``    -- PreFilter/Filter/PreScore/Score/selectHost, FitError, explain records (§2, §5)
"""
from .cycle import ReferenceScheduler, explain_workload

__all__ = ["ReferenceScheduler", "explain_workload"]
