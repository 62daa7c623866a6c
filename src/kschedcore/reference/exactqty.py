"""Exact quantity values for the reference (semantics §0, §1.1).

Parsing is kschedcore.objects.quantity's job (``parse_quantity``); the reference only needs
each parsed quantity as an exact rational number, so that sums and maxima are exact and the
ceiling conversion happens once, at the end, as upstream does with resource.Quantity.
"""
from __future__ import annotations

from fractions import Fraction

from kschedcore.objects.quantity import parse_quantity


def _as_fraction(q) -> Fraction:
    """The exact value of a parsed Quantity as a Fraction."""
    if isinstance(q, Fraction):
        return Fraction(q)
    for attr in ("as_fraction", "to_fraction", "fraction", "exact"):
        v = getattr(q, attr, None)
        if v is None:
            continue
        if callable(v):
            v = v()
        return Fraction(v)
    if hasattr(q, "as_integer_ratio"):
        num, den = q.as_integer_ratio()
        return Fraction(num, den)
    if hasattr(q, "numerator") and hasattr(q, "denominator"):
        return Fraction(q.numerator, q.denominator)
    raise TypeError(f"cannot get an exact value from {type(q).__name__}")


def exact_quantity(text) -> Fraction:
    """Parse a v1 quantity (JSON string, or a bare JSON number) to its exact value."""
    if isinstance(text, bool):
        raise TypeError(f"not a quantity: {text!r}")
    if isinstance(text, (int, float)):
        text = repr(text) if isinstance(text, float) else str(text)
    return _as_fraction(parse_quantity(text))
