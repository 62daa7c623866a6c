"""Scheduler.fork(): what-if changes on the live scheduler, undone by revert() or kept by
commit() (cluster-autoscaler's ClusterSnapshot Fork / Revert / Commit).

While a fork is open the Scheduler shows the fork's state: every node and pod operation,
scheduling and preemption act on it as usual. revert() brings back the state of the fork's
start exactly -- the node table's rows and columns, the placements, the pending pods, the
rotation index and the tie-break generators -- at a cost that follows what the fork changed
(backend/cache/fork.py); commit() keeps the changes, handing them to the enclosing fork if
there is one. Forks nest; only the innermost one can be reverted or committed. Cluster objects
other than nodes and pods (Services, PDBs, storage, namespaces) cannot change inside a fork.
"""
from ..errors import StateError


class Fork:
    """An open fork of a Scheduler (a context manager: reverted on exit unless committed)."""

    def __init__(self, sched, save_table: bool = False):
        self.sched = sched
        self.journal = sched.cache.begin_fork()
        if save_table:      # one copy of the table now, instead of a row saved at each first change
            self.journal.table.save_whole(sched.cache.table)
        self.pending = list(sched.pending)
        self.start_index = sched.cycles.next_start_node_index
        self.rng = sched.cycles.rng.getstate()
        self.kernels = {name: fw.kernel.rng_state for name, fw in sched.profiles.items()}
        self.open = True

    def revert(self) -> None:
        """Undoes every change made since the fork opened."""
        self._close(commit=False)
        s = self.sched
        s.pending = self.pending
        s.cycles.next_start_node_index = self.start_index
        s.cycles.rng.setstate(self.rng)
        for name, state in self.kernels.items():
            s.profiles[name].kernel.rng_state = state

    def commit(self) -> None:
        """Keeps the changes (in the enclosing fork, if any)."""
        self._close(commit=True)

    def _close(self, commit: bool) -> None:
        if not self.open:
            raise StateError("fork", "", "already reverted or committed")
        self.sched.cache.end_fork(self.journal, commit)
        self.open = False

    def __enter__(self) -> "Fork":
        return self

    def __exit__(self, *exc) -> None:
        if self.open:
            self.revert()
