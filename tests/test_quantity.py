"""kschedcore.objects.quantity against k8s.io/apimachinery v0.34 resource.Quantity.

Expected values come from apimachinery's quantity_test.go tables where they exist, and
otherwise from tracing v0.34's ParseQuantity / CanonicalizeBytes / ScaledValue by hand.
"""
import copy
import math
import pickle
import re
from fractions import Fraction

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kschedcore.errors import QuantityError, ValidationError
from kschedcore.objects.quantity import (BINARY_SI, DECIMAL_EXPONENT, DECIMAL_SI, Quantity,
                                         milli_value, parse_quantity, value)

INT64_MAX = 2**63 - 1
DEC = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BIN = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


def q(text):
    return parse_quantity(text)


# --- parsing: value and format --------------------------------------------------------------

@pytest.mark.parametrize("suffix,exp", sorted(DEC.items()))
def test_every_decimal_si_suffix(suffix, exp):
    got = q("7" + suffix)
    assert got.fraction == 7 * Fraction(10) ** exp
    assert got.format == DECIMAL_SI
    assert str(got) == "7" + suffix


@pytest.mark.parametrize("suffix,power", sorted(BIN.items()))
def test_every_binary_si_suffix(suffix, power):
    got = q("3" + suffix)
    assert got.value() == 3 * 2**power
    assert got.format == BINARY_SI
    assert str(got) == "3" + suffix


@pytest.mark.parametrize("text,expected", [
    ("1e3", 1000), ("1E3", 1000), ("1e+3", 1000), ("1E+3", 1000), ("1e03", 1000),
    ("1e-3", Fraction(1, 1000)), ("1E-3", Fraction(1, 1000)), ("1.2e3", 1200), ("1.3E+6", 1_300_000),
    ("1.53E12", 1_530_000_000_000), ("0.5e-2", Fraction(5, 1000)), ("1e0", 1), ("25e-1", Fraction(5, 2)),
])
def test_decimal_exponent_both_cases(text, expected):
    got = q(text)
    assert got.fraction == expected
    assert got.format == DECIMAL_EXPONENT


@pytest.mark.parametrize("text,expected,fmt", [
    # from apimachinery's TestQuantityParse table
    ("0", 0, DECIMAL_SI), ("0n", 0, DECIMAL_SI), ("0Ki", 0, BINARY_SI), ("0Ti", 0, BINARY_SI),
    ("50k", 50_000, DECIMAL_SI), ("300T", 300 * 10**12, DECIMAL_SI), ("1E", 10**18, DECIMAL_SI),
    ("100.035k", 100_035, DECIMAL_SI), ("0.0005k", Fraction(1, 2), DECIMAL_SI),
    ("0.00050k", Fraction(1, 2), DECIMAL_SI), ("0.50000", Fraction(1, 2), DECIMAL_SI),
    ("10.035M", 10_035_000, DECIMAL_SI), ("7.123456M", 7_123_456, DECIMAL_SI),
    ("6.987654321G", 6_987_654_321, DECIMAL_SI), ("1.01E", 101 * 10**16, DECIMAL_SI),
    ("100.035Ki", Fraction(10243584, 100), BINARY_SI), ("0.5Mi", 512 * 1024, BINARY_SI),
    ("0.05Gi", Fraction(536870912, 10), BINARY_SI), ("0.025Ti", Fraction(274877906944, 10), BINARY_SI),
    (".001", Fraction(1, 1000), DECIMAL_SI), (".0001k", Fraction(1, 10), DECIMAL_SI),
    ("1.", 1, DECIMAL_SI), ("1.G", 10**9, DECIMAL_SI), ("12E", 12 * 10**18, DECIMAL_SI),
    # signs and leading zeros
    ("+1.5", Fraction(3, 2), DECIMAL_SI), ("-1.5", Fraction(-3, 2), DECIMAL_SI), ("007", 7, DECIMAL_SI),
    ("-2Gi", -2 * 2**30, BINARY_SI), ("+.5", Fraction(1, 2), DECIMAL_SI),
])
def test_parse_values(text, expected, fmt):
    got = q(text)
    assert got.fraction == expected
    assert got.format == fmt


