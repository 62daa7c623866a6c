"""The environment's node axis: every node the workload names, in its order -- the action
space, fixed for the environment -- over the node table's rows, which nodes added and removed
during an episode move (rows are reused; a node not in the cluster yet has none).
"""
from __future__ import annotations

from typing import Any

import numpy as np


class NodeIndex:
    """Node index <-> node table row, made again when the table's nodes change."""

    def __init__(self, table: Any, names: list[str]) -> None:
        self.table, self.names = table, names
        self.index_of = {name: i for i, name in enumerate(names)}
        self.version = -1
        self.rows = np.arange(len(names))     # index -> row, -1 where the node is not in the cluster
        #: every node is at the row of its index: the table's columns are the axis (no gather)
        self.identity = True

    def current(self) -> "NodeIndex":
        t = self.table
        if t.node_version != self.version:
            rows = np.full(len(self.names), -1, np.int64)
            for name, row in t.row_of.items():
                i = self.index_of.get(name)
                if i is not None:
                    rows[i] = row
            self.rows, self.version = rows, t.node_version
            self.identity = bool((rows == np.arange(len(rows))).all())
        return self

    def index(self, node: str) -> int:
        return self.index_of[node]

    def mask(self, cycle: Any) -> np.ndarray:
        """1 for the nodes the cycle found feasible (int8, by node index), written from the
        kernel's record of the cycle (Cycle.feasible_into) -- no per-node Python."""
        self.current()
        n = len(self.names)
        if self.identity:
            mask = np.zeros(n, np.int8)
            cycle.feasible_into(mask)
            return mask
        by_row = np.zeros(max(len(self.table.nodes), 1), np.int8)
        cycle.feasible_into(by_row)
        present = self.rows >= 0
        return np.where(present, by_row[np.where(present, self.rows, 0)], 0).astype(np.int8)

    def gather(self, column: np.ndarray) -> np.ndarray:
        """A column by node index (a copy): zeros for the nodes not in the cluster."""
        present = self.rows >= 0
        out = column[np.where(present, self.rows, 0)]
        out[~present] = 0
        return out
