"""The scheduler's backend: the cache (cluster state the cycles read) and the scheduling queue."""
