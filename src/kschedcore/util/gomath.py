"""Go's float64 math and formatting where they differ from Python's.

Go's math.Log (amd64) and glibc's log disagree in the last bit for about 1% of inputs (e.g.
ln 3), and PodTopologySpread rounds `cnt * ln(size + 2) + maxSkew - 1`, so a 1-ulp difference
can change a score. This is Go's algorithm (FreeBSD's e_log.c, as in go/src/math/log.go),
step for step; tests/data/go_math_log.txt holds values computed by Go itself.
"""
import math
import re

_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_L1 = 6.666666666666735130e-01
_L2 = 3.999999999940941908e-01
_L3 = 2.857142874366239149e-01
_L4 = 2.222219843214978396e-01
_L5 = 1.818357216161805012e-01
_L6 = 1.531383769920937332e-01
_L7 = 1.479819860511658591e-01
_SQRT2_2 = math.sqrt(2) / 2


def go_log(x: float) -> float:
    """math.Log for finite x > 0."""
    f1, ki = math.frexp(x)
    if f1 < _SQRT2_2:
        f1 *= 2
        ki -= 1
    f = f1 - 1
    k = float(ki)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_L1 + s4 * (_L3 + s4 * (_L5 + s4 * _L7)))
    t2 = s4 * (_L2 + s4 * (_L4 + s4 * _L6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def go_duration(seconds: float) -> str:
    """time.Duration.String() for whole and fractional seconds and minutes (e.g. 10s, 1m30s)."""
    if seconds < 60:
        return f"{seconds:g}s"
    minutes, rest = divmod(seconds, 60)
    hours, minutes = divmod(int(minutes), 60)
    out = f"{hours}h" if hours else ""
    return out + f"{minutes}m{rest:g}s"


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str):
    """time.ParseDuration: "90s", "1h30m", "1.5h", "250ms" to seconds; "0" is 0; None if the
    text is not a duration."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    pos, total = 0, 0.0
    for m in _DURATION.finditer(body):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if pos != len(body) or not body:
        return None
    return -total if text.startswith("-") else total
