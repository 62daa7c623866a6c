"""Invariants of the scheduling loop that several tests check."""


def check_cache(sim):
    """The cache equals the truth: each node's requested cpu is its bound and binding pods',
    and no node is over its allocatable cpu."""
    t = sim.sched.table
    cpu = t.resource_col("cpu")
    want = {}
    for key, n in list(sim.bound.items()) + list(sim.binding.items()):
        want[n] = want.get(n, 0) + sim.pods[key].requests.get("cpu", 0)
    for name, row in t.row_of.items():
        assert t.requested[row, cpu] == want.get(name, 0), name
        assert t.requested[row, cpu] <= t.alloc[row, cpu], name
