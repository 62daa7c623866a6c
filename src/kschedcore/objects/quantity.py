"""Kubernetes ``resource.Quantity``, exactly as k8s.io/apimachinery v0.34 (kube-scheduler v1.34).

Grammar: ``<sign>? <digits>? ( "." <digits>? )? <suffix>``, where the suffix is binary SI
(``Ki Mi Gi Ti Pi Ei``), decimal SI (``n u m "" k M G T P E``) or a decimal exponent
(``e<int>`` / ``E<int>``). A parsed quantity is exact, rounded *up* (away from zero) to a
multiple of 1n; BinarySI values are capped at 2^63-1 in magnitude. Internally the value is an
integer number of nanos, so arithmetic never overflows and never goes through floats.

Go quirks reproduced on purpose (each one is marked ``Go:`` below):

* the number may have no digits at all: ``"Ki"``, ``"-"``, ``"."``, ``"m"`` all parse as 0;
* ``String()`` returns the input text unchanged when Go's parser judged it canonical, even
  for ``"+1"``, ``"01"``, ``"1.100"``, ``"1.G"``, ``"5.Ki"``, ``"1E3"``;
* DecimalSI values whose canonical exponent is above 18 print without their suffix
  (``"1000E"`` prints as ``"1"``; fixed upstream after v1.34);
* the exponent of ``e<int>`` is parsed as int64 then truncated to int32
  (``"1e4294967297"`` is 10);
* ``Value()``/``MilliValue()`` of a *negative* non-integer round away from zero when Go holds
  the quantity as an int64 (``"-0.5"`` -> -1), but truncate toward zero and add one when it
  holds an ``inf.Dec`` (``"-1.0000000005"`` -> 0). Positive values always round up.

One deliberate difference: Go accepts quantities of any size, while every int64 conversion
of one above 2^63 overflows; kschedcore rejects values of 10^1000 or more (so that no input can
make it build gigantic integers) and otherwise returns exact Python ints.
"""
from __future__ import annotations

import functools
from fractions import Fraction
from functools import total_ordering
from typing import Final

from kschedcore.errors import QuantityError

DECIMAL_SI: Final = "DecimalSI"
BINARY_SI: Final = "BinarySI"
DECIMAL_EXPONENT: Final = "DecimalExponent"
FORMATS: Final = (DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT)

_NANO: Final = 10**9
_INT64_MAX: Final = 2**63 - 1
_MAX_INT_DIGITS: Final = 1000  # kschedcore's own bound (see module docstring)

_DEC_SUFFIX: Final = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DEC_BY_EXP: Final = {e: s for s, e in _DEC_SUFFIX.items()}
_BIN_SUFFIX: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BIN_BY_POWER: Final = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DIGITS: Final = frozenset("0123456789")
_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")


