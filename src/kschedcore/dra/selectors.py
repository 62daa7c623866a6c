"""Selector results per device, kept across allocations while a slice stands.

A selector's verdict for a device depends only on the expression and the device, so the
cache keeps it per ResourceSlice object (by identity, holding the slice so that identity
stays unique) and forgets a slice once an allocator is made without it: an updated slice is
a new object, whose devices are evaluated afresh.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from .cel import CELCompileError, CELRuntimeError, compile_selector, device_input


class SelectorCache:
    """Compiled selectors and their per-device verdicts (upstream's ``cel.Cache`` plus the
    allocator's ``deviceMatchesRequest`` kept across calls)."""

    def __init__(self) -> None:
        self._slices: dict[int, tuple[Mapping, dict, dict]] = {}

    def keep_only(self, slices: Sequence[Mapping]) -> None:
        """Forget the verdicts of slices that are no longer in the cluster."""
        live = {id(s) for s in slices}
        for key in [k for k in self._slices if k not in live]:
            del self._slices[key]

    def _entry(self, s: Mapping):
        entry = self._slices.get(id(s))
        if entry is None or entry[0] is not s:
            entry = self._slices[id(s)] = (s, {}, {})
        return entry

    def matches(self, expression: str, s: Mapping, index: int) -> bool:
        """The selector's verdict on device ``index`` of slice ``s``; raises CELCompileError
        or CELRuntimeError (upstream's messages), remembered like a verdict."""
        _, verdicts, inputs = self._entry(s)
        key = (expression, index)
        hit = verdicts.get(key)
        if hit is None:
            hit = self._evaluate(expression, s, index, inputs)
            verdicts[key] = hit
        if isinstance(hit, Exception):
            raise hit
        return hit

    @staticmethod
    def _evaluate(expression: str, s: Mapping, index: int, inputs: dict):
        try:
            selector = compile_selector(expression)
        except CELCompileError as err:
            return err
        dev = inputs.get(index)
        if dev is None:
            d = s["spec"]["devices"][index]
            dev = inputs[index] = device_input(s["spec"]["driver"], d.get("attributes"), d.get("capacity"))
        try:
            return selector.eval(dev)
        except CELRuntimeError as err:
            return err
