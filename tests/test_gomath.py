"""go_log reproduces Go's math.Log bit for bit (values computed by go1.27.3 on amd64)."""
import math
import struct
from pathlib import Path

from kschedcore.util.gomath import go_log

TABLE = Path(__file__).parent / "data" / "go_math_log.txt"   # "n hex(math.Float64bits(math.Log(n+2)))"


def _bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def test_go_log_matches_go():
    rows = [line.split() for line in TABLE.read_text().splitlines()]
    assert len(rows) == 3001
    assert [n for n, h in rows if _bits(go_log(int(n) + 2)) != int(h, 16)] == []


def test_the_c_library_differs_where_it_matters():
    """Why go_log exists: ln 3 (one topology domain) is one of the values glibc rounds the other way."""
    go = {int(n): int(h, 16) for n, h in (line.split() for line in TABLE.read_text().splitlines())}
    assert _bits(math.log(3)) != go[1] == _bits(go_log(3))
