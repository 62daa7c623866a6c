"""DeviceIndex: the devices of node-local pools as NumPy columns (node row, free, selectable),
so that DynamicResources' Filter decides most rows by counting free devices of a request's
class per row, and runs the structured allocator only where counting cannot decide.

Counting decides exactly when every request to allocate is an ExactCount of one class (with
the same selectors), with no constraint and no admin access: the allocator's search then fits
the claims on a node if and only if the node's pools hold that many free devices its selectors
accept. A row whose pool is invalid, or with a free device on which a selector fails to
evaluate, is left to the allocator (its error, or the order it meets devices in, decides).
A selector's verdict on a device is evaluated once per slice object (SelectorCache)."""
from __future__ import annotations

import numpy as np

from ...dra.cel import CELCompileError, CELRuntimeError
from ...dra.pools import gather_pools

MATCH, NO_MATCH, ERROR = 1, 0, 2


class DeviceIndex:
    def __init__(self):
        self.key = None
        self.usable = False         # every slice node-local: the rows' devices are theirs alone

    def refresh(self, dra, table, cel) -> bool:
        """Brought up to date with the cluster; False when counting cannot be used at all."""
        key = (id(dra), dra.version, table.node_version, len(table.nodes))
        if key != self.key:
            self._build(dra, table, cel)
            self.key = key
        elif self.usable:
            self._drain(dra)
        return self.usable

    def _build(self, dra, table, cel) -> None:
        self.cel = cel
        self.kinds: dict = {}
        slices = [s.v1 for s in dra.slices.values()]
        self.usable = all(s["spec"].get("nodeName") and s["spec"].get("perDeviceNodeSelection") is None
                          for s in slices)
        if not self.usable:
            return
        by_node: dict[str, list] = {}
        for s in slices:
            by_node.setdefault(s["spec"]["nodeName"], []).append(s)
        rows: list = []
        devices: list = []
        plain: list = []
        self.ids: dict = {}
        self.n_rows = len(table.nodes)
        self.start = [0] * (self.n_rows + 1)        # a row's devices: start[row]:start[row + 1]
        self.row_ok = np.ones(self.n_rows, bool)       # no invalid pool
        for row, node in enumerate(table.nodes):
            self.start[row] = len(rows)
            mine = by_node.get(node.name) if node is not None else None
            if not mine:
                continue
            for pool in gather_pools(mine, node.raw):
                if pool.invalid:
                    self.row_ok[row] = False
                    break
                for s in pool.slices:
                    for index, dev in enumerate(s["spec"].get("devices") or ()):
                        self.ids[(pool.driver, pool.name, dev["name"])] = len(rows)
                        rows.append(row)
                        devices.append((pool, s, index))
                        # binding conditions: never selectable; consumed counters: never taken
                        plain.append(not dev.get("bindingConditions") and not dev.get("consumesCounters"))
        self.start[self.n_rows] = len(rows)
        self.dev_row = np.asarray(rows, np.intp)
        self.devices = devices
        self.plain = np.asarray(plain, bool)
        self.no_binding = np.asarray([not s["spec"]["devices"][i].get("bindingConditions") for _, s, i in devices],
                                     bool)
        self.free = np.ones(len(rows), bool)
        in_use = dra.allocated_devices()
        for did in in_use:
            i = self.ids.get(did)
            if i is not None:
                self.free[i] = False
        self.free_list, self.row_list = self.free.tolist(), rows
        dra.in_use_log = []

    def _drain(self, dra) -> None:
        log, in_use, free, ids = dra.in_use_log, dra.allocated_devices(), self.free_list, self.ids
        for did in log:
            i = ids.get(did)
            now = did not in in_use
            if i is None or free[i] == now:
                continue
            free[i] = self.free[i] = now
            delta = 1 if now else -1
            row = self.row_list[i]
            for kind in self.kinds.values():
                kind.device_changed(i, row, delta)
        log.clear()

    def kind(self, class_obj, selectors: tuple) -> "RequestKind":
        """The devices a request of this class with these selectors can take, counted per row."""
        sig = (class_obj["metadata"]["name"], selectors)
        kind = self.kinds.get(sig)
        if kind is None:
            expressions = [sel["cel"]["expression"] for sel in (class_obj.get("spec") or {}).get("selectors") or ()]
            expressions += selectors
            verdicts = np.fromiter((self._verdict(expressions, s, i) for _, s, i in self.devices), np.int8,
                                   len(self.devices))
            kind = self.kinds[sig] = RequestKind(self, verdicts)
        return kind

    def _verdict(self, expressions, s, index) -> int:
        """isSelectable's verdict: the class's selectors, then the request's, the first false
        or failing one ending it."""
        for expression in expressions:
            try:
                if not self.cel.matches(expression, s, index):
                    return NO_MATCH
            except (CELCompileError, CELRuntimeError):
                return ERROR
        return MATCH


class RequestKind:
    """One kind of request (class and selectors) over a DeviceIndex: per row the free devices
    it can take, and the free devices on which its selectors fail to evaluate."""

    def __init__(self, index: DeviceIndex, verdicts: np.ndarray):
        self.index = index
        self.takes = (verdicts == MATCH) & index.plain
        self.takes_list = self.takes.tolist()
        self.fails = (verdicts == ERROR) & index.no_binding
        self.free_count = np.bincount(index.dev_row[self.takes & index.free], minlength=index.n_rows)
        self.error_count = None
        if self.fails.any():
            self.error_count = np.bincount(index.dev_row[self.fails & index.free], minlength=index.n_rows)
        else:
            self._decided = index.row_ok
            self._undecided = np.flatnonzero(~index.row_ok).tolist()
        self.all_decided = self.error_count is None and not self._undecided
        self.free_list = self.free_count.tolist()
        self._short: dict = {}        # (count, value) -> per row `value` where fewer than count are free

    def device_changed(self, i: int, row: int, delta: int) -> None:
        if self.takes_list[i]:
            self.free_count[row] = n = self.free_list[row] = self.free_list[row] + delta
            for (count, value), short in self._short.items():
                short[row] = value if n < count else 0
        if self.error_count is not None and self.fails[i]:
            self.error_count[row] += delta

    def short_rows(self, count: int, value: int) -> np.ndarray:
        """Per row `value` where fewer than `count` devices are free, else 0 (int8), kept up to
        date device by device; only where every row is decided (all_decided)."""
        short = self._short.get((count, value))
        if short is None:
            short = self._short[(count, value)] = (self.free_count < count).astype(np.int8) * np.int8(value)
        return short

    def decided(self) -> np.ndarray:
        """The rows counting decides: pools valid, no free device failing the selectors."""
        if self.error_count is None:
            return self._decided
        return self.index.row_ok & (self.error_count == 0)

    def undecided(self) -> list:
        if self.error_count is None:
            return self._undecided
        return np.flatnonzero(~self.decided()).tolist()

    def takeable(self, row: int) -> list:
        """(pool, slice, index) of the row's free devices it can take, in the allocator's order
        (pools by driver and name, their slices by name, devices in order)."""
        index, takes, free = self.index, self.takes_list, self.index.free_list
        return [index.devices[i] for i in range(index.start[row], index.start[row + 1]) if takes[i] and free[i]]
