"""The resourceclaim controller's part and DynamicResources' claim bookkeeping, as the
Scheduler's operations (mixed into Scheduler; the claims live in the Cache's DRAState)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..backend.cache.dra import claim_allocations

if TYPE_CHECKING:
    from ..backend.cache import Cache
    from ..objects.pod import Pod


class ClaimOperations:
    """Mixed into Scheduler: the claims of pods arriving, leaving and failing to bind."""

    if TYPE_CHECKING:
        cache: Cache

    def make_claims(self, pod: Pod) -> list:
        """The resourceclaim controller's part for a pod that arrives pending: its claims from
        templates created, named `<pod name>-<pod claim name>` and owned by the pod."""
        return self.cache.dra.create_template_claims(pod) if pod.resource_claims else []

    def release_claims(self, pod: Pod) -> list:
        """The resourceclaim controller's part for a pod that is gone: its template claims
        deleted, its reservations of the others removed (deallocated when unreserved)."""
        return self.cache.dra.release(pod) if pod.resource_claims else []

    def unreserve_claims(self, pod: Pod) -> list:
        """DynamicResources' Unreserve for a pod whose binding failed: its reservations of its
        claims dropped (deallocated where nobody else reserves them)."""
        return self.cache.dra.unreserve(pod) if pod.resource_claims else []

    def claim_allocations(self, key: str) -> dict | None:
        """A placed pod's claims as the records show them: claim name -> {"devices": [{request,
        driver, pool, device, adminAccess (only when true)}], "nodeSelector"}; None for a pod
        without claims (or not placed)."""
        placed = self.cache.placement(key)
        if placed is None or not placed.pod.resource_claims:
            return None
        return claim_allocations(self.cache.dra, placed.pod)