@pytest.mark.parametrize("text,nanos,fmt", [
    # Go rounds every parsed value up (away from zero) to a whole nano
    ("3.001n", 4, DECIMAL_SI), ("1.1E-9", 2, DECIMAL_EXPONENT), ("0.0000000001", 1, DECIMAL_SI),
    ("0.00000000050", 1, DECIMAL_SI), ("0.5e-9", 1, DECIMAL_EXPONENT), ("0.9n", 1, DECIMAL_SI),
    ("0.00000012345", 124, DECIMAL_SI), ("0.00000012354", 124, DECIMAL_SI), ("-0.9n", -1, DECIMAL_SI),
    # a fractional BinarySI value below one becomes DecimalSI
    ("0.000000000001Ki", 2, DECIMAL_SI), ("0.0001Ki", 102_400_000, DECIMAL_SI),
    ("-0.0001Ki", -102_400_000, DECIMAL_SI),
    ("0.5Ki", 512 * 10**9, BINARY_SI),
])
def test_parse_rounds_up_to_nano(text, nanos, fmt):
    got = q(text)
    assert got.nanos == nanos
    assert got.format == fmt


@pytest.mark.parametrize("text,expected", [
    ("9Ei", INT64_MAX), ("8Ei", INT64_MAX), ("9223372036854775807Ki", INT64_MAX),
    ("-9Ei", -INT64_MAX), ("1" + "0" * 3000 + "Mi", INT64_MAX), ("7Ei", 7 * 2**60),
])
def test_binary_si_is_capped_at_int64(text, expected):
    got = q(text)
    assert got.value() == expected
    assert got.format == BINARY_SI


def test_decimal_values_are_not_capped_and_do_not_overflow():
    assert q("100E").value() == 10**20
    assert q("100E").milli_value() == 10**23
    assert q("12345678901234567890123").value() == 12345678901234567890123
    assert q("1e300").value() == 10**300


@pytest.mark.parametrize("text", ["Ki", "-", "+", ".", "-.", "m", "k", "E", "e5", "n", ".Ki", "0.e-10", "-0",
                                  "00"])
def test_go_accepts_numbers_without_digits_as_zero(text):
    got = q(text)
    assert got.nanos == 0
    assert str(got) == "0"


# --- MilliValue / Value ------------------------------------------------------------------------

@pytest.mark.parametrize("text,milli,val", [
    ("1n", 1, 1), ("1u", 1, 1), ("1m", 1, 1), ("999m", 999, 1), ("1000m", 1000, 1), ("1001m", 1001, 2),
    ("0.1", 100, 1), ("1.5", 1500, 2), ("2", 2000, 2), ("0.0005", 1, 1),
    ("100Mi", 104_857_600_000, 104_857_600), ("1Gi", 1_073_741_824_000, 1_073_741_824),
    ("1.5Gi", 1_610_612_736_000, 1_610_612_736), ("0.1Ki", 102_400, 103),
    ("1e3", 1_000_000, 1000), ("1E-3", 1, 1), ("0", 0, 0), ("1.000000001", 1001, 2),
])
def test_milli_value_and_value_round_up(text, milli, val):
    assert milli_value(text) == milli
    assert value(text) == val
    assert q(text).milli_value() == milli and q(text).value() == val


@pytest.mark.parametrize("text,milli,val", [
    # int64Amount (Go's fast path): away from zero
    ("-0.5", -500, -1), ("-1.5", -1500, -2), ("-1n", -1, -1), ("-1.000000001", -1001, -2), ("-0.1", -100, -1),
    # inf.Dec (more than nano precision or 19+ digits): truncate toward zero, then add one
    ("-1.0000000005", -999, 0), ("-0.0000000015", 1, 1), ("-1.5e-9", 1, 1),
    # exact negatives are exact in both representations
    ("-1.5Gi", -1_610_612_736_000, -1_610_612_736), ("-2", -2000, -2),
    ("-1234567890123456789", -1234567890123456789000, -1234567890123456789),
])
def test_negative_rounding_follows_go_representation(text, milli, val):
    assert milli_value(text) == milli
    assert value(text) == val