@total_ordering
class Quantity:
    """An immutable, exact Kubernetes quantity; ``==``/``<``/``hash`` use the value only."""

    __slots__ = ("_nanos", "format", "_text", "_dec")
    _nanos: int
    format: str
    _text: str | None
    _dec: bool

    def __init__(self, nanos: int, format: str = DECIMAL_SI, *, _text: str | None = None, _dec: bool = False) -> None:
        """A quantity of ``nanos`` * 10^-9; prefer ``parse_quantity``/``from_int``/``from_milli``."""
        if isinstance(nanos, bool) or not isinstance(nanos, int):
            raise TypeError(f"nanos must be an int, not {type(nanos).__name__}")
        if format not in FORMATS:
            raise ValueError(f"unknown quantity format {format!r}")
        for name, val in (("_nanos", nanos), ("format", format), ("_text", _text), ("_dec", _dec)):
            object.__setattr__(self, name, val)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Quantity is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Quantity is immutable")

    def __reduce__(self) -> tuple:
        return _restore, (self._nanos, self.format, self._text, self._dec)

    def __copy__(self) -> Quantity:
        return self

    def __deepcopy__(self, memo: dict) -> Quantity:
        return self

    @classmethod
    def from_int(cls, v: int, fmt: str = DECIMAL_SI) -> Quantity:
        """Go's ``NewQuantity(v, fmt)``."""
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"expected an int, not {type(v).__name__}")
        return cls(v * _NANO, fmt)

    @classmethod
    def from_milli(cls, m: int) -> Quantity:
        """Go's ``NewMilliQuantity(m, DecimalSI)``."""
        if isinstance(m, bool) or not isinstance(m, int):
            raise TypeError(f"expected an int, not {type(m).__name__}")
        return cls(m * 10**6, DECIMAL_SI)

    @property
    def nanos(self) -> int:
        """The exact value in units of 10^-9."""
        return self._nanos

    @property
    def fraction(self) -> Fraction:
        """The exact value."""
        return Fraction(self._nanos, _NANO)

    def as_fraction(self) -> Fraction:
        return self.fraction

    def sign(self) -> int:
        return (self._nanos > 0) - (self._nanos < 0)

    def value(self) -> int:
        """Go's ``Value()``: the value rounded up (see the module docstring for negatives)."""
        return self._scaled(_NANO)

    def milli_value(self) -> int:
        """Go's ``MilliValue()``: ceil(q * 1000) (see the module docstring for negatives)."""
        return self._scaled(10**6)

    def _scaled(self, per_unit: int) -> int:
        n = self._nanos
        q, r = divmod(abs(n), per_unit)
        if n >= 0:
            return q + (r > 0)
        if r == 0:
            return -q
        # Go: int64Amount rounds away from zero (negativeScaleInt64); inf.Dec goes through
        # scaledValue, which truncates toward zero and then adds one.
        return 1 - q if self._dec else -q - 1

    def __str__(self) -> str:
        if self._text is not None:
            return self._text
        n = self._nanos
        if n == 0:
            return "0"
        fmt = self.format
        if fmt == BINARY_SI and (abs(n) < 1024 * _NANO or n % _NANO):
            fmt = DECIMAL_SI  # Go: small or fractional BinarySI values print as DecimalSI
        if fmt == BINARY_SI:
            v, power = n // _NANO, 0
            while power < 6 and v % 1024 == 0:  # int64 values never go past Ei
                v, power = v // 1024, power + 1
            return f"{v}{_BIN_BY_POWER[power]}"
        digits = str(abs(n))
        mantissa = digits.rstrip("0")
        exp = len(digits) - len(mantissa) - 9
        pad = exp % 3  # largest exponent that is a multiple of 3 and keeps an integer mantissa
        mantissa += "0" * pad
        exp -= pad
        if fmt == DECIMAL_SI:
            # Go: v1.34 drops the suffix when none exists for exp (above "E"): 1000E -> "1".
            suffix = _DEC_BY_EXP.get(exp, "")
        else:
            suffix = f"e{exp}" if exp else ""
        return f"{'-' if n < 0 else ''}{mantissa}{suffix}"

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r}, format={self.format!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._nanos == other._nanos

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._nanos < other._nanos

    def __hash__(self) -> int:
        return hash(self._nanos)


def _restore(nanos: int, fmt: str, text: str | None, dec: bool) -> Quantity:
    return Quantity(nanos, fmt, _text=text, _dec=dec)


def _i32(x: int) -> int:
    """Go's int32 wrap-around."""
    return (x + 2**31) % 2**32 - 2**31


def _scan(s: str) -> tuple[bool, str, str, str, str] | None:
    """Go's parseQuantityString: (positive, value, num, denom, suffix), None if malformed.

    ``num`` has its leading zeros stripped ("0" if none is left); ``value`` is the sign and
    number as written. Go: a number without any digit is allowed ("", ".", "-.").
    """
    end, pos, positive = len(s), 0, True
    if end and s[0] in "+-":
        positive, pos = s[0] == "+", 1
    while pos < end and s[pos] == "0":
        pos += 1
    if pos == end:
        return positive, "0", "0", "", ""
    i = pos
    while i < end and s[i] in _DIGITS:
        i += 1
    num = s[pos:i] or "0"
    if i == end:
        return positive, s, num, "", ""
    denom = ""
    if s[i] == ".":
        j = i + 1
        while j < end and s[j] in _DIGITS:
            j += 1
        denom, i = s[i + 1:j], j
        if i == end:
            return positive, s, num, denom, ""
    j = i
    while j < end and s[j] in _SUFFIX_CHARS:
        j += 1
    if j < end and s[j] in "+-":
        j += 1
    while j < end and s[j] in _DIGITS:
        j += 1
    if j < end:
        return None
    return positive, s[:i], num, denom, s[i:]


def _interpret(suffix: str) -> tuple[int, int, str] | None:
    """Go's suffixer.interpret: (base, exponent, format), None for an unknown suffix."""
    if suffix in _DEC_SUFFIX:
        return 10, _DEC_SUFFIX[suffix], DECIMAL_SI
    if suffix in _BIN_SUFFIX:
        return 2, _BIN_SUFFIX[suffix], BINARY_SI
    if len(suffix) < 2 or suffix[0] not in "eE":
        return None
    body = suffix[1:]  # strconv.ParseInt(body, 10, 64)
    negative = body[0] == "-"
    digits = body[1:] if body[0] in "+-" else body
    if not digits or not set(digits) <= _DIGITS:
        return None
    digits = digits.lstrip("0") or "0"
    n = int(digits) if len(digits) <= 19 else 2**64
    if n > _INT64_MAX + negative:
        return None
    # Go: v1.34 keeps the int64 as int32 without a range check, so 1e4294967297 means 1e1.
    return 10, _i32(-n if negative else n), DECIMAL_EXPONENT


def _ceil_nanos(digits: str, scale: int, pow2: int) -> int | None:
    """ceil(int(digits) * 2^pow2 * 10^(9 - scale)) for pow2 in 0..60; None if >= 10^1000.

    Only the digits that can matter are converted to int, so arbitrarily long inputs (Go
    accepts them) stay cheap and never hit Python's int/str conversion limit.
    """
    digits = digits.lstrip("0")
    if not digits:
        return 0
    if len(digits) - scale > _MAX_INT_DIGITS:
        return None
    drop = scale - 9  # decimal places below 1n
    if drop <= pow2:  # few enough places to compute exactly
        n = int(digits) << pow2
        return n * 10**-drop if drop <= 0 else -(-n // 10**drop)
    # D * 2^p / 10^drop == (D / 10^(drop - p)) / 5^p: the last drop - p digits of D make a
    # fraction below 1, which only decides whether to round up.
    j = drop - pow2
    if j >= len(digits):
        return 1  # a non-zero value below 1n
    q, r = divmod(int(digits[:-j]), 5**pow2)
    return q + (1 if r or digits[-j:].strip("0") else 0)


@functools.lru_cache(maxsize=8192)
def _parse(text: str) -> Quantity | None:
    """Go's ParseQuantity; None where Go returns an error. Cached: a cluster's pods repeat a
    few request strings, and a Quantity is immutable."""
    if not text:
        return None
    if text == "0":
        return Quantity(0, DECIMAL_SI, _text="0")
    scanned = _scan(text)
    if scanned is None:
        return None
    positive, value, num, denom, suffix = scanned
    interpreted = _interpret(suffix)
    if interpreted is None:
        return None
    base, exponent, fmt = interpreted
    pow2 = exponent if base == 2 else 0
    if base == 10:
        precision, scale = 18 - len(num) - len(denom), _i32(exponent - len(denom))
    else:
        # Go: 15 - len(num) - int32(float32(exponent)*3/10) - 1, exact for exponents 10..60
        precision = 14 - len(num) - exponent * 3 // 10 if not denom else -1
        scale = 0
    if precision >= 0 and scale >= -9:
        # Go's int64 fast path: exact, and keeps the input text when it looks canonical.
        shifted = num + denom
        nanos = _ceil_nanos(shifted, -scale, pow2)
        if nanos is None:
            return None
        if base == 2:
            keep = int(shifted) & 7 != 0
        else:
            keep = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
        return Quantity(nanos if positive else -nanos, fmt, _text=text if keep else None)
    # Go's inf.Dec path: round up to 1n, cap BinarySI at int64.
    if not any(c in _DIGITS for c in value):
        return None  # Go: inf.Dec rejects a number without digits (".e-10")
    digits = num + denom
    if base == 10:
        nanos = _ceil_nanos(digits, _i32(len(denom) + _i32(-exponent)), 0)
        if nanos is None:
            return None
    else:
        cap = _INT64_MAX * _NANO
        too_big = len(digits.lstrip("0")) - len(denom) > 19
        nanos = cap if too_big else min(_ceil_nanos(digits, len(denom), pow2) or 0, cap)  # never None
        if 0 < nanos < _NANO:
            fmt = DECIMAL_SI
    return Quantity(nanos if positive else -nanos, fmt, _dec=True)


def parse_quantity(text: object, obj: str = "", field: str = "") -> Quantity:
    """Parse a quantity as the API server does, or raise :class:`QuantityError`.

    ``text`` is a string, or an int/float as YAML gives them (``cpu: 2``, ``cpu: 0.5``); a
    Quantity is returned as is. Unlike JSON decoding in Go, surrounding blanks are rejected.
    """
    if isinstance(text, Quantity):
        return text
    if isinstance(text, str):
        q = _parse(text)
    elif isinstance(text, (int, float)) and not isinstance(text, bool):
        q = _parse(repr(text) if isinstance(text, float) else str(text))
    else:
        q = None
    if q is None:
        raise QuantityError(text, obj, field)
    return q


def milli_value(text: object) -> int:
    """``parse_quantity(text).milli_value()``."""
    return parse_quantity(text).milli_value()


def value(text: object) -> int:
    """``parse_quantity(text).value()``."""
    return parse_quantity(text).value()
