"""r() rounds to one decimal, half away from zero, exactly."""

from decimal import ROUND_HALF_UP, Context, Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.judge import r, round_half_away

WIDE = Context(prec=100)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.25, "0.3"),
        (0.35, "0.4"),
        (-0.25, "-0.3"),
        (8.45, "8.5"),  # the double nearest to 8.45 is 8.4499999999999992894572642398998141288757
        (0.15, "0.2"),  # ... and 0.15 is 0.1499999999999999944488848768742172978818416595458984375
        (2.675, "2.7"),
        (-0.05, "-0.1"),
        (0.04999, "0.0"),
        (Fraction(1, 20), "0.1"),
        (Fraction(-1, 20), "-0.1"),
        (Fraction(131, 20), "6.6"),  # 393 s in minutes
        (Fraction(2, 3), "0.7"),
        (Decimal("8.45"), "8.5"),
        (Decimal("-8.45"), "-8.5"),
        (9, "9.0"),
        (10, "10.0"),
        (0, "0.0"),
    ],
)
def test_r_rounds_half_away_from_zero(value: float | Fraction | Decimal | int, expected: str) -> None:
    assert str(r(value)) == expected


def test_a_rounded_zero_has_no_sign() -> None:
    assert str(r(-0.04)) == "0.0"
    assert str(round_half_away(Fraction(-1, 3), 0)) == "0"


@pytest.mark.parametrize(
    ("value", "places", "expected"),
    [
        (Decimal("0.125"), 2, "0.13"),
        (Decimal("0.135"), 2, "0.14"),
        (Decimal("0"), 2, "0.00"),
        (Fraction(5, 2), 0, "3"),
        (Fraction(-5, 2), 0, "-3"),
        (Fraction(7, 2), 0, "4"),
        (Decimal("6.5"), 0, "7"),
    ],
)
def test_other_precisions(value: Decimal | Fraction, places: int, expected: str) -> None:
    assert str(round_half_away(value, places)) == expected


@given(st.decimals(min_value=-(10**9), max_value=10**9, places=6, allow_nan=False, allow_infinity=False))
def test_r_matches_decimal_round_half_up(value: Decimal) -> None:
    assert r(value) == value.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP, context=WIDE)


@given(st.floats(min_value=-(10**9), max_value=10**9, allow_nan=False))
def test_a_float_rounds_as_the_number_it_prints_as(value: float) -> None:
    assert r(value) == Decimal(repr(value)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP, context=WIDE)


@given(st.fractions(max_denominator=1000).filter(lambda value: abs(value) < 10**6), st.integers(0, 3))
def test_result_is_within_half_a_unit_and_keeps_its_places(value: Fraction, places: int) -> None:
    rounded = round_half_away(value, places)
    assert abs(Fraction(rounded) - value) <= Fraction(1, 2 * 10**places)
    assert rounded.as_tuple().exponent == -places