# --- String() ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text,canonical", [
    ("1500m", "1500m"), ("1.5", "1500m"), ("0.5Gi", "512Mi"), ("1.5Gi", "1536Mi"), ("1e3", "1e3"),
    ("1000", "1k"), ("1024Mi", "1Gi"), ("1000M", "1G"), ("307200Ki", "300Mi"), ("1025024Mi", "1001Gi"),
    ("1024Gi", "1Ti"), ("5000m", "5"), ("0.5", "500m"), ("0.001T", "1G"), ("1000u", "1m"), ("1.08", "1080m"),
    ("1080000000n", "1080m"), (".001e12", "1e9"), ("0.001e0", "1e-3"), ("1000e-12", "1e-9"), ("1e4", "10e3"),
    ("1.5e3", "1500"), ("0.5e0", "500e-3"), ("1000e18", "1e21"), ("0.1", "100m"), (".001", "1m"),
    (".0001k", "100m"), ("1.01E", "1010P"), ("1e-10", "1e-9"), ("1.1E-9", "2e-9"), ("3.001n", "4n"),
    ("2048Ki", "2Mi"), ("1000Ki", "1000Ki"), ("1048576Ki", "1Gi"), ("0.5Ki", "512"), ("0.1Ki", "102400m"),
    ("1.1Ki", "1126400m"), ("100.035Ki", "102435840m"), ("0.25Mi", "256Ki"), ("1.0Ki", "1Ki"),
    (".001Ki", "1024m"), (".000001Ki", "1024u"), (".000000001Ki", "1024n"), (".000000000001Ki", "2n"),
    ("9Ei", "9223372036854775807"), ("7Ei", "7Ei"), ("1234567890123456789", "1234567890123456789"),
    ("12345678901234567890", "12345678901234567890"), ("-1.5", "-1500m"), ("-0.5Gi", "-512Mi"),
    ("-1000", "-1k"), ("-9Ei", "-9223372036854775807"), ("0", "0"), ("00", "0"), ("0Gi", "0"), ("-0.0", "0"),
])
def test_canonical_string(text, canonical):
    assert str(q(text)) == canonical


@pytest.mark.parametrize("text", [
    # Go keeps the input text when its parser thinks it is already canonical, which is not
    # always the case: the sign, leading zeros, a bare "." and "E" are all kept as written.
    "+1", "01", "1.100", "1.G", "1.", "5.Ki", "+5Ki", "005Ki", "1E3", "1e+3", "1e03", "12e-3", "-1.000000001",
    "1.500k", "1025Ki", "100m", "1e21",
])
def test_string_keeps_input_text_when_go_does(text):
    assert str(q(text)) == text


def test_decimal_si_above_exa_loses_its_suffix_like_go_v1_34():
    # CanonicalizeBytes ignores that there is no DecimalSI suffix for 10^21.
    assert str(q("1000E")) == "1"
    assert str(q("-5000E")) == "-5"
    assert str(q("10000000000000000000000")) == "10"
    assert q("1000E").value() == 10**21  # the value itself is right


def test_exponent_is_truncated_to_int32_like_go_v1_34():
    assert q("1e4294967297").value() == 10  # 2^32 + 1 -> 1
    assert q("1e9223372036854775807").fraction == Fraction(1, 10)  # int64 max -> -1


def test_repr():
    assert repr(q("1.5Gi")) == "Quantity('1536Mi', format='BinarySI')"


# --- invalid input -----------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "", " 1", "1 ", " ", "1.2.3", "1Kb", "abc", "--1", "+-1", "1e", "1K", "1ki", "1mi", "1KI", "1Gb", "0.1am",
    "aoeu", "1.1.M", "1+1.0M", ".5i", "1i", "-3.01i", "-3.01e-", "1e3.5", "1e+", "1e-", "1ee3", "1eE3",
    "1Ki3", "1m5", "1-", "1+5", "e", "e-10", ".e-10", "-.e-10", "1_000", "1,5", "１", "1\n", "\t1",
    "1e99999999999999999999", "1e9223372036854775808", "1e-9223372036854775809", "1 Gi", "NaN", "inf",
    "0x10", "1e1000",  # 1e1000: accepted by Go, beyond kschedcore's 10^1000 bound
])
def test_invalid_text_raises_quantity_error(text):
    with pytest.raises(QuantityError) as err:
        parse_quantity(text)
    assert str(err.value) == f'invalid quantity "{text}"'
    assert err.value.text == text
    assert isinstance(err.value, ValidationError) and isinstance(err.value, ValueError)


def test_error_names_object_and_field():
    with pytest.raises(QuantityError) as err:
        parse_quantity("1.2.3", "pod default/web-1", "spec.containers[0].resources.requests.cpu")
    field = "spec.containers[0].resources.requests.cpu"
    assert str(err.value) == f'pod default/web-1: {field}: invalid quantity "1.2.3"'
    assert (err.value.obj, err.value.field, err.value.text) == ("pod default/web-1", field, "1.2.3")


