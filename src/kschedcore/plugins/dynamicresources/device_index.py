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
        self.cel, self.sigs = cel, {}
        slices = [s.v1 for s in dra.slices.values()]
        self.usable = all(s["spec"].get("nodeName") and s["spec"].get("perDeviceNodeSelection") is None
                          for s in slices)
        if not self.usable:
            return
        by_node: dict[str, list] = {}
        for s in slices:
            by_node.setdefault(s["spec"]["nodeName"], []).append(s)
        rows, devices, plain, self.ids = [], [], [], {}
        self.n_rows = len(table.nodes)
        self.row_ok = np.ones(self.n_rows, bool)       # no invalid pool
        for row, node in enumerate(table.nodes):
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
                        devices.append((s, index))
                        # binding conditions: never selectable; consumed counters: never taken
                        plain.append(not dev.get("bindingConditions") and not dev.get("consumesCounters"))
        self.dev_row = np.asarray(rows, np.intp)
        self.devices = devices
        self.plain = np.asarray(plain, bool)
        self.no_binding = np.asarray([not s["spec"]["devices"][i].get("bindingConditions") for s, i in devices],
                                     bool)
        self.free = np.ones(len(rows), bool)
        in_use = dra.allocated_devices()
        for did in in_use:
            i = self.ids.get(did)
            if i is not None:
                self.free[i] = False
        dra.in_use_log = []

    def _drain(self, dra) -> None:
        log, in_use = dra.in_use_log, dra.allocated_devices()
        for did in log:
            i = self.ids.get(did)
            if i is not None:
                self.free[i] = did not in in_use
        log.clear()

    def verdicts(self, class_obj, selectors: tuple) -> np.ndarray:
        """Per device MATCH, NO_MATCH or ERROR for a request of this class with these
        selectors: the class's selectors, then the request's, the first false or failing one
        ending it, as the allocator's isSelectable evaluates them."""
        sig = (class_obj["metadata"]["name"], selectors)
        out = self.sigs.get(sig)
        if out is None:
            expressions = [sel["cel"]["expression"] for sel in (class_obj.get("spec") or {}).get("selectors") or ()]
            expressions += selectors
            out = self.sigs[sig] = np.fromiter((self._verdict(expressions, s, i) for s, i in self.devices),
                                               np.int8, len(self.devices))
        return out

    def _verdict(self, expressions, s, index) -> int:
        for expression in expressions:
            try:
                if not self.cel.matches(expression, s, index):
                    return NO_MATCH
            except (CELCompileError, CELRuntimeError):
                return ERROR
        return MATCH

    def count(self, verdicts: np.ndarray) -> tuple:
        """(free devices the request can take per row, rows where a free device's selector
        fails to evaluate)."""
        free = self.free
        fits = np.bincount(self.dev_row[(verdicts == MATCH) & free & self.plain], minlength=self.n_rows)
        errors = np.bincount(self.dev_row[(verdicts == ERROR) & free & self.no_binding], minlength=self.n_rows)
        return fits, errors > 0
