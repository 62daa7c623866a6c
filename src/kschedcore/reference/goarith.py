"""Go arithmetic, spelled out (semantics §0).

kube-scheduler computes scores with int64 and float64.  Python's ``//`` floors and its
``round`` rounds half to even, so the reference never uses them on signed values; it uses
these helpers instead.
"""
from __future__ import annotations

import math


def go_div(a: int, b: int) -> int:
    """Go ``a / b`` on int64: the quotient truncated toward zero (§0)."""
    if b == 0:
        raise ZeroDivisionError("integer divide by zero")
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        return -q
    return q


def go_float_to_int(x: float) -> int:
    """Go ``int64(x)`` for a float64: truncation toward zero (§0)."""
    return int(x)  # Python int() on a float truncates toward zero


def go_round(x: float) -> float:
    """Go ``math.Round``: nearest integer, halves away from zero (§0).

    ``x - trunc(x)`` is exact in IEEE double, so the half test is exact too.
    """
    if math.isnan(x) or math.isinf(x):
        return x
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return t


_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def go_parse_int64(text: str) -> int | None:
    """Go ``strconv.ParseInt(text, 10, 64)``; ``None`` where Go returns an error.

    Base 10 given explicitly: an optional sign, then one or more ASCII digits (no
    underscores, no spaces), within the int64 range.
    """
    if not isinstance(text, str) or not text:
        return None
    body = text
    if body[0] in "+-":
        body = body[1:]
    if not body or any(c not in "0123456789" for c in body):
        return None
    value = int(text)
    if value < _INT64_MIN or value > _INT64_MAX:
        return None
    return value