@pytest.mark.parametrize("bad", [None, True, False, [1], {"cpu": 1}, b"1", float("nan"), float("inf")])
def test_non_quantity_types_raise(bad):
    with pytest.raises(QuantityError) as err:
        parse_quantity(bad, "node n1", "status.allocatable.cpu")
    assert str(err.value) == f'node n1: status.allocatable.cpu: invalid quantity "{bad}"'
    with pytest.raises(QuantityError):
        milli_value(bad)


@pytest.mark.parametrize("number,text", [(2, "2"), (0, "0"), (-3, "-3"), (0.5, "0.5"), (1.25, "1.25"),
                                         (1e16, "1e+16"), (1e-07, "1e-07"), (2.0, "2.0"),
                                         (10**20, "100000000000000000000")])
def test_yaml_numbers_parse_like_their_text(number, text):
    assert parse_quantity(number) == parse_quantity(text)
    assert str(parse_quantity(number)) == str(parse_quantity(text))


# --- huge and tiny inputs ------------------------------------------------------------------------

def test_long_and_extreme_inputs_are_exact_and_cheap():
    assert q("0." + "0" * 50_000 + "1").nanos == 1
    assert q("1." + "0" * 50_000).nanos == 10**9
    assert q("0." + "0" * 50_000 + "1Ki").nanos == 1
    assert q("1" * 5000 + "e-4990").nanos == 1111111111111111112
    assert q("1e-2147483647").nanos == 1
    assert q("-1e-2147483647").milli_value() == 1  # inf.Dec negative rounding, see above
    assert q("9" * 1000).value() == 10**1000 - 1
    assert q("1e999").value() == 10**999
    for big in ("1e2147483647", "1" + "0" * 1000, "1e2147483648", "1e-2147483648", "1.5e-2147483648"):
        with pytest.raises(QuantityError):
            parse_quantity(big)


# --- the Quantity object -----------------------------------------------------------------------

def test_constructors():
    assert Quantity.from_milli(1500) == q("1.5")
    assert str(Quantity.from_milli(1500)) == "1500m"
    assert str(Quantity.from_milli(-250)) == "-250m"
    assert str(Quantity.from_int(2048, BINARY_SI)) == "2Ki"
    assert str(Quantity.from_int(1000, BINARY_SI)) == "1k"  # below 1024: printed as DecimalSI
    assert str(Quantity.from_int(3000)) == "3k"
    assert str(Quantity.from_int(3000, DECIMAL_EXPONENT)) == "3e3"
    assert Quantity.from_int(5).format == DECIMAL_SI
    assert Quantity.from_milli(-1).value() == -1  # int64 representation: away from zero
    with pytest.raises(ValueError):
        Quantity.from_int(1, "Binary")
    with pytest.raises(TypeError):
        Quantity.from_int(1.5)
    with pytest.raises(TypeError):
        Quantity.from_milli(True)


def test_equality_hash_and_order_use_the_value_only():
    a, b = q("1.5Gi"), q("1536Mi")
    assert a == b and hash(a) == hash(b) and len({a, b, q("1610612736")}) == 1
    assert q("1100m") == q("1.100") and str(q("1100m")) != str(q("1.100"))
    assert q("1Ki") == q("1024") and q("1Ki").format != q("1024").format
    assert q("100m") < q("0.2") <= q("200m") < q("1") < q("1Ki") < q("1.1k") < q("1Mi")
    assert q("-1") < q("-1n") < q("0") < q("1n")
    assert max(q("1G"), q("1Gi")) == q("1Gi")
    assert q("1") != "1" and q("1") != 1
    with pytest.raises(TypeError):
        q("1") < 2  # noqa: B015


def test_sign_fraction_and_nanos():
    assert (q("-3m").sign(), q("0").sign(), q("3m").sign()) == (-1, 0, 1)
    assert q("1.5").fraction == Fraction(3, 2) == q("1.5").as_fraction()
    assert q("1.5").nanos == 1_500_000_000


def test_immutable_copyable_picklable():
    x = q("1.100")
    with pytest.raises(AttributeError):
        x.format = BINARY_SI
    with pytest.raises(AttributeError):
        del x.format
    assert copy.copy(x) is x and copy.deepcopy(x) is x
    y = pickle.loads(pickle.dumps(x))
    assert y == x and str(y) == "1.100" and y.format == x.format
    z = pickle.loads(pickle.dumps(q("-0.0000000015")))
    assert z.milli_value() == 1  # keeps Go's representation


def test_parse_quantity_returns_a_quantity_unchanged():
    x = q("2Gi")
    assert parse_quantity(x) is x


# --- properties ---------------------------------------------------------------------------------

def oracle_nanos(text: str) -> int:
    """Exact value per the grammar, rounded up to 1n, BinarySI capped: written independently."""
    sign, whole, frac, suffix = re.fullmatch(r"([+-]?)(\d*)(?:\.(\d*))?(.*)", text).groups()
    exact = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    if suffix in BIN:
        exact *= 2 ** BIN[suffix]
    else:
        exact *= Fraction(10) ** (DEC[suffix] if suffix in DEC else int(suffix[1:]))
    nanos = math.ceil(exact * 10**9)
    if suffix in BIN:
        nanos = min(nanos, INT64_MAX * 10**9)
    return -nanos if sign == "-" else nanos


@st.composite
def quantity_texts(draw, signs=("", "+", "-")):
    sign = draw(st.sampled_from(signs))
    whole = draw(st.text("0123456789", max_size=14))
    dot = draw(st.booleans())
    frac = draw(st.text("0123456789", max_size=14)) if dot else ""
    assume(whole or frac)
    if draw(st.booleans()):
        suffix = draw(st.sampled_from(sorted(DEC) + sorted(BIN)))
    else:
        suffix = (draw(st.sampled_from("eE")) + draw(st.sampled_from(["", "+", "-"]))
                  + "0" * draw(st.integers(0, 2)) + str(draw(st.integers(0, 25))))
    return sign + whole + ("." if dot else "") + frac + suffix


def suffix_dropped(x: Quantity) -> bool:
    """Go v1.34 prints DecimalSI multiples of 10^21 without their suffix."""
    return x.format == DECIMAL_SI and x.nanos != 0 and x.nanos % 10**30 == 0


@given(quantity_texts())
def test_parse_matches_exact_oracle(text):
    got = parse_quantity(text)
    assert got.nanos == oracle_nanos(text)
    assert got.fraction == Fraction(oracle_nanos(text), 10**9)


@given(quantity_texts(signs=("", "+")))
def test_milli_value_and_value_are_ceilings_for_non_negative(text):
    exact = Fraction(oracle_nanos(text), 10**9)
    assert milli_value(text) == math.ceil(exact * 1000)
    assert value(text) == math.ceil(exact)


@given(quantity_texts())
def test_string_round_trips(text):
    x = parse_quantity(text)
    s = str(x)
    assert str(parse_quantity(s)) == s  # canonical form is stable
    if not suffix_dropped(x):
        assert parse_quantity(s) == x


@given(quantity_texts(signs=("",)))
def test_negation_is_symmetric(text):
    pos, neg = parse_quantity(text), parse_quantity("-" + text)
    assert neg.nanos == -pos.nanos and neg.format == pos.format
    if pos.nanos:
        assert str(neg) == "-" + str(pos)


@given(quantity_texts(signs=("",)), quantity_texts(signs=("",)))
def test_conversions_are_monotonic_for_non_negative(t1, t2):
    a, b = sorted([parse_quantity(t1), parse_quantity(t2)])
    assert a.milli_value() <= b.milli_value()
    assert a.value() <= b.value()
    assert (a < b) == (a.fraction < b.fraction)


@given(quantity_texts(), st.sampled_from([" ", "x", "\n", ".", "i", "b", "e"]))
def test_trailing_junk_is_rejected(text, junk):
    assume(not (junk == "i" and text[-1:] in "KMGTPE"))
    assume(not (junk in ".e" and re.fullmatch(r"[+-]?\d*\.?\d*(E)?", text)))
    with pytest.raises(QuantityError):
        parse_quantity(text + junk)
    if junk.isspace():
        with pytest.raises(QuantityError):
            parse_quantity(junk + text)


@given(st.integers(-(10**23), 10**23))
def test_from_milli_round_trips(m):
    x = Quantity.from_milli(m)
    assert x.milli_value() == m
    assert parse_quantity(str(x)) == x
    if m >= 0:
        assert x.value() == -(-m // 1000)
